"""The two pluggy hooks ember calls through the ``ember.backends`` entry point ``minimal``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.backends import hookimpl

from .backend import MinimalBackend
from .kernels import KERNELS


@hookimpl
def ember_backend() -> MinimalBackend:
    """Cheap, touches no hardware: ember asks ``unavailable_reason`` later."""
    return MinimalBackend()


@hookimpl
def ember_register_kernels(backend: str, register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Our kernels, for our backend only (a plugin may also add kernels to other backends)."""
    if backend != "minimal":
        return
    for op, fn in KERNELS.items():
        register(op, fn)
