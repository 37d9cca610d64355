"""Stable sort along a dim: values and int64 indices, NaN sorting as the largest value.

``cupy.argsort`` is a stable (Thrust/CUB radix) sort that orders NaN last, as NumPy does.
Descending order keeps equal elements in their original order (PyTorch's stable
descending sort) with the CPU backend's trick: sort the reversed line ascending, then
reverse the result and map the positions back (``n - 1 - i``).
"""

from __future__ import annotations

import cupy
import numpy as np

from .dtypes import HALF

__all__ = ["sort"]

_F32 = np.dtype(np.float32)


def sort(x: cupy.ndarray, dim: int, descending: bool) -> tuple[cupy.ndarray, cupy.ndarray]:
    if x.ndim == 0:
        return x.copy(), cupy.zeros((), np.int64)
    keys = x.astype(_F32) if x.dtype in HALF else x
    if keys.dtype.kind == "b":
        keys = keys.astype(np.uint8)
    if descending:
        n = x.shape[dim]
        rev = cupy.flip(keys, axis=dim)
        idx = cupy.flip(n - 1 - cupy.argsort(rev, axis=dim, kind="stable"), axis=dim)
    else:
        idx = cupy.argsort(keys, axis=dim, kind="stable")
    idx = cupy.ascontiguousarray(idx.astype(np.int64, copy=False))
    return cupy.take_along_axis(x, idx, axis=dim), idx
