"""The record for ``relu_backward``: the output gradient where relu's output is not ``<= 0``,
else 0, as PyTorch's ``threshold_backward(g, out, 0)``.

``out`` is a real relu output (random values with the negatives set to 0, so about half the
mask is off) over the layouts the frontend passes: transposed, strided, a broadcast ``g``
(``sum().backward()`` gives one), empty, one element, and the edge values, where an inf or
NaN gradient under a 0 output must give 0 (not ``inf * 0``) and a NaN output passes ``g``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import FLOATS
from .records import OpCase, Sample
from .samples import contig, edge_values, expanded, strided, transposed, values

__all__ = ["RECORDS"]


def _samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    def pair(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        x = values(rng, shape, dtype)
        return values(rng, shape, dtype), np.where(x > 0, x, 0).astype(x.dtype)

    g, y = pair((3, 4))
    gt, yt = pair((4, 3))
    gs, ys = pair((3, 4))
    gb, yb = pair((3, 4))
    ge, ye = pair((0, 4))
    g1, y1 = pair(())
    edges = edge_values(dtype)
    # each edge gradient under a 0 output, a positive output and a NaN output
    ge3 = np.stack([edges, edges, edges])
    ye3 = np.zeros_like(ge3)
    ye3[1], ye3[2] = 1.0, np.nan
    return [
        Sample("contig", (contig(g), contig(y))),
        Sample("transposed-out", (contig(gt), transposed(yt))),
        Sample("strided-g", (strided(gs), contig(ys))),
        Sample("broadcast-g", (expanded(gb[:1], gb.shape), contig(yb))),
        Sample("empty", (contig(ge), contig(ye))),
        Sample("scalar", (contig(g1), contig(y1))),
        Sample("edges", (contig(ge3), contig(ye3))),
    ]


def _relu_backward(g: Any, out: Any) -> np.ndarray:
    g, y = np.asarray(g, np.float64), np.asarray(out, np.float64)
    return np.where(y <= 0, 0.0, g)


_WHY = "real floating; relu's output and its gradient"

RECORDS = [OpCase("relu_backward", _samples, _relu_backward, FLOATS, _WHY)]
