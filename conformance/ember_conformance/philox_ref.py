"""A plain-Python Philox-4x32-10 and the Random123 known-answer vectors.

Independent of every backend (the CPU backend included), so a shared mistake cannot pass.
Block j of a call uses the 128-bit counter ``counter + j`` (wrapping at 2**128); its four
output words are ``out[4j:4j+4]``, truncated to ``n`` words.
"""

from __future__ import annotations

import numpy as np

__all__ = ["KAT", "philox_words"]

_M0, _M1 = 0xD2511F53, 0xCD9E8D57
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK = 0xFFFFFFFF

# (key, counter, the four words) from Random123's kat_vectors for philox4x32_10.
KAT = [
    ((0, 0), (0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((_MASK, _MASK), (_MASK,) * 4, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0xA4093822, 0x299F31D0),
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


def _block(key: tuple[int, int], ctr: list[int]) -> list[int]:
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0, p1 = _M0 * c0, _M1 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & _MASK, (p0 >> 32) ^ c3 ^ k1, p0 & _MASK
        k0, k1 = (k0 + _W0) & _MASK, (k1 + _W1) & _MASK
    return [c0, c1, c2, c3]


def philox_words(n: int, key: tuple[int, int], counter: tuple[int, int, int, int]) -> np.ndarray:
    """``n`` words as uint32 (slow: meant for a few thousand words); the kernel gives them as int64."""
    base = sum((w & _MASK) << (32 * i) for i, w in enumerate(counter))
    key = (key[0] & _MASK, key[1] & _MASK)
    out: list[int] = []
    for j in range((n + 3) // 4):
        c = (base + j) % (1 << 128)
        out += _block(key, [(c >> (32 * i)) & _MASK for i in range(4)])
    return np.array(out[:n], dtype=np.uint32)
