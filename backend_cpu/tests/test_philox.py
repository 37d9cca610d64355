"""The CPU Philox kernel's chunks and read-ahead give exactly the words of one-block draws
(each a single fresh computation at its own counter; tests/test_random.py holds the
Random123 known answers for those)."""

from __future__ import annotations

import numpy as np
import pytest
from ember_cpu import philox as P

_M32 = 0xFFFFFFFF


def _ctr(off: int) -> tuple[int, int, int, int]:
    off &= (1 << 128) - 1
    return (off & _M32, (off >> 32) & _M32, (off >> 64) & _M32, (off >> 96) & _M32)


def _word(key: tuple[int, int], off: int, i: int) -> int:
    """Word ``i`` of a draw at block counter ``off``, computed as a one-block draw."""
    return int(P._blocks(1, key, (off + i // 4) & ((1 << 128) - 1))[0, i % 4])


def _check(got: np.ndarray, key: tuple[int, int], off: int) -> None:
    """Every word of the first and last blocks and of those around each chunk boundary."""
    n = len(got)
    near = {i for c in range(0, n, 4 * P._CHUNK) for i in range(c - 8, c + 8)}
    for i in sorted(near | set(range(8)) | set(range(n - 8, n))):
        if 0 <= i < n:
            assert int(got[i]) == _word(key, off, i), i


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch):
    monkeypatch.setattr(P, "_ahead", None)
    monkeypatch.setattr(P, "_last_end", None)


@pytest.mark.parametrize("n", [0, 1, 5, 4 * P._CHUNK - 1, 4 * P._CHUNK + 9])
@pytest.mark.parametrize("off", [0, 2**64 - 3, 2**128 - 2])  # carries into the high half; wraps
def test_one_draw_over_chunk_and_carry_boundaries(n, off):
    got = P.philox(n, (0xA4093822, 0x299F31D0), _ctr(off), 0)
    assert got.dtype == np.int64 and got.shape == (n,)
    _check(got, (0xA4093822, 0x299F31D0), off)


def test_sequential_small_draws_read_ahead_and_equal_one_long_draw():
    key, sizes, off, got = (3, 4), [6400, 8000, 6, 6400, 1, 8000, 6400] * 3, 2**64 - 5000, []
    for n in sizes:
        w = P.philox(n, key, _ctr(off), 0)
        got.append(w.copy())
        w[:] = -1  # the caller owns its words: writing them must not change later draws
        off += (n + 3) // 4
    assert P._ahead is not None  # the loop did read ahead
    P._ahead = P._last_end = None
    ref = P.philox(4 * (off - (2**64 - 5000)), key, _ctr(2**64 - 5000), 0)  # one long draw
    _check(ref, key, 2**64 - 5000)
    pos = 0
    for n, w in zip(sizes, got):
        assert np.array_equal(w, ref[pos : pos + n])
        pos += 4 * ((n + 3) // 4)


def test_read_ahead_serves_only_its_own_key_and_counters():
    P.philox(8, (1, 2), _ctr(0), 0)
    P.philox(8, (1, 2), _ctr(2), 0)  # continues: reads ahead from counter 2
    for key, off in [((1, 3), 4), ((1, 2), 1), ((1, 2), 4), ((1, 2), 2 + P._AHEAD - 1), ((7, 2), 2)]:
        _check(P.philox(8, key, _ctr(off), 0), key, off)
