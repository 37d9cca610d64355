"""The CPU Backend object: NumPy arrays, zero-copy host transfer, two logical devices."""

from __future__ import annotations

import platform
from typing import Any

import numpy as np
from ember.backends import ALL_DTYPES, CONTRACT_VERSION, DType

from . import parallel
from .dtypes import ensure_bfloat16, to_np

__all__ = ["CPUBackend"]


def _root(x: np.ndarray) -> np.ndarray:
    while isinstance(x.base, np.ndarray):
        x = x.base
    return x


class CPUBackend:
    """NumPy-backed host device. ``cpu:1`` is a second logical device with the same memory,
    so device-mismatch errors are exercised on every machine."""

    name = "cpu"
    version = "0.1.0"
    contract_version = CONTRACT_VERSION
    dtypes = frozenset(ALL_DTYPES)
    contiguous_only = False
    nondeterministic: frozenset[str] = frozenset()
    array_type = np.ndarray

    def unavailable_reason(self) -> str | None:
        return None

    def compile_graph(self, graph: Any) -> Any:
        """``ember.compile``'s hook: small elementwise stretches as one function (``fuse.py``)."""
        from .fuse import compile_graph

        return compile_graph(graph)

    def device_count(self) -> int:
        return 2

    def device_name(self, index: int) -> str:
        cpu = platform.processor() or platform.machine() or "host CPU"
        return f"{cpu} (logical device {index})"

    def synchronize(self, index: int) -> None:
        return None

    def empty(self, shape: tuple[int, ...], dtype: DType, index: int) -> np.ndarray:
        return np.empty(shape, to_np(dtype))

    def from_numpy(self, array: np.ndarray, index: int) -> np.ndarray:
        if array.dtype.kind == "V":  # a bfloat16 array: its kernels need ml_dtypes registered
            ensure_bfloat16()
        return array

    def to_numpy(self, x: np.ndarray) -> np.ndarray:
        return x

    def layout(self, x: np.ndarray) -> tuple[tuple[int, ...], int]:
        size = x.itemsize
        strides = tuple([s // size for s in x.strides])
        if not isinstance(x.base, np.ndarray):  # its own storage: offset 0, no interface dicts
            return strides, 0
        root = _root(x)
        offset = x.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return strides, offset // size

    def index_of(self, x: np.ndarray) -> int:
        return 0

    def storage_id(self, x: np.ndarray) -> int:
        return id(_root(x))

    # Optional methods (ember.set_num_threads / get_num_threads reach them).
    def set_num_threads(self, n: int) -> None:
        parallel.set_num_threads(n)

    def get_num_threads(self) -> int:
        return parallel.get_num_threads()
