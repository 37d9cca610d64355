"""Records for the elementwise primitives: unary math, binary math, comparisons, where."""

from __future__ import annotations

import math

import numpy as np

from .dtypes import ALL, BOOL, COMPLEX, FLOATS, INTS, REAL, SIGNED
from .records import OpCase, Sample
from .samples import binary_samples, contig, layout_variants, scalar, unary_samples, values

__all__ = ["RECORDS"]

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _real_of(dtype: str) -> str:
    return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)


def _bool(dtype: str) -> str:
    return "bool"


def _unary(op: str, ref, dtypes, why: str, domain: str = "any", special: bool = True, **kw) -> OpCase:
    return OpCase(op, unary_samples(domain, special), ref, dtypes, why, **kw)


def _binary(op: str, ref, dtypes, why: str, a: str = "any", b: str = "any", **kw) -> OpCase:
    nan, limits = kw.pop("with_nan", False), kw.pop("limits", False)
    return OpCase(op, binary_samples(a, b, with_nan=nan, limits=limits), ref, dtypes, why, **kw)


def _compare_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """Binary samples plus a case where half the elements tie, so eq/le see equality."""
    out = binary_samples("small", "small", with_nan=True, limits=True)(dtype, rng)
    a = values(rng, (8,), dtype, "small")
    b = values(rng, (8,), dtype, "small")
    b[::2] = a[::2]
    return out + [Sample("ties", (contig(a), contig(b)))]


def _where_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """Condition, then-branch and else-branch each through every layout, plus scalars."""
    conds = layout_variants(rng, "bool", "any")
    xs = layout_variants(rng, dtype, "any")
    ys = layout_variants(rng, dtype, "any")
    # pair each condition layout with a different layout of the same shape for the else-branch
    other = {0: 3, 1: 1, 2: 2, 3: 4, 4: 5, 5: 0}
    out = [Sample(label, (conds[i][1], xs[i][1], ys[other[i]][1])) for i, (label, _) in enumerate(conds)]
    c = contig(values(rng, (3, 4), "bool"))
    out.append(Sample("scalar-a", (c, scalar(rng, dtype), contig(values(rng, (3, 4), dtype)))))
    out.append(Sample("scalar-b", (c, contig(values(rng, (3, 4), dtype)), scalar(rng, dtype))))
    return out


_NUM = INTS + FLOATS + COMPLEX
_FC = FLOATS + COMPLEX

RECORDS = [
    _unary(
        "neg",
        np.negative,
        SIGNED + FLOATS + COMPLEX,
        "not bool (torch refuses); uint8 negation wraps, which the frontend does not ask for",
    ),
    _unary("abs", np.abs, _NUM, "every number type; complex gives its real dtype", out_dtype=_real_of),
    _unary("exp", np.exp, _FC, "floating and complex (the frontend casts ints to float first)"),
    _unary("log", np.log, _FC, "floating and complex", domain="pos"),
    _unary("sqrt", np.sqrt, _FC, "floating and complex", domain="pos"),
    _unary("sin", np.sin, _FC, "floating and complex"),
    _unary("cos", np.cos, _FC, "floating and complex"),
    _unary("tanh", np.tanh, _FC, "floating and complex"),
    _unary("erf", _erf, FLOATS, "real floating only (no complex erf in PyTorch)", tol_scale=2.0),
    _unary("floor", np.floor, FLOATS, "real floating only (floor of an integer is the frontend's no-op)"),
    _binary("add", np.add, _NUM, "every number type; bool + bool is the frontend's logical or", limits=True),
    _binary("sub", np.subtract, _NUM, "every number type (PyTorch refuses bool)", limits=True),
    _binary("mul", np.multiply, _NUM, "every number type; bool is the frontend's logical and", limits=True),
    _binary(
        "div", np.true_divide, _FC, "true division: the frontend promotes ints to float", b="pos", limits=True
    ),
    _binary(
        "floordiv",
        np.floor_divide,
        REAL,
        "real numbers; divisors are powers of two so a/b is exact",
        b="pow2",
    ),
    _binary(
        "pow",
        np.power,
        _NUM,
        "ints with exponents >= 0, floats with positive bases, complex",
        a="pos",
        b="exp",
        tol_scale=2.0,
    ),
    _binary("maximum", np.maximum, BOOL + REAL, "ordered types; NaN propagates", with_nan=True, limits=True),
    _binary("minimum", np.minimum, BOOL + REAL, "ordered types; NaN propagates", with_nan=True, limits=True),
    _binary("bitwise_and", np.bitwise_and, BOOL + INTS, "bool and integers only", limits=True),
    _binary("bitwise_or", np.bitwise_or, BOOL + INTS, "bool and integers only", limits=True),
    _binary("bitwise_xor", np.bitwise_xor, BOOL + INTS, "bool and integers only", limits=True),
    OpCase("eq", _compare_samples, np.equal, ALL, "every dtype", out_dtype=_bool),
    OpCase(
        "lt", _compare_samples, np.less, BOOL + REAL, "ordered types (complex has no order)", out_dtype=_bool
    ),
    OpCase("le", _compare_samples, np.less_equal, BOOL + REAL, "ordered types", out_dtype=_bool),
    OpCase("where", _where_samples, np.where, ALL, "every dtype; the condition is bool"),
]
