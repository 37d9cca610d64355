"""The pluggy hooks ember finds through the ``ember.backends`` entry point ``cuda``.

Kernels are registered only when CuPy imports: without it the backend still loads (and is
reported unavailable with the import error) instead of breaking ember.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.backends import hookimpl

from . import runtime
from .backend import CUDABackend


@hookimpl
def ember_backend() -> CUDABackend:
    return CUDABackend()


@hookimpl
def ember_register_kernels(backend: str, register: Callable[[str, Callable[..., Any]], None]) -> None:
    if backend != "cuda" or runtime.cupy_or_none() is None:
        return
    from .kernels import KERNELS  # builds CuPy kernel objects: lazy, no device work

    for op, fn in KERNELS.items():
        register(op, fn)
