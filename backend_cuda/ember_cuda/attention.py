"""Scaled-dot-product attention: cuBLAS product, one fused row kernel, cuBLAS product.

Forward: ``s = q kᵀ`` (batched ``cupy.matmul``), then ``ember_sdpa_softmax`` per score row, one
block each: scale, bool or additive mask, causal mask (key j after query i hidden, top-left
aligned as in PyTorch) and softmax in place, writing ``w · drop`` beside it when there are
dropout factors; then ``(w · drop) @ v``. A row with nothing to attend becomes zeros (its max
is clamped to the lowest finite value and its sum to at least 1, as the CPU backend does);
NaN propagates. Backward: ``dP = g vᵀ``, ``ember_sdpa_softmax_back`` per row turns it into
``dS = W ∘ (dP∘drop − rowsum(dP∘drop ∘ W)) · scale``, and three products give dq, dk, dv.
Half types compute in float32. Host work goes through ``cupy`` and ``_launch`` only, so the
tests run it with NumPy and the kernels built for the host from this same source.
"""

from __future__ import annotations

from string import Template
from typing import Any

import cupy
import numpy as np

from .fused import BLOCK_REDUCE_SRC

__all__ = ["EMBER_SDPA", "EMBER_SDPA_SRC", "sdpa", "sdpa_backward"]

EMBER_SDPA_SRC = Template(
    r"""
#define EMBER_BLOCK 256
typedef ${A} A;
"""
    + BLOCK_REDUCE_SRC
    + r"""

/* s (rows, lk) in place: scores -> weights; mask_kind 0 none, 1 bool (true attends), 2 additive;
   row r holds query r % lq; wd = w * drop when has_drop */
extern "C" __global__ void ember_sdpa_softmax(
    A *s, const bool *bmask, const A *amask, int mask_kind, const A *drop, A *wd, int has_drop,
    A scale, int causal, long long rows, long long lq, long long lk)
{
    __shared__ A sh[EMBER_BLOCK];
    long long r = blockIdx.x;
    if (r >= rows) return;
    A *x = s + r * lk;
    long long qi = r % lq, off = r * lk;
    const A ninf = (A)__int_as_float(0xff800000);
    A m = ninf;
    for (long long j = threadIdx.x; j < lk; j += blockDim.x) {
        A v = x[j] * scale;
        if (mask_kind == 1 && !bmask[off + j]) v = ninf;
        if (mask_kind == 2) v += amask[off + j];
        if (causal && j > qi) v = ninf;
        x[j] = v;
        m = ember_nanmax(m, v);
    }
    m = ember_block_reduce(m, sh, true);
    if (m < (A)(${LOWEST})) m = (A)(${LOWEST});  /* a row of -inf: exp gives 0, not NaN */
    A z = 0;
    for (long long j = threadIdx.x; j < lk; j += blockDim.x) {
        A e = exp(x[j] - m);
        x[j] = e;
        z += e;
    }
    z = ember_block_reduce(z, sh, false);
    if (z < (A)1) z = (A)1;  /* a row holding its max sums to >= 1; an empty row to 0 */
    for (long long j = threadIdx.x; j < lk; j += blockDim.x) {
        A w = x[j] / z;
        x[j] = w;
        if (has_drop) wd[off + j] = w * drop[off + j];
    }
}

/* dp (rows, lk) in place: g v^T -> dS; wd = w * drop when has_drop */
extern "C" __global__ void ember_sdpa_softmax_back(
    A *dp, const A *w, const A *drop, A *wd, int has_drop, A scale, long long rows, long long lk)
{
    __shared__ A sh[EMBER_BLOCK];
    long long r = blockIdx.x;
    if (r >= rows) return;
    long long off = r * lk;
    A acc = 0;
    for (long long j = threadIdx.x; j < lk; j += blockDim.x) {
        A v = dp[off + j];
        if (has_drop) {
            v *= drop[off + j];
            dp[off + j] = v;
            wd[off + j] = w[off + j] * drop[off + j];
        }
        acc += v * w[off + j];
    }
    acc = ember_block_reduce(acc, sh, false);
    for (long long j = threadIdx.x; j < lk; j += blockDim.x)
        dp[off + j] = (dp[off + j] - acc) * w[off + j] * scale;
}
"""
)

