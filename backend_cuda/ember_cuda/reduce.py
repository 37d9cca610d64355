"""Reductions, argmax/argmin and cumsum on CuPy's reduction and scan routines.

The output dtype is always the input dtype (the frontend has cast first); half types
accumulate in float32 and are rounded once at the end, as the contract requires. CuPy's
max/argmax propagate NaN and return the first index of the extreme value, as NumPy does.
"""

from __future__ import annotations

from collections.abc import Callable

import cupy
import numpy as np

from .dtypes import HALF

__all__ = ["argreducer", "cumsum", "reducer"]

_F32 = np.dtype(np.float32)

_REDUCE: dict[str, Callable[..., cupy.ndarray]] = {
    "sum": cupy.sum,
    "prod": cupy.prod,
    "amax": cupy.amax,
    "amin": cupy.amin,
}


def reducer(op: str) -> Callable[[cupy.ndarray, tuple[int, ...], bool], cupy.ndarray]:
    fn = _REDUCE[op]
    accumulates = op in ("sum", "prod")

    def k(x: cupy.ndarray, dims: tuple[int, ...], keepdim: bool) -> cupy.ndarray:
        dims = tuple(dims)
        if x.dtype in HALF:
            wide = x.astype(_F32) if not accumulates else x
            kw = {"dtype": _F32} if accumulates else {}
            return fn(wide, axis=dims, keepdims=keepdim, **kw).astype(x.dtype)
        if accumulates:
            return fn(x, axis=dims, keepdims=keepdim, dtype=x.dtype)
        return fn(x, axis=dims, keepdims=keepdim)

    k.__name__ = op
    return k


def argreducer(op: str) -> Callable[[cupy.ndarray, int | None, bool], cupy.ndarray]:
    fn = cupy.argmax if op == "argmax" else cupy.argmin

    def k(x: cupy.ndarray, dim: int | None, keepdim: bool) -> cupy.ndarray:
        if x.dtype in HALF or x.dtype.kind == "b":
            x = x.astype(_F32)
        if dim is None:
            r = fn(x).astype(np.int64, copy=False)
            return r.reshape((1,) * x.ndim) if keepdim else r
        r = fn(x, axis=dim).astype(np.int64, copy=False)
        return cupy.expand_dims(r, dim) if keepdim else r

    k.__name__ = op
    return k


def cumsum(x: cupy.ndarray, dim: int) -> cupy.ndarray:
    if x.ndim == 0:
        return x.copy()
    if x.dtype in HALF:
        return cupy.cumsum(x, axis=dim, dtype=_F32).astype(x.dtype)
    return cupy.cumsum(x, axis=dim, dtype=x.dtype)
