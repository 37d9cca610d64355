"""View kernels: new CLArray objects over the same buffer (they alias, never copy).

``reshape`` follows NumPy's no-copy reshape (``_attempt_nocopy_reshape``): it returns None
exactly when ``np.reshape(x, shape, copy=False)`` would raise, and the frontend copies.
"""

from __future__ import annotations

from typing import Any

from ember.backends import DType

from .clarray import CLArray, contiguous_strides, numel

__all__ = ["as_strided", "bitcast", "expand", "permute", "reshape", "slice_"]


def _nocopy_strides(
    shape: tuple[int, ...], strides: tuple[int, ...], new: tuple[int, ...]
) -> list[int] | None:
    old = [(s, st) for s, st in zip(shape, strides) if s != 1]
    olddims = [s for s, _ in old]
    oldstrides = [st for _, st in old]
    newstrides = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(olddims):
        np_, op = new[ni], olddims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= olddims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if oldstrides[ok] != olddims[ok + 1] * oldstrides[ok + 1]:
                return None
        newstrides[nj - 1] = oldstrides[oj - 1]
        for nk in range(nj - 1, ni, -1):
            newstrides[nk - 1] = newstrides[nk] * new[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = newstrides[ni - 1] if ni >= 1 else 1
    for nk in range(ni, len(new)):
        newstrides[nk] = last
    return newstrides


def reshape(x: CLArray, shape: tuple[int, ...]) -> CLArray | None:
    shape = tuple(shape)
    if numel(shape) != x.size:
        return None
    if x.size == 0 or x.is_contiguous():
        return x.view(shape, contiguous_strides(shape), x.offset)
    strides = _nocopy_strides(x.shape, x.strides, shape)
    return None if strides is None else x.view(shape, tuple(strides), x.offset)


def permute(x: CLArray, dims: tuple[int, ...]) -> CLArray:
    return x.view(tuple(x.shape[d] for d in dims), tuple(x.strides[d] for d in dims), x.offset)


def expand(x: CLArray, shape: tuple[int, ...]) -> CLArray:
    lead = len(shape) - x.ndim
    strides = [0] * lead
    for s_old, st, s_new in zip(x.shape, x.strides, shape[lead:]):
        strides.append(st if s_old == s_new else 0)
    return x.view(tuple(shape), tuple(strides), x.offset)


def slice_(x: CLArray, key: tuple[Any, ...]) -> CLArray:
    shape, strides, offset = [], [], x.offset
    for d, k in enumerate(key):
        if isinstance(k, slice):
            start, stop, step = k.indices(x.shape[d])
            n = max(0, (stop - start + step - 1) // step)
            offset += start * x.strides[d] if n else 0
            shape.append(n)
            strides.append(x.strides[d] * step)
        else:
            i = k + x.shape[d] if k < 0 else k
            offset += i * x.strides[d]
    shape += x.shape[len(key) :]
    strides += x.strides[len(key) :]
    return x.view(tuple(shape), tuple(strides), offset)


def as_strided(x: CLArray, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> CLArray:
    return x.view(tuple(shape), tuple(strides), offset)


def bitcast(x: CLArray, dtype: DType) -> CLArray:
    """The same bytes as ``dtype``: strides, offset and storage length rescale to its itemsize.

    The frontend guarantees PyTorch's preconditions for another itemsize (last stride 1, the
    last size, other strides and the offset divisible), so every division here is exact, but
    for ``nelem``, which rounds down to the whole elements the buffer holds.
    """
    old, new = x.dtype.itemsize, dtype.itemsize
    if old == new:
        return CLArray(x.buf, x.nelem, x.shape, x.strides, x.offset, dtype, x.dev)
    shape = x.shape[:-1] + (x.shape[-1] * old // new,)
    strides = tuple(s * old // new for s in x.strides[:-1]) + (1,)
    return CLArray(x.buf, x.nelem * old // new, shape, strides, x.offset * old // new, dtype, x.dev)
