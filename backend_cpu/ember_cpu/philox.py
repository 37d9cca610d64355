"""Philox-4x32-10 (Salmon et al., SC'11) on NumPy: the counter-based generator of DESIGN.md.

Block j of a call uses the 128-bit counter ``counter + j``; its four output words are
``out[4j:4j+4]``. Every backend must produce exactly these words.
"""

from __future__ import annotations

import numpy as np

__all__ = ["philox"]

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


def _blocks(n: int, counter: tuple[int, int, int, int]) -> list[np.ndarray]:
    base_lo = np.uint64(counter[0] | (counter[1] << 32))
    base_hi = np.uint64(counter[2] | (counter[3] << 32))
    lo = base_lo + np.arange(n, dtype=np.uint64)  # wraps modulo 2**64
    hi = base_hi + (lo < base_lo).astype(np.uint64)
    return [lo & _MASK32, lo >> _SHIFT, hi & _MASK32, hi >> _SHIFT]


def philox(n: int, key: tuple[int, int], counter: tuple[int, int, int, int], index: int) -> np.ndarray:
    """``n`` words (int64 holding uint32 values) from key ``(k0, k1)`` and a 128-bit counter."""
    nblocks = (n + 3) // 4
    c0, c1, c2, c3 = _blocks(nblocks, counter)
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0 = _M0 * c0
            p1 = _M1 * c2
            c0, c1, c2, c3 = (
                (p1 >> _SHIFT) ^ c1 ^ np.uint64(k0),
                p1 & _MASK32,
                (p0 >> _SHIFT) ^ c3 ^ np.uint64(k1),
                p0 & _MASK32,
            )
            k0 = (k0 + _W0) & 0xFFFFFFFF
            k1 = (k1 + _W1) & 0xFFFFFFFF
    out = np.stack([c0, c1, c2, c3], axis=1).astype(np.int64).reshape(-1)
    return out[:n].copy()
