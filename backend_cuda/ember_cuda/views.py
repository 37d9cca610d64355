"""View kernels: new ``cupy.ndarray`` objects over the same allocation (they alias, never copy).

``reshape`` asks NumPy's no-copy reshape on a zero-storage stand-in with the same shape
and strides, so it returns None exactly when ``np.reshape(x, shape, copy=False)`` would
raise (CuPy's own reshape silently copies instead). ``as_strided`` is relative to the start
of the allocation, the storage offset ``layout`` reports.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from .dtypes import to_np

__all__ = ["as_strided", "bitcast", "expand", "permute", "reshape", "slice_"]


def _view(x: cupy.ndarray, shape: tuple[int, ...], byte_strides: tuple[int, ...], ptr_offset: int) -> Any:
    mem = cupy.cuda.MemoryPointer(x.data.mem, x.data.ptr - x.data.mem.ptr + ptr_offset)
    return cupy.ndarray(tuple(shape), x.dtype, mem, strides=tuple(byte_strides))


def reshape(x: cupy.ndarray, shape: tuple[int, ...]) -> cupy.ndarray | None:
    shape = tuple(shape)
    if x.flags.c_contiguous:
        return x.reshape(shape)
    stand_in = np.lib.stride_tricks.as_strided(np.zeros(1, (np.void, x.itemsize)), x.shape, x.strides)
    try:
        viewed = np.reshape(stand_in, shape, copy=False)
    except ValueError:
        return None
    return _view(x, shape, viewed.strides, 0)


def permute(x: cupy.ndarray, dims: tuple[int, ...]) -> cupy.ndarray:
    return x.transpose(tuple(dims))


def expand(x: cupy.ndarray, shape: tuple[int, ...]) -> cupy.ndarray:
    lead = len(shape) - x.ndim
    strides = [0] * lead
    for s_old, st, s_new in zip(x.shape, x.strides, shape[lead:]):
        strides.append(st if s_old == s_new else 0)
    return _view(x, tuple(shape), tuple(strides), 0)


def slice_(x: cupy.ndarray, key: tuple[Any, ...]) -> cupy.ndarray:
    return x[key + (Ellipsis,)]


def as_strided(
    x: cupy.ndarray, shape: tuple[int, ...], strides: tuple[int, ...], offset: int
) -> cupy.ndarray:
    size = x.itemsize
    mem = cupy.cuda.MemoryPointer(x.data.mem, offset * size)
    return cupy.ndarray(tuple(shape), x.dtype, mem, strides=tuple(s * size for s in strides))


def bitcast(x: cupy.ndarray, dtype: Any) -> cupy.ndarray:
    """The same bytes as ``dtype`` (PyTorch's ``view(dtype)``; the frontend checks its rules).

    Built from the allocation directly rather than with ``ndarray.view``, whose rule for another
    itemsize differs between CuPy versions.
    """
    nd = to_np(dtype)
    shape, strides = x.shape, x.strides
    if nd.itemsize != x.itemsize:
        shape = shape[:-1] + (shape[-1] * x.itemsize // nd.itemsize,)
        strides = strides[:-1] + (nd.itemsize,)
    return cupy.ndarray(tuple(shape), nd, x.data, strides=tuple(strides))
