"""Fused nn composites: max/avg pooling (one work item per output row) and conv2d (im2col + matmul).

Conventions as in ``ember_cpu.nn_kernels``: NCHW inputs (leading dims are planes), OIHW
weights, parameters as (h, w) pairs; forward only (the backward kernels are in nn_backward.py).

* ``max_pool2d``: one work item per output row (64-bit division per output was most of its
  time on PoCL); for each output it walks its window in row-major order and keeps the first
  maximum (``>``), NaN counting as the maximum (the first NaN wins); padding is ``-inf``.
  A window whose maximum is ``-inf`` and sits on a padding cell reports its first
  in-bounds cell, as PyTorch (and the CPU kernel) do. Indices are flat ``h * W + w``.
  2x2 windows at stride 2 that all lie inside the input (the common case) run
  ``ember_max_pool2d_2x2``: the same choices in straight-line 32-bit code.
* ``avg_pool2d``: the window's in-bounds sum divided by PyTorch's divisor, the window
  clipped to the padded input (``count_include_pad``) or to the input itself.
* ``conv2d``: ``ember_im2col`` copies the windows of a strided input into a contiguous
  ``(N, groups, C/groups * kh * kw, oh * ow)`` buffer (zeros for padding; the weight gradient
  asks for ``(groups, K, N, oh * ow)`` instead), one work item per row (no integer division
  per element: that was most of its time on CPUs; at stride 1 a window row is zeros, a
  contiguous run of the input row, zeros), and the tiled matmul multiplies it by the
  ``(groups, O/groups, C/groups * kh * kw)`` weight, broadcast over the batch: the product
  is already NCHW.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ember.backends import DTYPES_BY_NAME

from . import elementwise as ew
from . import runtime
from .clarray import CLArray, empty
from .dtypes import ctype, kind
from .matmul import matmul

__all__ = ["avg_pool2d", "conv2d", "max_pool2d"]

Pair = tuple[int, int]
INT64 = DTYPES_BY_NAME["int64"]

EMBER_MAX_POOL2D_SRC = """
long ember_first_valid(long start, long d) { return start < 0 ? start + (-start + d - 1) / d * d : start; }

__kernel void ember_max_pool2d(__global T *out, __global long *idx, __global const T *x,
    long H, long W, long OH, long OW, long kh, long kw, long sh, long sw, long ph, long pw,
    long dh, long dw, long n)
{
    long gid = get_global_id(0);  /* one output row (plane, oy): no division per output */
    if (gid >= n) return;
    long oy = gid % OH, plane = gid / OH;
    __global const T *xp = x + plane * H * W;
    long r0 = oy * sh - ph, rf = ember_first_valid(r0, dh);
    for (long ox = 0; ox < OW; ox++) {
        long c0 = ox * sw - pw, br = r0, bc = c0;
        T best = -INFINITY;
        for (long i = 0; i < kh; i++) {
            long r = r0 + i * dh;
            for (long j = 0; j < kw; j++) {
                long c = c0 + j * dw;
                T v = (r >= 0 && r < H && c >= 0 && c < W) ? xp[r * W + c] : (T)(-INFINITY);
                if ((i == 0 && j == 0) || (!isnan(best) && (isnan(v) || v > best))) {
                    best = v; br = r; bc = c;
                }
            }
        }
        if (br < 0 || br >= H || bc < 0 || bc >= W) {
            br = rf;
            bc = ember_first_valid(c0, dw);
        }
        out[gid * OW + ox] = best;
        idx[gid * OW + ox] = br * W + bc;
    }
}
"""

EMBER_MAX_POOL2D_2X2_SRC = """
/* 2x2 windows at stride 2, no padding or dilation, all inside the input, 32-bit indices:
   the common case, in straight-line code. One work item per output row (plane, oy). */
