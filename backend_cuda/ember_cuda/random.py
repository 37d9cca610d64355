"""Philox-4x32-10 on the GPU, a port of ember_cpu/philox.py (bit-identical words).

Thread j computes block j from the 128-bit counter ``counter + j`` (carry from the low 64
bits into the high 64) and writes words 4j..4j+3 as int64 in [0, 2**32), the layout and
dtype the CPU backend returns.
"""

from __future__ import annotations

import cupy
import numpy as np

__all__ = ["EMBER_PHILOX", "EMBER_PHILOX_SRC", "philox"]

EMBER_PHILOX_SRC = r"""
extern "C" __global__ void ember_philox(long long *out, long long n, long long nblocks,
                                        unsigned int k0, unsigned int k1,
                                        unsigned long long base_lo, unsigned long long base_hi)
{
    long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nblocks) return;
    unsigned long long lo = base_lo + (unsigned long long)j;
    unsigned long long hi = base_hi + (lo < base_lo ? 1ull : 0ull);
    unsigned int c0 = (unsigned int)lo, c1 = (unsigned int)(lo >> 32);
    unsigned int c2 = (unsigned int)hi, c3 = (unsigned int)(hi >> 32);
    for (int round = 0; round < 10; round++) {
        unsigned int p0_hi = __umulhi(0xD2511F53u, c0), p0_lo = 0xD2511F53u * c0;
        unsigned int p1_hi = __umulhi(0xCD9E8D57u, c2), p1_lo = 0xCD9E8D57u * c2;
        unsigned int n0 = p1_hi ^ c1 ^ k0, n2 = p0_hi ^ c3 ^ k1;
        c0 = n0; c1 = p1_lo; c2 = n2; c3 = p0_lo;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    unsigned int words[4] = {c0, c1, c2, c3};
    for (int i = 0; i < 4; i++) {
        long long w = 4 * j + i;
        if (w < n) out[w] = (long long)words[i];
    }
}
"""

EMBER_PHILOX = cupy.RawKernel(EMBER_PHILOX_SRC, "ember_philox")

_BLOCK = 256
_M32 = 0xFFFFFFFF


def philox(n: int, key: tuple[int, int], counter: tuple[int, int, int, int], index: int) -> cupy.ndarray:
    """``n`` words (int64 holding uint32 values) from key ``(k0, k1)`` and a 128-bit counter."""
    with cupy.cuda.Device(index):
        out = cupy.empty((n,), np.int64)
        nblocks = (n + 3) // 4
        if nblocks == 0:
            return out
        base_lo = (counter[0] & _M32) | ((counter[1] & _M32) << 32)
        base_hi = (counter[2] & _M32) | ((counter[3] & _M32) << 32)
        args = (
            out,
            np.int64(n),
            np.int64(nblocks),
            np.uint32(key[0] & _M32),
            np.uint32(key[1] & _M32),
            np.uint64(base_lo),
            np.uint64(base_hi),
        )
        EMBER_PHILOX(((nblocks + _BLOCK - 1) // _BLOCK,), (_BLOCK,), args)
        return out
