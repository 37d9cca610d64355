"""Records for the composite ops: checked only where a backend overrides them.

Without an override the frontend runs its decomposition into primitives, which the
primitive records already prove; the report lists such composites as not overridden.
"""

from __future__ import annotations

import numpy as np

from .cases_reduce import _argmax_ref, _argmax_samples, _red, reduction_samples
from .dtypes import ALL, BOOL, FLOATS, REAL, SIGNED
from .records import OpCase, Sample
from .samples import binary_samples, contig, layout_variants, transposed, unary_samples, values


def _sign_ref(x: np.ndarray) -> np.ndarray:
    """PyTorch's sign: (x > 0) - (x < 0), so NaN gives 0 (NumPy's np.sign gives NaN)."""
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


__all__ = ["RECORDS"]


def _add_scaled_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """Two operands in every layout (an expanded one too), with alphas exact in float32."""
    pairs = binary_samples(scalars=False)(dtype, rng)
    return [Sample(f"{p.label} alpha={a:g}", (*p.args, a)) for p in pairs for a in (0.375, -2.5)]


def _add_scaled_ref(x: np.ndarray, y: np.ndarray, alpha: float) -> np.ndarray:
    return x + alpha * y


def _round_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """Unary layouts plus exact halves, where round-half-to-even differs from round-half-up."""
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5], dtype=np.float64)
    return unary_samples(special=True)(dtype, rng) + [
        Sample("halves", (contig(halves.astype(values(rng, (), dtype).dtype)),))
    ]


def _softmax_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = [
        Sample(f"{label}-dim1", (t, 1)) for label, t in layout_variants(rng, dtype, "any") if label != "0-d"
    ]
    out.append(Sample("0-d", (contig(values(rng, (), dtype)), 0)))
    out.append(Sample("dim0", (contig(values(rng, (3, 4), dtype)), 0)))
    # Rows of 2049: a float16/bfloat16 sum of exp() stalls far from the row's total, far
    # outside the relative tolerance of ``dtypes``' normalized family.
    out.append(Sample("long-row", (contig(values(rng, (2, 2049), dtype, "pos")), 1)))
    out.append(Sample("long-column-transposed", (transposed(values(rng, (1031, 3), dtype, "pos")), 0)))
    return out


def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    if x.ndim == 0:
        return np.ones_like(x)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True)) if x.size else x
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    if x.ndim == 0:
        return np.zeros_like(x)
    if not x.size:
        return x.copy()
    m = np.max(x, axis=dim, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True))


def _remainder(a: np.ndarray, b: object) -> np.ndarray:
    return np.asarray(a - np.floor_divide(a, b) * b)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _int64(dtype: str) -> str:
    return "int64"


RECORDS = [
    OpCase("clone", unary_samples(special=True), np.copy, ALL, "every dtype"),
    OpCase("ceil", unary_samples(special=True), np.ceil, FLOATS, "real floating"),
    OpCase("trunc", unary_samples(special=True), np.trunc, FLOATS, "real floating"),
    OpCase("round", _round_samples, np.round, FLOATS, "real floating; half to even"),
    OpCase("sign", unary_samples(special=True), _sign_ref, SIGNED + FLOATS, "signed numbers"),
    OpCase("sigmoid", unary_samples(special=True), _sigmoid, FLOATS, "real floating"),
    OpCase("log1p", unary_samples("unit", special=True), np.log1p, FLOATS, "real floating"),
    OpCase("expm1", unary_samples(special=True), np.expm1, FLOATS, "real floating"),
    OpCase("remainder", binary_samples("any", "pow2"), _remainder, REAL, "real numbers; Python's sign rule"),
    OpCase("amin", reduction_samples(empty_dims=(1,), nan=True), _red(np.min), BOOL + REAL, "ordered types"),
    OpCase(
        "argmin",
        _argmax_samples,
        lambda x, d, k: _argmax_ref(x, d, k, np.argmin),
        REAL,
        "real numbers",
        out_dtype=_int64,
    ),
    OpCase(
        "add_scaled",
        _add_scaled_samples,
        _add_scaled_ref,
        ("float32", "float64"),
        "the frontend runs float16/bfloat16 in float32",
    ),
    OpCase("softmax", _softmax_samples, _softmax, FLOATS, "real floating"),
    OpCase("log_softmax", _softmax_samples, _log_softmax, FLOATS, "real floating"),
]