__kernel void ember_max_pool2d_2x2(__global T *out, __global long *idx, __global const T *x,
    int H, int W, int OH, int OW, int n)
{
    int gid = get_global_id(0);
    if (gid >= n) return;
    int oy = gid % OH, plane = gid / OH;
    __global const T *xp = x + plane * H * W + 2 * oy * W;
    for (int ox = 0; ox < OW; ox++) {
        __global const T *xw = xp + 2 * ox;
        T best = xw[0], v;
        int bi = 0, take;
        #define EMBER_TAKE(off) v = xw[off]; \
            take = (v > best) | (isnan(v) & !isnan(best)); best = take ? v : best; bi = take ? off : bi;
        EMBER_TAKE(1)
        EMBER_TAKE(W)
        EMBER_TAKE(W + 1)
        out[gid * OW + ox] = best;
        idx[gid * OW + ox] = 2 * oy * W + 2 * ox + bi;
    }
}
"""

EMBER_AVG_POOL2D_SRC = """
__kernel void ember_avg_pool2d(__global T *out, __global const T *x,
    long H, long W, long OH, long OW, long kh, long kw, long sh, long sw, long ph, long pw,
    int include_pad, long n)
{
    long gid = get_global_id(0);  /* one output row (plane, oy) */
    if (gid >= n) return;
    long oy = gid % OH, plane = gid / OH;
    __global const T *xp = x + plane * H * W;
    long r0 = oy * sh - ph, r1 = min(r0 + kh, H + ph);
    for (long ox = 0; ox < OW; ox++) {
        long c0 = ox * sw - pw, c1 = min(c0 + kw, W + pw);
        T total = 0;
        for (long r = max(r0, 0L); r < min(r0 + kh, H); r++)
            for (long c = max(c0, 0L); c < min(c0 + kw, W); c++)
                total += xp[r * W + c];
        long div = include_pad ? (r1 - r0) * (c1 - c0) : (min(r1, H) - max(r0, 0L)) * (min(c1, W) - max(c0, 0L));
        out[gid * OW + ox] = total / (T)div;
    }
}
"""

EMBER_IM2COL_SRC = """
__kernel void ember_im2col(__global T *cols, __global const T *x, long xoff,
    long sxn, long sxc, long sxh, long sxw, long G, long CG, long H, long W, long OH, long OW,
    long kh, long kw, long sh, long sw, long ph, long pw, long dh, long dw,
    long rb, long rg, long rk, long n)
{
    long gid = get_global_id(0);  /* one row (b, g, k) of the columns, at b * rb + g * rg + k * rk */
    if (gid >= n) return;
    long K = CG * kh * kw;
    long k = gid % K, g = (gid / K) % G, b = gid / (K * G);
    long j = k % kw, i = (k / kw) % kh, c = k / (kw * kh);
    __global const T *xp = x + xoff + b * sxn + (g * CG + c) * sxc;
    __global T *row = cols + b * rb + g * rg + k * rk;
    long off = j * dw - pw, lo = clamp(-off, 0L, OW), hi = clamp(W - off, lo, OW);  /* stride 1: ox + off */
    for (long oy = 0; oy < OH; oy++) {
        long r = oy * sh - ph + i * dh;
        int rin = r >= 0 && r < H;
        __global T *out = row + oy * OW;
        if (sw == 1 && sxw == 1 && rin) {  /* zeros, a contiguous run of the input row, zeros */
            __global const T *src = xp + r * sxh + off;
            for (long ox = 0; ox < lo; ox++) out[ox] = 0;
            for (long ox = lo; ox < hi; ox++) out[ox] = src[ox];
            for (long ox = hi; ox < OW; ox++) out[ox] = 0;
            continue;
        }
        for (long ox = 0; ox < OW; ox++) {
            long cc = ox * sw - pw + j * dw;
            out[ox] = (rin && cc >= 0 && cc < W) ? xp[r * sxh + cc * sxw] : (T)0;
        }
    }
}
"""


def _out(n: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    """PyTorch's output size (as ``ember_cpu.nn_kernels._out``)."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= n + p:  # the last window must start inside the input or left padding
        out -= 1
    return max(out, 0)


def _check_float(op: str, x: CLArray) -> None:
    if kind(x.dtype) != "f":
        raise TypeError(f"{op}: backend 'opencl' has no {x.dtype.name} kernel (supported: float32, float64)")


def _launch(x: CLArray, name: str, src: str, bufs: list[Any], longs: list[int], flags: list[int]) -> None:
    """Run kernel ``name`` (buffers, then int64 scalars, then int32 flags, then n = longs[-1])."""
    types = [None] * len(bufs) + [np.int64] * (len(longs) - 1) + [np.int32] * len(flags) + [np.int64]
    knl = runtime.kernel(
        x.dev, (name, x.dtype.name), lambda: (f"#define T {ctype(x.dtype)}\n{src}", name, types)
    )
    args = bufs + [np.int64(v) for v in longs[:-1]] + [np.int32(f) for f in flags] + [np.int64(longs[-1])]
    runtime.launch(x.dev, knl, longs[-1], args)


