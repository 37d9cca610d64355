"""Records for gradient clipping's multi-tensor kernels (``norm_foreach``, ``mul_foreach``) and
the layer-norm pair (``layer_norm``, ``layer_norm_backward``).

``norm_foreach`` takes a list of differently shaped arrays (contiguous, transposed, strided,
empty) for every order ``clip_grad_norm_`` accepts; ``mul_foreach`` writes in place, so its
record's ``call`` returns the written arrays. The layer-norm samples cover one and two
normalized dims, a transposed input, and no weight or bias; the frontend casts half inputs to
float32 before either call, so those records are float32/float64.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .dtypes import COMPLEX, FLOATS
from .records import OpCase, Sample
from .samples import contig, strided, transposed, values

__all__ = ["RECORDS"]

_REAL = {"complex64": "float32", "complex128": "float64"}
_ORDS = (2.0, 1.0, 3.0, math.inf, -math.inf, 0.0)


def _list(rng: np.random.Generator, dtype: str, empty: bool) -> list[Any]:
    out = [contig(values(rng, (3, 5), dtype)), transposed(values(rng, (4, 3), dtype))]
    out += [strided(values(rng, (2, 6), dtype)), contig(values(rng, (), dtype))]
    return out + ([contig(values(rng, (0, 3), dtype))] if empty else [])


def _norm_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """Each order over four arrays (plus an empty one where the norm has an identity)."""
    return [Sample(f"ord={o:g}", (_list(rng, dtype, not math.isinf(o)), o)) for o in _ORDS]


def _norm_ref(arrays: list[np.ndarray], ord: float) -> np.ndarray:
    def one(a: np.ndarray) -> float:
        m = np.abs(a).reshape(-1)
        if ord == 0:
            return float(np.count_nonzero(m))
        return float(np.linalg.norm(m, ord)) if m.size else 0.0

    return np.array([one(a) for a in arrays])


def _norm_magnitude(arrays: list[np.ndarray], ord: float) -> np.ndarray:
    return _norm_ref(arrays, ord)


def _mul_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    quarter = np.full_like(values(rng, (), dtype), 0.25)
    return [
        Sample("scale-down", (_list(rng, dtype, True), contig(quarter))),
        Sample("random", (_list(rng, dtype, True), contig(values(rng, (), dtype)))),
    ]


def _mul_call(kernel, arrays, s):  # type: ignore[no-untyped-def]
    kernel(arrays, s)
    return tuple(arrays)


def _mul_ref(arrays: list[np.ndarray], s: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(a * s for a in arrays)


def _ln_stats(x: np.ndarray, k: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    dims = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=dims, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=dims, keepdims=True) + eps)
    return mean, rstd


def _ln_inputs(rng: np.random.Generator, dtype: str) -> list[tuple[str, np.ndarray, int, bool, bool, bool]]:
    """(label, x, k, weight?, bias?, transposed x?)."""
    return [
        ("rows", values(rng, (6, 8), dtype), 1, True, True, False),
        ("two-dims", values(rng, (2, 3, 4), dtype), 2, True, True, False),
        ("transposed", values(rng, (5, 4), dtype), 1, True, True, True),
        ("no-affine", values(rng, (3, 7), dtype), 1, False, False, False),
        ("weight-only", values(rng, (2, 2, 5), dtype), 1, True, False, False),
        ("one-row", values(rng, (9,), dtype), 1, True, True, False),
    ]


def _x(x: np.ndarray, t: bool) -> Any:
    return transposed(x) if t else contig(x)


def _ln_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = []
    for label, x, k, hw, hb, t in _ln_inputs(rng, dtype):
        shape = x.shape[x.ndim - k :]
        w = contig(values(rng, shape, dtype)) if hw else None
        b = contig(values(rng, shape, dtype)) if hb else None
        out.append(Sample(label, (_x(x, t), w, b, k, 1e-5)))
    return out


def _ln_ref(x: np.ndarray, w: Any, b: Any, k: int, eps: float) -> tuple[np.ndarray, ...]:
    mean, rstd = _ln_stats(x, k, eps)
    out = (x - mean) * rstd
    out = out * w if w is not None else out
    return (out + b if b is not None else out), mean, rstd


def _ln_bwd_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = []
    for label, x, k, hw, _hb, t in _ln_inputs(rng, dtype):
        shape = x.shape[x.ndim - k :]
        w = contig(values(rng, shape, dtype)) if hw else None
        mean, rstd = _ln_stats(x.astype(np.float64), k, 1e-5)
        stats = (contig(mean.astype(x.dtype)), contig(rstd.astype(x.dtype)))
        g = values(rng, x.shape, dtype)
        out.append(Sample(label, (contig(g), _x(x, t), w, *stats, k), out_dtype=(dtype,) * (3 if hw else 2)))
    return out


def _ln_bwd_call(kernel, g, x, w, mean, rstd, k):  # type: ignore[no-untyped-def]
    dx, dw, db = kernel(g, x, w, mean, rstd, k)
    return (dx, db) if dw is None else (dx, dw, db)


def _ln_bwd_ref(g: np.ndarray, x: np.ndarray, w: Any, mean: np.ndarray, rstd: np.ndarray, k: int) -> tuple:
    dims, rows = tuple(range(x.ndim - k, x.ndim)), tuple(range(x.ndim - k))
    xhat = (x - mean) * rstd
    gw = g if w is None else g * w
    dx = (gw - gw.mean(axis=dims, keepdims=True) - xhat * (gw * xhat).mean(axis=dims, keepdims=True)) * rstd
    db = g.sum(axis=rows)
    return (dx, db) if w is None else (dx, (g * xhat).sum(axis=rows), db)


_F = ("float32", "float64")

RECORDS = [
    OpCase(
        "norm_foreach",
        _norm_samples,
        _norm_ref,
        FLOATS + COMPLEX,
        "floating and complex gradients; a list of one dtype",
        out_dtype=lambda d: _REAL.get(d, d),
        tol_scale=4.0,
        magnitude=_norm_magnitude,
    ),
    OpCase(
        "mul_foreach",
        _mul_samples,
        _mul_ref,
        FLOATS + COMPLEX,
        "floating and complex gradients; a list of one dtype",
        out_dtype=lambda d: (d,) * 5,
        call=_mul_call,
    ),
    OpCase(
        "layer_norm",
        _ln_samples,
        _ln_ref,
        _F,
        "the frontend computes half inputs in float32",
        out_dtype=lambda d: (d, d, d),
        tol_scale=4.0,
    ),
    OpCase(
        "layer_norm_backward",
        _ln_bwd_samples,
        _ln_bwd_ref,
        _F,
        "the frontend computes half inputs in float32",
        out_dtype=lambda d: (d, d, d),
        tol_scale=8.0,
        call=_ln_bwd_call,
    ),
]
