"""Scaled dot-product attention: two matmuls around one fused row kernel, forward and backward.

Forward: ``s = q @ kᵀ`` (the tiled matmul reads k transposed in place), then ONE kernel,
one work item per score row, scales, masks (bool: False hides; additive: added), hides
``j > i`` when causal, and softmaxes the row in place (the row's maximum is clamped to the
lowest finite value, so a row with nothing to attend becomes zeros, not NaN; NaN still
propagates), writing ``w * drop`` to a second buffer when there are dropout factors; then
``(w or w * drop) @ v``. Backward: ``dp = g @ vᵀ``, one row kernel for the softmax backward
(``ds = w * (dp * drop - rowsum(dp * drop * w)) * scale``, also writing ``w * drop`` for dv),
then the three products. Row sums accumulate in double where the device has it. Conventions
as ``ember_cpu.attention_kernels``; float32/float64 (kernels.py widens half types).
"""

from __future__ import annotations

from .clarray import CLArray, empty
from .matmul import matmul
from .rnn import Buf, check_float, dense, launch, transposed

__all__ = ["sdpa", "sdpa_backward"]

# mask: bool as uchar, additive as T (the same buffer argument, cast); kind 0 none, 1, 2.
SDPA_ROWS = """
__kernel void ember_sdpa_rows(__global T *s, long os, __global T *wd, long owd,
    __global const uchar *mask, long om, __global const T *drop, long odr,
    T scale, long lq, long lk, long n)
{
    long row = get_global_id(0);
    if (row >= n) return;
    long i = row % lq;
    __global T *p = s + os + row * lk;
    __global const uchar *mb = mask + om + row * lk;
    __global const T *ma = (__global const T *)mask + om + row * lk;
    for (long j = 0; j < lk; j++) {
        T v = p[j] * scale;
#if MASK_KIND == 1
        v = mb[j] ? v : -INFINITY;
#elif MASK_KIND == 2
        v += ma[j];
#endif
#if CAUSAL
        v = j > i ? -INFINITY : v;
#endif
        p[j] = v;
    }
    T mx = -INFINITY;
    for (long j = 0; j < lk; j++) mx = (isnan(mx) || mx >= p[j]) ? mx : p[j];
    if (mx < LOWEST) mx = LOWEST;
    for (long j = 0; j < lk; j++) p[j] = exp(p[j] - mx);
    ACC total = 0;
    for (long j = 0; j < lk; j++) total += p[j];
    T z = (T)total;
    if (z < 1) z = 1;
    for (long j = 0; j < lk; j++) p[j] = p[j] / z;
#if HAS_DROP
    __global const T *dr = drop + odr + row * lk;
    __global T *q = wd + owd + row * lk;
    for (long j = 0; j < lk; j++) q[j] = p[j] * dr[j];
#endif
}
"""

SDPA_ROWS_BACK = """
__kernel void ember_sdpa_rows_back(__global T *dp, long odp, __global T *wd, long owd,
    __global const T *w, long ow, __global const T *drop, long odr,
    T scale, long lk, long n)
{
    long row = get_global_id(0);
    if (row >= n) return;
    __global T *p = dp + odp + row * lk;
    __global const T *wr = w + ow + row * lk, *dr = drop + odr + row * lk;
    __global T *q = wd + owd + row * lk;
#if HAS_DROP
    for (long j = 0; j < lk; j++) {
        p[j] = p[j] * dr[j];
        q[j] = wr[j] * dr[j];
    }
#endif
    ACC acc = 0;
    for (long j = 0; j < lk; j++) acc += p[j] * wr[j];
    T sum = (T)acc;
    for (long j = 0; j < lk; j++) p[j] = (p[j] - sum) * wr[j] * scale;
}
"""


def _source(x: CLArray, src: str) -> str:
    lowest = "-DBL_MAX" if x.dtype.name == "float64" else "-FLT_MAX"
    acc = "double" if x.dev.fp64 else "float"
    return f"#define LOWEST {lowest}\n#define ACC {acc}\n{src}"


def _buf(x: CLArray | None, fallback: CLArray) -> Buf:
    return (fallback.buf, 0) if x is None else (x.buf, x.offset)


def sdpa(
    q: CLArray,
    k: CLArray,
    v: CLArray,
    mask: CLArray | None,
    drop: CLArray | None,
    scale: float,
    is_causal: bool,
) -> tuple[CLArray, CLArray]:
    """``(softmax(q kᵀ·scale + mask) · drop) @ v`` and the softmax (see ``ember.backends.ops``)."""
    check_float("sdpa", q)
    s = matmul(q, transposed(k))  # contiguous, offset 0: becomes the weights
    lq, lk = s.shape[-2], s.shape[-1]
    rows = s.size // lk if lk else 0
    mask = None if mask is None else dense(mask)
    drop = None if drop is None else dense(drop)
    wd = empty(s.dev, s.shape, s.dtype) if drop is not None else s
    kind = 0 if mask is None else (1 if mask.dtype.name == "bool" else 2)
    bufs = [(s.buf, 0), (wd.buf, 0), _buf(mask, s), _buf(drop, s)]
    flags = (("MASK_KIND", kind), ("CAUSAL", int(is_causal)), ("HAS_DROP", int(drop is not None)))
    launch(s, "ember_sdpa_rows", _source(s, SDPA_ROWS), bufs, [lq, lk, rows], (scale,), flags)
    return matmul(wd, v), s


def sdpa_backward(
    g: CLArray, q: CLArray, k: CLArray, v: CLArray, w: CLArray, drop: CLArray | None, scale: float
) -> tuple[CLArray, CLArray, CLArray]:
    """``(dq, dk, dv)``: dS = W ∘ (dP − rowsum(dP ∘ W)) · scale with dP = (g vᵀ) ∘ drop."""
    check_float("sdpa_backward", q)
    dp = matmul(g, transposed(v))  # contiguous, offset 0: becomes dS
    lk = dp.shape[-1]
    rows = dp.size // lk if lk else 0
    w = dense(w)
    drop = None if drop is None else dense(drop)
    wd = empty(dp.dev, dp.shape, dp.dtype) if drop is not None else w
    bufs = [(dp.buf, 0), _buf(wd, dp) if drop is not None else (dp.buf, 0), (w.buf, w.offset), _buf(drop, dp)]
    flags = (("HAS_DROP", int(drop is not None)),)
    launch(dp, "ember_sdpa_rows_back", _source(dp, SDPA_ROWS_BACK), bufs, [lk, rows], (scale,), flags)
    dv = matmul(transposed(wd), g)
    return matmul(dp, k), matmul(transposed(dp), q), dv
