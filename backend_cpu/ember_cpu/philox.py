"""Philox-4x32-10 (Salmon et al., SC'11) on NumPy: the counter-based generator of DESIGN.md.

Block j of a call uses the 128-bit counter ``counter + j``; its four output words are
``out[4j:4j+4]``. Every backend must produce exactly these words.

A round's two products and their halves are one (2, blocks) array each: five in-place ufunc
calls per round instead of ten, half the fixed cost on the small draws dropout makes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["philox"]

_U64 = np.uint64
_MUL = np.array([[0xD2511F53], [0xCD9E8D57]], _U64)  # multiplies (c0, c2)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK32 = _U64(0xFFFFFFFF)
_SHIFT = _U64(32)
_ROUNDS = 10


def _keys(key: tuple[int, int]) -> np.ndarray:
    """The ten round keys as (10, 2, 1): (k0, k1) bumped by the Weyl constants each round."""
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    ks = [((k0 + r * _W0) & 0xFFFFFFFF, (k1 + r * _W1) & 0xFFFFFFFF) for r in range(_ROUNDS)]
    return np.array(ks, np.uint32).reshape(_ROUNDS, 2, 1)


def philox(n: int, key: tuple[int, int], counter: tuple[int, int, int, int], index: int) -> np.ndarray:
    """``n`` words (int64 holding uint32 values) from key ``(k0, k1)`` and a 128-bit counter."""
    nb = (n + 3) // 4
    base_lo = _U64(counter[0] | (counter[1] << 32))
    base_hi = _U64(counter[2] | (counter[3] << 32))
    ctr = np.empty((2, nb), _U64)  # (lo, hi) 64-bit halves of each block's counter
    np.add(base_lo, np.arange(nb, dtype=_U64), out=ctr[0])  # wraps modulo 2**64
    np.add(base_hi, ctr[0] < base_lo, out=ctr[1], casting="unsafe")
    halves = ctr.view(np.uint32).reshape(2, nb, 2)  # little-endian: [..., 0] low, [..., 1] high word
    a = np.ascontiguousarray(halves[..., 0])  # (c0, c2): the words the round multiplies
    b = halves[..., 1]  # (c1, c3)
    p = np.empty((2, 2, nb), _U64)  # two product buffers: a round reads the previous one's low words
    for r, k in enumerate(_keys(key)):
        prod = p[r & 1]
        np.multiply(a, _MUL, out=prod, dtype=_U64)  # p0 = M0 * c0, p1 = M1 * c2: exact in 64 bits
        words = prod.view(np.uint32).reshape(2, nb, 2)[::-1]  # (p1, p0) as (low, high) words
        np.bitwise_xor(words[..., 1], b, out=a)  # c0 = hi(p1) ^ c1 ^ k0, c2 = hi(p0) ^ c3 ^ k1
        a ^= k
        b = words[..., 0]  # c1 = lo(p1), c3 = lo(p0)
    out = np.empty((nb, 4), np.int64)
    out[:, 0::2] = a.T
    out[:, 1::2] = b.T
    words_out = out.reshape(-1)
    return words_out if n == 4 * nb else words_out[:n].copy()