def _dense(x: CLArray) -> CLArray:
    return x if x.is_contiguous() and x.offset == 0 else ew.clone(x)


def max_pool2d(x: CLArray, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, ceil_mode: bool) -> Any:
    """(window maxima, int64 flat ``h * W + w`` index of the first maximum per window)."""
    _check_float("max_pool2d", x)
    h, w = x.shape[-2:]
    oh = _out(h, kernel[0], stride[0], padding[0], dilation[0], ceil_mode)
    ow = _out(w, kernel[1], stride[1], padding[1], dilation[1], ceil_mode)
    shape = x.shape[:-2] + (oh, ow)
    out, idx = empty(x.dev, shape, x.dtype), empty(x.dev, shape, INT64)
    if out.size:
        xc = _dense(x)
        simple = kernel == stride == (2, 2) and padding == (0, 0) and dilation == (1, 1)
        if simple and 2 * oh <= h and 2 * ow <= w and x.size < 2**31:  # every window inside
            _max_pool2d_2x2(xc, out, idx)
            return out, idx
        geo = [h, w, oh, ow, *kernel, *stride, *padding, *dilation, out.size // ow]
        _launch(x, "ember_max_pool2d", EMBER_MAX_POOL2D_SRC, [out.buf, idx.buf, xc.buf], geo, [])
    return out, idx


def _max_pool2d_2x2(x: CLArray, out: CLArray, idx: CLArray) -> None:
    h, w = x.shape[-2:]
    oh, ow = out.shape[-2:]
    name = "ember_max_pool2d_2x2"
    types = [None] * 3 + [np.int32] * 5
    knl = runtime.kernel(
        x.dev,
        (name, x.dtype.name),
        lambda: (f"#define T {ctype(x.dtype)}\n{EMBER_MAX_POOL2D_2X2_SRC}", name, types),
    )
    rows = out.size // ow
    runtime.launch(x.dev, knl, rows, [out.buf, idx.buf, x.buf, *(np.int32(v) for v in (h, w, oh, ow, rows))])


def avg_pool2d(
    x: CLArray, kernel: Pair, stride: Pair, padding: Pair, ceil_mode: bool, count_include_pad: bool
) -> CLArray:
    """Window means with PyTorch's divisor rules (see the module docstring)."""
    _check_float("avg_pool2d", x)
    h, w = x.shape[-2:]
    oh = _out(h, kernel[0], stride[0], padding[0], 1, ceil_mode)
    ow = _out(w, kernel[1], stride[1], padding[1], 1, ceil_mode)
    out = empty(x.dev, x.shape[:-2] + (oh, ow), x.dtype)
    if out.size:
        xc = _dense(x)
        geo = [h, w, oh, ow, *kernel, *stride, *padding, out.size // ow]
        _launch(x, "ember_avg_pool2d", EMBER_AVG_POOL2D_SRC, [out.buf, xc.buf], geo, [int(count_include_pad)])
    return out


def conv2d(x: CLArray, w: CLArray, stride: Pair, padding: Pair, dilation: Pair, groups: int) -> CLArray:
    """Cross-correlation: ``ember_im2col`` into a contiguous buffer, then the tiled matmul."""
    _check_float("conv2d", x)
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = _out(h, kh, stride[0], padding[0], dilation[0], False)
    ow = _out(wd, kw, stride[1], padding[1], dilation[1], False)
    og, k, p = o // groups, cg * kh * kw, oh * ow
    if n * o * p == 0 or k == 0:
        return ew.full((n, o, oh, ow), 0.0, x.dtype, x.dev.index)
    cols = empty(x.dev, (n, groups, k, p), x.dtype)
    geo = [
        x.offset,
        *x.strides,
        groups,
        cg,
        h,
        wd,
        oh,
        ow,
        kh,
        kw,
        *stride,
        *padding,
        *dilation,
        groups * k * p,
        k * p,
        p,
        n * groups * k,
    ]
    _launch(x, "ember_im2col", EMBER_IM2COL_SRC, [cols.buf, x.buf], geo, [])
    wc = _dense(w)
    wv = wc.view((n, groups, og, k), (0, og * k, k, 1), 0)
    return matmul(wv, cols).view((n, o, oh, ow), (o * p, p, ow, 1), 0)