_LOWEST = {"float32": "-3.402823466e+38f", "float64": "-1.7976931348623157e+308"}
_CTYPE = {"float32": "float", "float64": "double"}
# One module per accumulator type holding both row kernels (compiled on first use).
EMBER_SDPA = {
    name: cupy.RawModule(code=EMBER_SDPA_SRC.substitute(A=_CTYPE[name], LOWEST=low))
    for name, low in _LOWEST.items()
}
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _launch(name: str, acc: np.dtype, rows: int, block: int, args: tuple) -> None:
    """One block per row; tests replace this with a host-built twin."""
    EMBER_SDPA[acc.name].get_function(name)((rows,), (block,), args)


def _block(lk: int) -> int:
    """Threads per row: a power of two, no more than the row needs (up to 256)."""
    return 32 if lk <= 32 else 128 if lk <= 128 else 256


def _acc(dtype: Any) -> np.dtype:
    return _F64 if np.dtype(dtype) == _F64 else _F32


def _wide(acc: np.dtype, *arrays: Any) -> list[Any]:
    return [None if a is None else cupy.ascontiguousarray(a.astype(acc, copy=False)) for a in arrays]


def _full(a: Any, shape: tuple[int, ...]) -> Any:
    """``a`` (mask or drop factors, possibly broadcast) laid out like the scores."""
    return cupy.ascontiguousarray(cupy.broadcast_to(a, shape))


def _t(a: Any) -> Any:
    return cupy.swapaxes(a, -1, -2)


def sdpa(q: Any, k: Any, v: Any, mask: Any, drop: Any, scale: float, is_causal: bool) -> tuple[Any, Any]:
    """``(softmax(q kᵀ·scale + mask) · drop) @ v`` and the softmax (see ``ops.py``)."""
    dtype, acc = q.dtype, _acc(q.dtype)
    q, k, v = _wide(acc, q, k, v)
    s = cupy.ascontiguousarray(cupy.matmul(q, _t(k)))
    lq, lk = s.shape[-2], s.shape[-1]
    rows = s.size // lk if lk else 0
    kind, bmask, amask = 0, s, s  # unused pointers point at s
    if mask is not None:
        if mask.dtype == np.bool_:
            kind, bmask = 1, _full(mask, s.shape)
        else:
            kind, amask = 2, _full(mask.astype(acc, copy=False), s.shape)
    wd = s if drop is None else cupy.empty_like(s)
    dr = s if drop is None else _full(drop.astype(acc, copy=False), s.shape)
    if rows:
        ints = (np.int32(kind),)
        tail = (acc.type(scale), np.int32(bool(is_causal)), np.int64(rows), np.int64(lq), np.int64(lk))
        args = (s, bmask, amask, *ints, dr, wd, np.int32(drop is not None), *tail)
        _launch("ember_sdpa_softmax", acc, rows, _block(lk), args)
    out = cupy.matmul(wd, v)
    return out.astype(dtype, copy=False), s.astype(dtype, copy=False)


def sdpa_backward(g: Any, q: Any, k: Any, v: Any, w: Any, drop: Any, scale: float) -> tuple[Any, Any, Any]:
    """``(dq, dk, dv)``: dS = W ∘ (dP − rowsum(dP ∘ W)) with dP = (g vᵀ) ∘ drop."""
    dtype, acc = q.dtype, _acc(q.dtype)
    g, q, k, v, w = _wide(acc, g, q, k, v, w)
    dp = cupy.ascontiguousarray(cupy.matmul(g, _t(v)))
    lk = dp.shape[-1]
    rows = dp.size // lk if lk else 0
    wd = w if drop is None else cupy.empty_like(w)
    dr = w if drop is None else _full(drop.astype(acc, copy=False), w.shape)
    if rows:
        args = (dp, w, dr, wd, np.int32(drop is not None), acc.type(scale), np.int64(rows), np.int64(lk))
        _launch("ember_sdpa_softmax_back", acc, rows, _block(lk), args)
    dv = cupy.matmul(_t(wd), g)
    dq = cupy.matmul(dp, k)
    dk = cupy.matmul(_t(dp), q)
    return tuple(a.astype(dtype, copy=False) for a in (dq, dk, dv))  # type: ignore[return-value]


ATTENTION_KERNELS = {"sdpa": sdpa, "sdpa_backward": sdpa_backward}
