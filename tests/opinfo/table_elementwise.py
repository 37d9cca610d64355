"""Elementwise ops: unary and binary math and ``ember.special``."""

from __future__ import annotations

import ember

from .table_spec import E, Entry, P, U, idx

_A = U(2, 3, lo=-0.8, hi=0.8)  # inside (-1, 1): asin, atanh, erfinv
_UNIT = U(2, 3, lo=0.2, hi=0.8)  # inside (0, 1): logit, ndtri

_UNARY = [
    "abs",
    "absolute",
    "ceil",
    "floor",
    "round",
    "trunc",
    "fix",
    "sign",
    "sgn",
    "neg",
    "negative",
    "positive",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "exp",
    "exp2",
    "expm1",
    "erf",
    "erfc",
    "atan",
    "arctan",
    "asinh",
    "arcsinh",
    "sinh",
    "cosh",
    "square",
    "relu",
    "selu",
    "celu",
    "frac",
    "deg2rad",
    "rad2deg",
    "sinc",
    "nan_to_num",
    "clone",
    "conj_physical",
    "resolve_conj",
    "resolve_neg",
    "i0",
    "conj",
    "ravel",
]
_POSITIVE = ["log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "lgamma", "digamma"]
_INSIDE = ["asin", "arcsin", "acos", "arccos", "atanh", "arctanh", "erfinv"]
_SPECIAL_UNARY = [
    "expit",
    "ndtr",
    "log_ndtr",
    "erfcx",
    "i0e",
    "i1",
    "i1e",
    "spherical_bessel_j0",
    "sinc",
    "i0",
]
_SPECIAL_POSITIVE = ["entr", "psi", "gammaln"]
# PyTorch has no double backward for this one (its first derivative is a formula of its own).
_NO_TORCH_GRAD = {"special.spherical_bessel_j0"}

_BINARY = [
    "add",
    "sub",
    "subtract",
    "mul",
    "multiply",
    "atan2",
    "arctan2",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "hypot",
    "logaddexp",
    "logaddexp2",
    "copysign",
]

_POLY = ["t", "u", "v", "w"]


def _polys() -> list[Entry]:
    """Orthogonal polynomials of degree 3: PyTorch does not differentiate them."""
    out = [
        E(f"special.{kind}chebyshev_polynomial_{k}", U(2, 3, lo=0.1, hi=0.9), 3, gradgrad=False)
        for kind in ("", "shifted_")
        for k in _POLY
    ]
    for name in ("hermite_polynomial_h", "hermite_polynomial_he", "legendre_polynomial_p"):
        out.append(E(f"special.{name}", U(2, 3), 3, gradgrad=False))
    out.append(E("special.laguerre_polynomial_l", P(2, 3), 3, gradgrad=False))
    return out


ENTRIES: list[Entry] = [
    *(E(n) for n in _UNARY),
    *(E(n, P(2, 3)) for n in _POSITIVE),
    *(E(n, _A) for n in _INSIDE),
    E("acosh", P(2, 3, lo=1.2, hi=2.0)),
    E("arccosh", P(2, 3, lo=1.2, hi=2.0)),
    E("logit", _UNIT),
    E("special.logit", _UNIT),
    E("special.ndtri", _UNIT),
    *(E(f"special.{n}", gradgrad=f"special.{n}" not in _NO_TORCH_GRAD) for n in _SPECIAL_UNARY),
    *(E(f"special.{n}", P(2, 3), gradgrad=f"special.{n}" not in _NO_TORCH_GRAD) for n in _SPECIAL_POSITIVE),
    E("polygamma", 1, P(2, 3)),
    E("mvlgamma", P(2, 3, lo=2.0, hi=3.0), 2),
    E("special.multigammaln", P(2, 3, lo=2.0, hi=3.0), 2),
    E("round", case="decimals", decimals=1),
    *(E(n, U(2, 3), U(2, 3)) for n in _BINARY),
    E("add", U(2, 3), U(3), case="broadcast_alpha", alpha=2.5),
    E("rsub", U(2, 3), U(2, 3)),
    *(E(n, U(2, 3), P(2, 3)) for n in ("div", "divide", "true_divide")),
    E("div", U(2, 3), P(2, 3), case="floor", rounding_mode="floor"),
    E("pow", P(2, 3), U(2, 3)),
    E("pow", U(2, 3), 3, case="scalar_exponent"),
    E("float_power", P(2, 3), U(2, 3)),
    E("xlogy", U(2, 3), P(2, 3)),
    E("special.xlog1py", U(2, 3), P(2, 3)),
    E("remainder", U(2, 3), P(2, 3, lo=1.5, hi=2.0)),
    E("fmod", U(2, 3), P(2, 3, lo=1.5, hi=2.0)),
    E("lerp", U(2, 3), U(2, 3), 0.3),
    E("lerp", U(2, 3), U(2, 3), U(2, 3), case="tensor_weight"),
    E("addcmul", U(2, 3), U(2, 3), U(2, 3), value=0.5),
    E("addcdiv", U(2, 3), U(2, 3), P(2, 3), value=0.5),
    E("clamp", U(2, 3), -0.5, 0.5),
    E("clamp", U(2, 3), U(2, 3), U(2, 3), case="tensor_bounds"),
    E("clip", U(2, 3), -0.5, 0.5),
    E("clamp_min", U(2, 3), 0.05),
    E("clamp_max", U(2, 3), 0.05),
    E("ldexp", U(2, 3), idx([[1, 2, 0], [3, -1, 2]])),
    E("where", U(2, 3), U(2, 3), fn=lambda a, b: ember.where(a > 0, a, b)),
    E("masked_fill", U(2, 3), ember.tensor([[True, False, True], [False, False, True]]), 0.5),
    # PyTorch differentiates only the second argument of these (the first: not_implemented).
    E(
        "igamma",
        U(2, 3, lo=1.0, hi=2.0),
        fn=lambda x: ember.igamma(ember.full((2, 3), 1.5, dtype=ember.float64), x),
        gradgrad=False,
    ),
    E(
        "igammac",
        U(2, 3, lo=1.0, hi=2.0),
        fn=lambda x: ember.igammac(ember.full((2, 3), 1.5, dtype=ember.float64), x),
        gradgrad=False,
    ),
    E(
        "special.gammainc",
        U(2, 3, lo=1.0, hi=2.0),
        fn=lambda x: ember.special.gammainc(ember.full((2, 3), 1.5, dtype=ember.float64), x),
        gradgrad=False,
    ),
    E(
        "special.gammaincc",
        U(2, 3, lo=1.0, hi=2.0),
        fn=lambda x: ember.special.gammaincc(ember.full((2, 3), 1.5, dtype=ember.float64), x),
        gradgrad=False,
    ),
    E(
        "special.zeta",
        U(2, 3, lo=1.0, hi=2.0),
        fn=lambda q: ember.special.zeta(ember.full((2, 3), 3.0, dtype=ember.float64), q),
        gradgrad=False,
    ),
    *_polys(),
]
