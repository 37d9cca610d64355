"""conv2d (im2col + cuBLAS) and max/avg pooling kernels, NCHW.

conv2d pads once, takes the (N, C, kh, kw, OH, OW) patch view of the padded input with
``as_strided`` (no copy), packs it per group into a (K, N*OH*OW) matrix and multiplies by
the (O/g, K) weights with ``cupy.matmul`` (cuBLAS). Pooling runs one thread per output
element over the window, skipping padding; max_pool2d returns the first maximum (the
first NaN if any, as NumPy's argmax) and its flat index within the (H, W) plane;
avg_pool2d divides by PyTorch's divisor (window clipped to the padded input, or to the
input when ``count_include_pad`` is False). Parameters are ``(h, w)`` pairs.
"""

from __future__ import annotations

import math
from string import Template

import cupy
import numpy as np

from .dtypes import CUDA_HEADERS, FLOATS, ctype, to_np
from .matmul import matmul

__all__ = [
    "EMBER_POOL2D",
    "EMBER_POOL2D_SRC",
    "avg_pool2d",
    "conv2d",
    "max_pool2d",
]

Pair = tuple[int, int]

EMBER_POOL2D_SRC = Template(
    CUDA_HEADERS
    + r"""
typedef ${T} T;
typedef ${A} A;

#define EMBER_POOL_INDEX                                                   \
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;       \
    if (t >= total) return;                                               \
    int ow = (int)(t % OW), oh = (int)((t / OW) % OH);                    \
    const T *plane = x + (t / ((long long)OH * OW)) * H * W;              \
    int r0 = oh * sh - ph, c0 = ow * sw - pw;

extern "C" __global__ void ember_max_pool2d(const T *x, T *y, long long *idx, long long total,
                                            int H, int W, int OH, int OW, int kh, int kw,
                                            int sh, int sw, int ph, int pw, int dh, int dw)
{
    EMBER_POOL_INDEX
    A best = 0;
    long long bi = -1;
    for (int i = 0; i < kh; i++) {
        int r = r0 + i * dh;
        if (r < 0 || r >= H) continue;
        for (int j = 0; j < kw; j++) {
            int c = c0 + j * dw;
            if (c < 0 || c >= W) continue;
            A v = (A)plane[r * W + c];
            if (bi < 0 || (best == best && (v != v || v > best))) { best = v; bi = (long long)r * W + c; }
        }
    }
    y[t] = bi < 0 ? (T)(A)__int_as_float(0xff800000) : plane[bi];
    idx[t] = bi;
}

extern "C" __global__ void ember_avg_pool2d(const T *x, T *y, long long total,
                                            int H, int W, int OH, int OW, int kh, int kw,
                                            int sh, int sw, int ph, int pw, int count_include_pad)
{
    EMBER_POOL_INDEX
    int r1 = min(r0 + kh, H + ph), c1 = min(c0 + kw, W + pw);
    A sum = 0;
    for (int r = max(r0, 0); r < min(r0 + kh, H); r++)
        for (int c = max(c0, 0); c < min(c0 + kw, W); c++) sum += (A)plane[r * W + c];
    int div = count_include_pad ? (r1 - r0) * (c1 - c0)
                                : (min(r1, H) - max(r0, 0)) * (min(c1, W) - max(c0, 0));
    y[t] = (T)(sum / (A)div);
}
"""
)


def _acc(name: str) -> str:
    return "double" if name == "float64" else "float"


# One module per dtype holding ember_max_pool2d and ember_avg_pool2d (compiled on first use).
EMBER_POOL2D = {
    d.name: cupy.RawModule(code=EMBER_POOL2D_SRC.substitute(T=ctype(d), A=_acc(d.name))) for d in FLOATS
}
_DTYPE_NAME = {to_np(d): d.name for d in FLOATS}
_BLOCK = 256


def _out_size(n: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    span = n + 2 * p - d * (k - 1) - 1
    out = (math.ceil(span / s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= n + p:  # the last window must start inside input or left padding
        out -= 1
    return max(out, 0)


def conv2d(
    x: cupy.ndarray, w: cupy.ndarray, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> cupy.ndarray:
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = _out_size(h, kh, stride[0], padding[0], dilation[0], False)
    ow = _out_size(wd, kw, stride[1], padding[1], dilation[1], False)
    if padding != (0, 0):
        pads = ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2)
        xp = cupy.pad(x, pads)
    else:
        xp = cupy.ascontiguousarray(x)
    s = xp.strides
    patches = cupy.lib.stride_tricks.as_strided(
        xp,
        (groups, cg, kh, kw, n, oh, ow),
        (s[1] * cg, s[1], s[2] * dilation[0], s[3] * dilation[1], s[0], s[2] * stride[0], s[3] * stride[1]),
    )
    cols = cupy.ascontiguousarray(patches).reshape(groups, cg * kh * kw, n * oh * ow)
    wm = cupy.ascontiguousarray(w).reshape(groups, o // groups, cg * kh * kw)
    out = matmul(wm, cols).reshape(groups, o // groups, n, oh, ow)
    return cupy.ascontiguousarray(out.transpose(2, 0, 1, 3, 4)).reshape(n, o, oh, ow)


def _pool_launch(x: cupy.ndarray, kernel: Pair, stride: Pair, padding: Pair, dil: Pair, ceil: bool):  # type: ignore[no-untyped-def]
    h, w = x.shape[-2:]
    oh = _out_size(h, kernel[0], stride[0], padding[0], dil[0], ceil)
    ow = _out_size(w, kernel[1], stride[1], padding[1], dil[1], ceil)
    xc = cupy.ascontiguousarray(x)
    shape = x.shape[:-2] + (oh, ow)
    total = int(np.prod(shape, dtype=np.int64))
    ints = (h, w, oh, ow, kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1])
    dims = tuple(np.int32(v) for v in ints)
    grid = ((total + _BLOCK - 1) // _BLOCK,)
    return xc, shape, total, dims, grid, EMBER_POOL2D[_DTYPE_NAME[x.dtype]]


def max_pool2d(
    x: cupy.ndarray, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, ceil_mode: bool
) -> tuple[cupy.ndarray, cupy.ndarray]:
    xc, shape, total, dims, grid, mod = _pool_launch(x, kernel, stride, padding, dilation, ceil_mode)
    y = cupy.empty(shape, x.dtype)
    idx = cupy.empty(shape, np.int64)
    if total:
        fn = mod.get_function("ember_max_pool2d")
        fn(
            grid,
            (_BLOCK,),
            (xc, y, idx, np.int64(total), *dims, np.int32(dilation[0]), np.int32(dilation[1])),
        )
    return y, idx


def avg_pool2d(
    x: cupy.ndarray, kernel: Pair, stride: Pair, padding: Pair, ceil_mode: bool, count_include_pad: bool
) -> cupy.ndarray:
    xc, shape, total, dims, grid, mod = _pool_launch(x, kernel, stride, padding, (1, 1), ceil_mode)
    y = cupy.empty(shape, x.dtype)
    if total:
        fn = mod.get_function("ember_avg_pool2d")
        fn(grid, (_BLOCK,), (xc, y, np.int64(total), *dims, np.int32(bool(count_include_pad))))
    return y
