"""Records for ``softmax_backward`` and ``log_softmax_backward``: x's gradient from the
forward's output and the output gradient, with float64 references written from the formulas.

``out`` is a real (log-)softmax of random rows (computed in float64, rounded to the dtype),
as the frontend passes the forward's own output; samples cover the last and first dim, a
transposed ``out``, a strided ``g``, a broadcast ``g`` (``sum().backward()`` gives one), an
empty input and long rows (where a half-precision sum would stall).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import FLOATS
from .records import OpCase, Sample
from .samples import contig, expanded, strided, transposed, values

__all__ = ["RECORDS"]


def _f(a: Any) -> np.ndarray:
    return np.asarray(a, np.float64)


def _log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    z = x - x.max(axis=dim, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=dim, keepdims=True))


def _samples(log: bool) -> Any:
    def make(dtype: str, rng: np.random.Generator) -> list[Sample]:
        def pair(shape: tuple[int, ...], dim: int) -> tuple[np.ndarray, np.ndarray]:
            x = _f(values(rng, shape, dtype, "small"))
            ls = _log_softmax(x, dim) if x.size else x
            out = (ls if log else np.exp(ls)).astype(values(rng, (1,), dtype).dtype)
            return values(rng, shape, dtype, "small"), out

        g, y = pair((3, 4), 1)
        g0, y0 = pair((3, 4), 0)
        gt, yt = pair((4, 3), 0)
        gs, ys = pair((3, 4), 1)
        gb, yb = pair((3, 4), 1)
        ge, ye = pair((0, 4), 1)
        gl, yl = pair((2, 2049), 1)
        return [
            Sample("dim1", (contig(g), contig(y), 1)),
            Sample("dim0", (contig(g0), contig(y0), 0)),
            Sample("transposed-out", (contig(gt), transposed(yt), 0)),
            Sample("strided-g", (strided(gs), contig(ys), 1)),
            Sample("broadcast-g", (expanded(gb[:1], gb.shape), contig(yb), 1)),
            Sample("empty", (contig(ge), contig(ye), 1)),
            Sample("long-row", (contig(gl), contig(yl), 1)),
        ]

    return make


def _softmax_backward(g: Any, out: Any, dim: int) -> np.ndarray:
    g, y = _f(g), _f(out)
    return y * (g - (g * y).sum(axis=dim, keepdims=True))


def _log_softmax_backward(g: Any, out: Any, dim: int) -> np.ndarray:
    g, y = _f(g), _f(out)
    return g - np.exp(y) * g.sum(axis=dim, keepdims=True)


def _softmax_mag(g: Any, out: Any, dim: int) -> np.ndarray:
    g, y = np.abs(_f(g)), _f(out)
    return y * (g + (g * y).sum(axis=dim, keepdims=True))


def _log_softmax_mag(g: Any, out: Any, dim: int) -> np.ndarray:
    g, y = np.abs(_f(g)), _f(out)
    return g + np.exp(y) * g.sum(axis=dim, keepdims=True)


_WHY = "real floating; a softmax's output and its gradient (half types may compute in float32)"

RECORDS = [
    OpCase("softmax_backward", _samples(False), _softmax_backward, FLOATS, _WHY, magnitude=_softmax_mag),
    OpCase(
        "log_softmax_backward",
        _samples(True),
        _log_softmax_backward,
        FLOATS,
        _WHY,
        magnitude=_log_softmax_mag,
    ),
]
