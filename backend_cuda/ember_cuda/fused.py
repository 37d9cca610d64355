"""Fused composites: row softmax/log_softmax (optimizer updates live in ``optim.py``).

``EMBER_SOFTMAX`` runs one block per row of the input made contiguous along ``dim``: a
max pass, a sum-of-exp pass and a write pass, all in the accumulator type (float for
half types and float32, double for float64), so half inputs never accumulate in half.
The max propagates NaN, as the decomposition does.
"""

from __future__ import annotations

from string import Template

import cupy

from .dtypes import CUDA_HEADERS, FLOATS, ctype, to_np

__all__ = [
    "BLOCK_REDUCE_SRC",
    "EMBER_SOFTMAX",
    "EMBER_SOFTMAX_SRC",
    "log_softmax",
    "softmax",
]

# A block's max (NaN-propagating) or sum, every thread getting it: the row kernels' shared
# reduction (blockDim.x a power of two <= 256; needs a type ``A`` declared before it).
BLOCK_REDUCE_SRC = r"""
__device__ A ember_nanmax(A a, A b) { return (a != a || a > b) ? a : b; }

/* every thread of the block gets the reduction of v */
__device__ A ember_block_reduce(A v, A *sh, bool is_max)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            A a = sh[threadIdx.x], b = sh[threadIdx.x + s];
            sh[threadIdx.x] = is_max ? ember_nanmax(a, b) : a + b;
        }
        __syncthreads();
    }
    A r = sh[0];
    __syncthreads();
    return r;
}
"""

EMBER_SOFTMAX_SRC = Template(
    CUDA_HEADERS
    + r"""
#define EMBER_BLOCK 256
typedef ${T} T;
typedef ${A} A;
"""
    + BLOCK_REDUCE_SRC
    + r"""

extern "C" __global__ void ember_softmax(const T *x, T *y, long long n, int log_out)
{
    __shared__ A sh[EMBER_BLOCK];
    const T *row = x + (long long)blockIdx.x * n;
    T *out = y + (long long)blockIdx.x * n;
    A m = (A)__int_as_float(0xff800000);  /* -inf */
    for (long long i = threadIdx.x; i < n; i += blockDim.x) m = ember_nanmax(m, (A)row[i]);
    m = ember_block_reduce(m, sh, true);
    A s = 0;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) s += exp((A)row[i] - m);
    s = ember_block_reduce(s, sh, false);
    if (log_out) {
        A ls = log(s);
        for (long long i = threadIdx.x; i < n; i += blockDim.x) out[i] = (T)((A)row[i] - m - ls);
    } else {
        for (long long i = threadIdx.x; i < n; i += blockDim.x) out[i] = (T)(exp((A)row[i] - m) / s);
    }
}
"""
)


def _acc(name: str) -> str:
    return "double" if name == "float64" else "float"


EMBER_SOFTMAX = {
    d.name: cupy.RawKernel(EMBER_SOFTMAX_SRC.substitute(T=ctype(d), A=_acc(d.name)), "ember_softmax")
    for d in FLOATS
}
_DTYPE_NAME = {to_np(d): d.name for d in FLOATS}
_BLOCK = 256


def _rows(x: cupy.ndarray, dim: int, log_out: bool) -> cupy.ndarray:
    if x.ndim == 0:
        return _rows(x.reshape(1), 0, log_out).reshape(())
    xm = cupy.ascontiguousarray(cupy.moveaxis(x, dim, -1))
    out = cupy.empty_like(xm)
    n = xm.shape[-1]
    if xm.size:
        kernel = EMBER_SOFTMAX[_DTYPE_NAME[x.dtype]]
        kernel((xm.size // n,), (_BLOCK,), (xm, out, cupy.int64(n), cupy.int32(log_out)))
    return cupy.ascontiguousarray(cupy.moveaxis(out, -1, dim))


def softmax(x: cupy.ndarray, dim: int) -> cupy.ndarray:
    return _rows(x, dim, False)


def log_softmax(x: cupy.ndarray, dim: int) -> cupy.ndarray:
    return _rows(x, dim, True)
