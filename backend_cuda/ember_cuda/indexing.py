"""gather, scatter and cat, with out-of-range indices raising IndexError (checked on device).

scatter writes through flat target offsets ``lin`` (one per index element). Two paths:

* fast (default): reduce='add' uses ``EMBER_SCATTER_ADD_ATOMIC`` (atomicAdd) for the dtypes
  with an atomic add; plain writes use CuPy's fancy assignment. With duplicate targets the
  float sums' rounding order and the winning write vary from run to run.
* deterministic (``ember.use_deterministic_algorithms(True)``, read per call from
  ``ember.backends.registry.is_deterministic``), and for dtypes without an atomic add: a
  stable sort of ``lin`` groups each target's updates in their original order, and
  ``EMBER_SCATTER_SEGMENTS`` walks each group sequentially (sum, or the last write wins), so
  the result is the CPU backend's ``np.add.at`` / assignment result bit for bit.

Because the backend itself switches to the deterministic kernel, ``scatter`` is not
declared in ``Backend.nondeterministic`` (that would make the registry raise instead).
"""

from __future__ import annotations

from string import Template
from typing import Any

import cupy
import numpy as np
from ember.backends import ALL_DTYPES
from ember.backends.registry import is_deterministic

from .dtypes import ATOMIC_ADD, CUDA_HEADERS, ctype, to_np

__all__ = [
    "EMBER_SCATTER_ADD_ATOMIC",
    "EMBER_SCATTER_ADD_ATOMIC_SRC",
    "EMBER_SCATTER_SEGMENTS",
    "EMBER_SCATTER_SEGMENTS_SRC",
    "cat",
    "gather",
    "nonzero",
    "scatter",
]

HEADERS = CUDA_HEADERS + "#include <cupy/atomics.cuh>\n"

EMBER_SCATTER_ADD_ATOMIC_SRC = Template(
    HEADERS
    + r"""
extern "C" __global__ void ember_scatter_add_atomic(${T} *out, const long long *lin, const ${T} *val,
                                                    long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out + lin[i], val[i]);
}
"""
)

EMBER_SCATTER_SEGMENTS_SRC = Template(
    HEADERS
    + r"""
extern "C" __global__ void ember_scatter_segments(${T} *out, const long long *lin, const ${T} *val,
                                                  const long long *starts, long long nseg,
                                                  long long n, int add)
{
    long long s = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= nseg) return;
    long long b = starts[s], e = s + 1 < nseg ? starts[s + 1] : n;
    long long t = lin[b];
    if (add) {
        ${T} acc = out[t];
        for (long long i = b; i < e; i++) acc = (${T})(acc + val[i]);
        out[t] = acc;
    } else {
        out[t] = val[e - 1];
    }
}
"""
)

EMBER_SCATTER_ADD_ATOMIC = {
    d.name: cupy.RawKernel(EMBER_SCATTER_ADD_ATOMIC_SRC.substitute(T=ctype(d)), "ember_scatter_add_atomic")
    for d in ATOMIC_ADD
}
EMBER_SCATTER_SEGMENTS = {
    d.name: cupy.RawKernel(EMBER_SCATTER_SEGMENTS_SRC.substitute(T=ctype(d)), "ember_scatter_segments")
    for d in ALL_DTYPES
}
_DTYPE_NAME = {to_np(d): d.name for d in ALL_DTYPES}
_BLOCK = 256


def _check_bounds(op: str, index: cupy.ndarray, size: int, dim: int) -> None:
    if index.size == 0:
        return
    bad = (index < 0) | (index >= size)
    if bool(bad.any().item()):
        value = int(index[bad][0].item())
        raise IndexError(f"{op}: index {value} is out of bounds for dimension {dim} with size {size}")


def _grids(index: cupy.ndarray, dim: int) -> list[Any]:
    grids: list[Any] = []
    for d, n in enumerate(index.shape):
        shape = [1] * index.ndim
        shape[d] = n
        grids.append(index if d == dim else cupy.arange(n, dtype=np.int64).reshape(shape))
    return grids


def gather(x: cupy.ndarray, dim: int, index: cupy.ndarray) -> cupy.ndarray:
    if x.ndim == 0:
        _check_bounds("gather", index, 1, 0)
        return x.reshape(1)[index.reshape(-1)].reshape(index.shape)
    _check_bounds("gather", index, x.shape[dim], dim)
    if index.size == 0:
        return cupy.empty(index.shape, x.dtype)
    return x[tuple(_grids(index, dim))]


def _targets(out: cupy.ndarray, index: cupy.ndarray, dim: int) -> cupy.ndarray:
    """Flat offsets into the C-contiguous ``out`` for every element of ``index``."""
    cs = [s // out.itemsize for s in out.strides]
    lin = index.astype(np.int64) * cs[dim]
    for d, g in enumerate(_grids(index, dim)):
        if d != dim:
            lin = lin + g * cs[d]
    return cupy.ascontiguousarray(cupy.broadcast_to(lin, index.shape)).reshape(-1)


def _launch(kernel: Any, n: int, args: tuple[Any, ...]) -> None:
    kernel(((n + _BLOCK - 1) // _BLOCK,), (_BLOCK,), args)


def _segments(out: cupy.ndarray, lin: cupy.ndarray, val: cupy.ndarray, add: bool) -> None:
    order = cupy.argsort(lin, kind="stable")
    lin, val = lin[order], cupy.ascontiguousarray(val[order])
    n = lin.size
    head = cupy.ones((n,), dtype=bool)
    head[1:] = lin[1:] != lin[:-1]
    starts = cupy.flatnonzero(head).astype(np.int64)
    nseg = int(starts.size)
    kernel = EMBER_SCATTER_SEGMENTS[_DTYPE_NAME[out.dtype]]
    _launch(kernel, nseg, (out, lin, val, starts, np.int64(nseg), np.int64(n), np.int32(add)))


def scatter(x: cupy.ndarray, dim: int, index: cupy.ndarray, src: Any, reduce: str | None) -> cupy.ndarray:
    out = x.copy(order="C")
    flat = out.reshape(-1) if x.ndim else out.reshape(1)
    if x.ndim == 0:
        index = index.reshape(-1)
    _check_bounds("scatter", index, flat.size if x.ndim == 0 else x.shape[dim], dim)
    if index.size == 0:
        return out
    if isinstance(src, cupy.ndarray):
        val = src.reshape(-1)[: index.size] if x.ndim == 0 else src[tuple(slice(0, s) for s in index.shape)]
        val = cupy.ascontiguousarray(val.astype(out.dtype, copy=False)).reshape(-1)
    else:
        val = cupy.full((index.size,), src, out.dtype)
    lin = _targets(out if x.ndim else flat, index, dim if x.ndim else 0)
    add = reduce == "add"
    name = _DTYPE_NAME[out.dtype]
    if is_deterministic() or (add and name not in EMBER_SCATTER_ADD_ATOMIC):
        _segments(flat, lin, val, add)
    elif add:
        _launch(EMBER_SCATTER_ADD_ATOMIC[name], lin.size, (flat, lin, val, np.int64(lin.size)))
    else:
        flat[lin] = val
    return out


def nonzero(x: cupy.ndarray) -> cupy.ndarray:
    """int64 (count, ndim) coordinates of the non-zero elements, in C order."""
    return cupy.argwhere(x).astype(np.int64, copy=False)


def cat(arrays: list[cupy.ndarray], dim: int) -> cupy.ndarray:
    return cupy.concatenate(arrays, axis=dim)
