"""The pluggy hooks ember finds through the ``ember.backends`` entry point ``cpu``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.backends import hookimpl

from .backend import CPUBackend
from .kernels import KERNELS


@hookimpl
def ember_backend() -> CPUBackend:
    return CPUBackend()


@hookimpl
def ember_register_kernels(backend: str, register: Callable[[str, Callable[..., Any]], None]) -> None:
    if backend != "cpu":
        return
    for op, fn in KERNELS.items():
        register(op, fn)
