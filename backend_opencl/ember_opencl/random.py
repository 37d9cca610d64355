"""Philox-4x32-10 on the device, a port of ember_cpu/philox.py (bit-identical words).

Work item j computes block j from the 128-bit counter ``counter + j`` (carry from the low
64 bits into the high 64) and writes words 4j..4j+3, the same layout as the CPU backend,
each word as an int64 in [0, 2**32) (ops.py: ember has no uint32 dtype).
"""

from __future__ import annotations

import numpy as np
from ember.backends import DTYPES_BY_NAME

from . import runtime
from .clarray import CLArray, empty

__all__ = ["philox"]

EMBER_PHILOX_SRC = """
__kernel void ember_philox(__global long *out, long n, long nblocks, uint k0, uint k1,
                           ulong base_lo, ulong base_hi)
{
    long j = get_global_id(0);
    if (j >= nblocks) return;
    ulong lo = base_lo + (ulong)j;
    ulong hi = base_hi + (lo < base_lo ? 1 : 0);
    uint c0 = (uint)lo, c1 = (uint)(lo >> 32), c2 = (uint)hi, c3 = (uint)(hi >> 32);
    for (int round = 0; round < 10; round++) {
        uint p0_hi = mul_hi(0xD2511F53u, c0), p0_lo = 0xD2511F53u * c0;
        uint p1_hi = mul_hi(0xCD9E8D57u, c2), p1_lo = 0xCD9E8D57u * c2;
        uint n0 = p1_hi ^ c1 ^ k0, n2 = p0_hi ^ c3 ^ k1;
        c0 = n0; c1 = p1_lo; c2 = n2; c3 = p0_lo;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    uint words[4] = {c0, c1, c2, c3};
    for (int i = 0; i < 4; i++) {
        long w = 4 * j + i;
        if (w < n) out[w] = (long)words[i];
    }
}
"""


def philox(n: int, key: tuple[int, int], counter: tuple[int, int, int, int], index: int) -> CLArray:
    """``n`` words (int64 holding uint32 values) from key ``(k0, k1)`` and a 128-bit counter."""
    dev = runtime.device(index)
    out = empty(dev, (n,), DTYPES_BY_NAME["int64"])
    nblocks = (n + 3) // 4
    spec = (
        EMBER_PHILOX_SRC,
        "ember_philox",
        [None, np.int64, np.int64, np.uint32, np.uint32, np.uint64, np.uint64],
    )
    knl = runtime.kernel(dev, ("philox",), lambda: spec)
    m = 0xFFFFFFFF
    base_lo = (counter[0] & m) | ((counter[1] & m) << 32)
    base_hi = (counter[2] & m) | ((counter[3] & m) << 32)
    runtime.launch(dev, knl, nblocks, [out.buf, n, nblocks, key[0] & m, key[1] & m, base_lo, base_hi])
    return out
