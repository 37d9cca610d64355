"""max_pool2d against a window-by-window reference: maxima and the flat index of the first
maximum (row-major), with the in-plane offsets the kernel computes directly when every
window lies inside the input, and the window positions otherwise (padding, ceil_mode)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ember_cpu.nn_kernels import max_pool2d

Pair = tuple[int, int]


def _reference(
    x: np.ndarray, k: Pair, s: Pair, p: Pair, d: Pair, ceil: bool
) -> tuple[np.ndarray, np.ndarray]:
    h, w = x.shape[-2:]

    def out(n: int, a: int) -> int:
        span = (n + 2 * p[a] - d[a] * (k[a] - 1) - 1) / s[a]
        o = (math.ceil(span) if ceil else math.floor(span)) + 1
        return o - 1 if ceil and (o - 1) * s[a] >= n + p[a] else o

    oh, ow = out(h, 0), out(w, 1)
    best = np.empty(x.shape[:-2] + (oh, ow), x.dtype)
    idx = np.empty(best.shape, np.int64)
    for lead in np.ndindex(*x.shape[:-2]):
        for r in range(oh):
            for c in range(ow):
                cells = [
                    (r * s[0] - p[0] + i * d[0], c * s[1] - p[1] + j * d[1])
                    for i in range(k[0])
                    for j in range(k[1])
                ]
                cells = [(a, b) for a, b in cells if 0 <= a < h and 0 <= b < w]
                vals = [x[lead + cell] for cell in cells]
                first = max(range(len(vals)), key=lambda q: (vals[q], -q))  # the first maximum
                best[lead + (r, c)] = vals[first]
                idx[lead + (r, c)] = cells[first][0] * w + cells[first][1]
    return best, idx


CASES = [  # (shape, kernel, stride, padding, dilation, ceil_mode)
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((2, 3, 9, 7), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((1, 2, 9, 9), (3, 3), (2, 2), (1, 1), (1, 1), False),
    ((1, 2, 9, 10), (3, 2), (2, 3), (0, 0), (1, 1), True),
    ((1, 2, 11, 11), (3, 3), (1, 2), (0, 0), (2, 2), False),
    ((1, 1, 3, 300), (2, 2), (1, 1), (0, 0), (1, 1), False),  # offsets past int8: 300 + 1
    ((2, 2, 7, 8), (1, 3), (1, 2), (0, 1), (1, 1), False),  # one kernel row
    ((2, 2, 8, 7), (3, 1), (2, 1), (1, 0), (1, 1), True),  # one kernel column
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("values", ["distinct", "ties"])
def test_max_pool2d_matches_the_window_reference(case: tuple, values: str) -> None:
    shape, k, s, p, d, ceil = case
    rng = np.random.default_rng(5)
    if values == "ties":  # equal maxima in most windows: the first in row-major order wins
        x = rng.integers(0, 2, shape).astype(np.float32)
    else:
        x = rng.standard_normal(shape).astype(np.float32)
    best, idx = max_pool2d(x, k, s, p, d, ceil)
    want_best, want_idx = _reference(x, k, s, p, d, ceil)
    assert idx.dtype == np.int64 and best.dtype == x.dtype
    np.testing.assert_array_equal(best, want_best)
    np.testing.assert_array_equal(idx, want_idx)
