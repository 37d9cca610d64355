"""Decompositions of the error-function family and the normal distribution's functions.

``erfc`` is ``1 - erf`` below 2 (where that loses under 2e-14 relative) and a 60-term
continued fraction above; the inverses start from Winitzki's closed form (relative error
~2e-3) and take three Halley steps on ``erf`` or ``erfc``, so they are as accurate as those.
"""

from __future__ import annotations

import math

from ._decomp_elementary import work_dtype
from ._ops._composite import decomposition
from ._ops.pointwise_special import copysign
from ._ops.pointwise_unary import abs, erf, exp, isnan, log, log1p, sqrt
from ._ops.select import where
from ._tensor import Tensor

__all__ = ["erfc", "erfcinv"]

_CF_TERMS = 60  # enough for 1 ulp at x >= 2 (checked against scipy.special.erfc)
_CF_FROM = 2.0
_SQRT_PI = math.sqrt(math.pi)
_SQRT2 = math.sqrt(2.0)
_WINITZKI_A = 0.147
_HALLEY_STEPS = 3
_TINY = 1e-290  # below it erfcinv works in logs


def _cf(x: Tensor) -> Tensor:
    """``sqrt(pi) * exp(x^2) * erfc(x)`` for x >= 2, as 1 / (x + (1/2) / (x + 1 / (x + ...)))."""
    t = x
    for k in range(_CF_TERMS, 0, -1):
        t = x + (k / 2) / t
    return 1 / t


def _safe_big(x: Tensor) -> Tensor:
    """``x`` where the continued fraction applies, 2 elsewhere (their results are discarded)."""
    return where(x >= _CF_FROM, x, _CF_FROM)


def erfc(x: Tensor) -> Tensor:
    big = _safe_big(x)
    tail = exp(-big * big) * _cf(big) / _SQRT_PI
    return where(x >= _CF_FROM, tail, 1 - erf(x))


@decomposition("erfc", keeps_dtype=True)
def _erfc(x: Tensor) -> Tensor:
    return erfc(work_dtype(x))


@decomposition("erfcx", keeps_dtype=True)
def _erfcx(x: Tensor) -> Tensor:
    x = work_dtype(x)
    return where(x >= _CF_FROM, _cf(_safe_big(x)) / _SQRT_PI, exp(x * x) * (1 - erf(x)))


@decomposition("log_ndtr", keeps_dtype=True)
def _log_ndtr(x: Tensor) -> Tensor:
    x = work_dtype(x)
    y = -x / _SQRT2
    upper = log1p(-0.5 * erfc(-y))
    far = y >= _CF_FROM
    tail = log(_cf(_safe_big(y)) / (2 * _SQRT_PI)) - 0.5 * x * x
    near = log(0.5 * erfc(where(far, 0.0, y)))
    return where(x >= 0, upper, where(far, tail, near))


def _winitzki(log_c: Tensor) -> Tensor:
    """|erfinv| from ``log(1 - y^2)`` (given as log(c (2 - c)) for erfcinv)."""
    t = 2 / (math.pi * _WINITZKI_A) + log_c / 2
    return sqrt(sqrt(t * t - log_c / _WINITZKI_A) - t)


def erfcinv(c: Tensor) -> Tensor:
    """x >= 0 with erfc(x) = c, for c in [0, 1] (NaN outside [0, 2], c > 1 not handled here)."""
    x = _winitzki(log(c * (2 - c)))
    for _ in range(_HALLEY_STEPS):
        g = erfc(x) - c
        slope = (2 / _SQRT_PI) * exp(-x * x)
        x = x + g / (slope - x * g)
    tiny = c < _TINY  # erfc(x) and c subnormal: Halley on erfc loses digits, so solve in logs
    x = where(tiny, _erfcinv_log(where(tiny, c, _TINY)), x)
    return where(c == 0, math.inf, x)


def _erfcinv_log(c: Tensor) -> Tensor:
    """Newton on log(erfc(x)) = log(c), with erfc(x) = exp(-x^2) cf(x) / sqrt(pi) and
    d/dx log(erfc(x)) = -2 / cf(x)."""
    x, lc = _winitzki(log(c * (2 - c))), log(c)
    for _ in range(_HALLEY_STEPS + 1):
        cf = _cf(_safe_big(x))
        x = x + (log(cf / _SQRT_PI) - x * x - lc) * cf / 2
    return x


def _erfinv_small(y: Tensor) -> Tensor:
    x = _winitzki(log((1 - y) * (1 + y)))
    x = copysign(x, y)
    for _ in range(_HALLEY_STEPS):
        f = erf(x) - y
        slope = (2 / _SQRT_PI) * exp(-x * x)
        x = x - f / (slope + x * f)
    return x


@decomposition("erfinv", keeps_dtype=True)
def _erfinv(y: Tensor) -> Tensor:
    y = work_dtype(y)
    a = abs(y)
    small = a <= 0.5
    inner = _erfinv_small(where(small, y, 0.0))
    outer = copysign(erfcinv(where(small, 1.0, 1 - a)), y)
    out = where(small, inner, outer)
    return where(a > 1, math.nan, copysign(out, y))


@decomposition("ndtri", keeps_dtype=True)
def _ndtri(p: Tensor) -> Tensor:
    p = work_dtype(p)
    low = p < 0.5
    c = where(low, 2 * p, 2 * (1 - p))
    x = _SQRT2 * erfcinv(where((c >= 0) & (c <= 1), c, 1.0))
    out = where(low, -x, x)
    return where((p < 0) | (p > 1) | isnan(p), math.nan, out)
