"""The pluggy hooks ember finds through the ``ember.backends`` entry point ``opencl``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.backends import hookimpl

from .backend import OpenCLBackend
from .kernels import KERNELS


@hookimpl
def ember_backend() -> OpenCLBackend:
    return OpenCLBackend()


@hookimpl
def ember_register_kernels(backend: str, register: Callable[[str, Callable[..., Any]], None]) -> None:
    if backend != "opencl":
        return
    for op, fn in KERNELS.items():
        register(op, fn)
