"""Records for the attention composites (``sdpa`` and ``sdpa_backward``), with float64
references written from the definition: scores, masks, softmax, dropout factors, products.

Samples cover a bool mask broadcast with ``expand``, an additive mask with -inf entries, the
causal mask with more queries than keys (rows with nothing to attend give zeros), dropout
factors and a strided query; the backward samples take the weights the reference forward
computes from the same inputs (as the frontend passes the forward's own weights).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import FLOATS
from .records import OpCase, Sample
from .samples import contig, expanded, strided, values

__all__ = ["RECORDS"]


def _f(a: Any) -> Any:
    return None if a is None else np.asarray(a, np.float64)


def _weights(q: Any, k: Any, mask: Any, scale: float, causal: bool) -> np.ndarray:
    s = np.einsum("...ie,...je->...ij", _f(q), _f(k)) * scale
    if mask is not None:
        m = np.asarray(mask)
        s = np.where(m, s, -np.inf) if m.dtype == np.bool_ else s + _f(m)
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    w = np.zeros_like(s)
    rows = np.isfinite(s).any(-1)  # a query with no key to attend keeps zeros
    if rows.any():
        e = np.exp(s[rows] - s[rows].max(-1, keepdims=True))
        w[rows] = e / e.sum(-1, keepdims=True)
    return w


def _sdpa(q: Any, k: Any, v: Any, mask: Any, drop: Any, scale: float, causal: bool) -> tuple:
    w = _weights(q, k, mask, scale, causal)
    wd = w if drop is None else w * _f(drop)
    return wd @ _f(v), w


def _sdpa_backward(g: Any, q: Any, k: Any, v: Any, w: Any, drop: Any, scale: float) -> tuple:
    g, q, k, v, w, drop = (_f(a) for a in (g, q, k, v, w, drop))
    wd = w if drop is None else w * drop
    dp = g @ np.swapaxes(v, -1, -2)
    if drop is not None:
        dp = dp * drop
    ds = w * (dp - (dp * w).sum(-1, keepdims=True)) * scale
    return ds @ k, np.swapaxes(ds, -1, -2) @ q, np.swapaxes(wd, -1, -2) @ g


def _cases(dtype: str, rng: np.random.Generator) -> list[tuple[str, tuple, bool]]:
    """(label, (q, k, v, mask, drop, scale, causal) as host arrays, strided q)."""

    def v(*shape: int) -> np.ndarray:
        return values(rng, shape, dtype, "small")

    allowed = rng.random((4, 5)) < 0.7
    allowed[:, 0] = True
    additive = np.where(rng.random((2, 3, 4, 5)) < 0.8, v(2, 3, 4, 5), -np.inf).astype(v(1).dtype)
    keep = (rng.random((2, 3, 4, 5)) >= 0.4) / 0.6
    return [
        ("basic", (v(2, 3, 4, 8), v(2, 3, 5, 8), v(2, 3, 5, 6), None, None, 0.35, False), False),
        (
            "bool-mask-expand",
            (v(2, 3, 4, 8), v(2, 3, 5, 8), v(2, 3, 5, 6), allowed, None, 0.35, False),
            False,
        ),
        ("additive-mask", (v(2, 3, 4, 8), v(2, 3, 5, 8), v(2, 3, 5, 6), additive, None, 0.5, False), False),
        ("causal-empty-rows", (v(3, 6, 4), v(3, 4, 4), v(3, 4, 2), None, None, 0.5, True), False),
        (
            "drop",
            (v(2, 3, 4, 8), v(2, 3, 5, 8), v(2, 3, 5, 6), None, keep.astype(v(1).dtype), 0.35, False),
            False,
        ),
        ("strided-q", (v(2, 4, 8), v(2, 4, 8), v(2, 4, 8), None, None, 0.35, True), True),
        ("no-batch", (v(5, 3), v(7, 3), v(7, 4), None, None, 1.0, False), False),
        ("no-keys", (v(2, 3, 8), v(2, 0, 8), v(2, 0, 6), None, None, 0.35, False), False),
    ]


def _mask_arg(mask: Any, full: tuple[int, ...]) -> Any:
    if mask is None:
        return None
    return contig(mask) if mask.shape == full else expanded(mask, full)


def _forward_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = []
    for label, (q, k, v, mask, drop, scale, causal), step in _cases(dtype, rng):
        full = (*q.shape[:-1], k.shape[-2])
        qt = strided(q) if step else contig(q)
        args = (qt, contig(k), contig(v), _mask_arg(mask, full), None if drop is None else contig(drop))
        out.append(Sample(label, (*args, scale, causal)))
    return out


def _backward_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = []
    for label, (q, k, v, mask, drop, scale, causal), step in _cases(dtype, rng):
        o, w = _sdpa(q, k, v, mask, drop, scale, causal)
        g = values(rng, o.shape, dtype, "small")
        w = w.astype(q.dtype)
        gt = strided(g) if step else contig(g)
        d = None if drop is None else contig(drop)
        out.append(Sample(label, (gt, contig(q), contig(k), contig(v), contig(w), d, scale)))
    return out


def _two(dtype: str) -> tuple[str, str]:
    return dtype, dtype


def _three(dtype: str) -> tuple[str, str, str]:
    return dtype, dtype, dtype


_WHY = "real floating; attention over the last two dims (half types may compute in float32)"

RECORDS = [
    OpCase("sdpa", _forward_samples, _sdpa, FLOATS, _WHY, out_dtype=_two, tol_scale=8.0),
    OpCase("sdpa_backward", _backward_samples, _sdpa_backward, FLOATS, _WHY, out_dtype=_three, tol_scale=8.0),
]
