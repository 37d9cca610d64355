"""Philox-4x32-10 (Salmon et al., SC'11) on NumPy: the counter-based generator of DESIGN.md.

Block j of a call uses the 128-bit counter ``counter + j``; its four output words are
``out[4j:4j+4]``. Every backend must produce exactly these words.

A round's two products and their halves are one (2, blocks) array each: three in-place ufunc
calls per round. Long draws run in chunks of blocks whose arrays stay in L2. Small draws pay
mostly the thirty calls' fixed cost, so a draw that continues the previous one (the next
counter of the same key: a training loop's dropout masks) reads ahead: one chunk is computed
and the following draws are cut from it. The words are a pure function of key and counter,
so reading ahead changes no result.
"""

from __future__ import annotations

import numpy as np

__all__ = ["philox"]

_U64 = np.uint64
_MUL = np.array([[0xD2511F53], [0xCD9E8D57]], _U64)  # multiplies (c0, c2)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_ROUNDS = 10
_CHUNK = 8192  # blocks per pass (their round arrays, ~200 KB, stay in L2)
_AHEAD = 8192  # blocks computed at once for a draw that continues the previous one
_MASK128 = (1 << 128) - 1

# (key, first counter, words as uint32) of the last read-ahead, and the key and counter the
# last draw ended at. Replaced whole (one reference store), so threads never see half a state.
_ahead: tuple[tuple[int, int], int, np.ndarray] | None = None
_last_end: tuple[tuple[int, int], int] | None = None


def _keys(key: tuple[int, int]) -> np.ndarray:
    """The ten round keys as (10, 2, 1): (k0, k1) bumped by the Weyl constants each round."""
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    ks = [((k0 + r * _W0) & 0xFFFFFFFF, (k1 + r * _W1) & 0xFFFFFFFF) for r in range(_ROUNDS)]
    return np.array(ks, np.uint32).reshape(_ROUNDS, 2, 1)


def _blocks(nb: int, key: tuple[int, int], start: int) -> np.ndarray:
    """(nb, 4) uint32: the words of blocks ``start .. start + nb - 1`` (counters mod 2**128)."""
    out = np.empty((nb, 4), np.uint32)
    ks = _keys(key)
    step = max(1, min(nb, _CHUNK))
    ctr = np.empty((2, step), _U64)  # (lo, hi) 64-bit halves of each block's counter
    p = np.empty((2, 2, step), _U64)  # two product buffers: a round reads the previous one's low words
    ramp = np.arange(step, dtype=_U64)
    for s in range(0, nb, step):
        m = min(step, nb - s)
        first = (start + s) & _MASK128
        lo, hi = _U64(first & 0xFFFFFFFFFFFFFFFF), _U64(first >> 64)
        c = ctr[:, :m]
        np.add(lo, ramp[:m], out=c[0])  # wraps modulo 2**64
        np.add(hi, c[0] < lo, out=c[1], casting="unsafe")
        halves = c.view(np.uint32).reshape(2, m, 2)  # little-endian: [..., 0] low, [..., 1] high word
        a = np.ascontiguousarray(halves[..., 0])  # (c0, c2): the words the round multiplies
        b = halves[..., 1]  # (c1, c3)
        for r in range(_ROUNDS):
            prod = p[r & 1, :, :m]
            np.multiply(a, _MUL, out=prod, dtype=_U64)  # p0 = M0 * c0, p1 = M1 * c2: exact in 64 bits
            words = prod.view(np.uint32).reshape(2, m, 2)[::-1]  # (p1, p0) as (low, high) words
            np.bitwise_xor(words[..., 1], b, out=a)  # c0 = hi(p1) ^ c1 ^ k0, c2 = hi(p0) ^ c3 ^ k1
            a ^= ks[r]
            b = words[..., 0]  # c1 = lo(p1), c3 = lo(p0)
        o = out[s : s + m]
        o[:, 0::2] = a.T
        o[:, 1::2] = b.T
    return out


def philox(n: int, key: tuple[int, int], counter: tuple[int, int, int, int], index: int) -> np.ndarray:
    """``n`` words (int64 holding uint32 values) from key ``(k0, k1)`` and a 128-bit counter."""
    global _ahead, _last_end
    nb = (n + 3) // 4
    key = (key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF)
    start = counter[0] | (counter[1] << 32) | (counter[2] << 64) | (counter[3] << 96)
    ahead, last = _ahead, _last_end
    _last_end = (key, start + nb)
    if ahead is not None and ahead[0] == key and 0 <= start - ahead[1] <= len(ahead[2]) - nb:
        i = 4 * (start - ahead[1])
        return ahead[2].reshape(-1)[i : i + n].astype(np.int64)
    if nb < _AHEAD and last == (key, start):  # continues the last draw: read ahead
        words = _blocks(_AHEAD, key, start)
        _ahead = (key, start, words)
        return words.reshape(-1)[:n].astype(np.int64)
    return _blocks(nb, key, start).reshape(-1)[:n].astype(np.int64)
