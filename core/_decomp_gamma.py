"""Decompositions of ``lgamma``, ``digamma``, ``polygamma`` and the Hurwitz ``zeta``.

``lgamma`` and ``digamma`` shift small arguments up by recurrence and sum Stirling's
asymptotic series there, with the reflection formula for x <= 0 (the argument reduced by
rounding first, so ``sin(pi x)`` stays exact). ``zeta`` is the Euler-Maclaurin sum Cephes
uses; ``polygamma(n >= 1)`` is ``(-1)^(n+1) n! zeta(n + 1, x)``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ._decomp_elementary import work_dtype
from ._ops._composite import decomposition
from ._ops.pointwise_special import copysign
from ._ops.pointwise_unary import abs, cos, floor, log, sin
from ._ops.select import where
from ._tensor import Tensor

__all__ = ["digamma", "lgamma", "zeta"]

_SHIFT = 15  # lgamma: Stirling's series from 15 on
_PSI_SHIFT = 10  # digamma: the asymptotic series from 10 on
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _bernoulli(n: int) -> list[Fraction]:
    """B_0 .. B_n (B_1 = -1/2) by the Akiyama-Tanigawa recurrence, exactly."""
    out, a = [], [Fraction(0)] * (n + 1)
    for m in range(n + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0] if m != 1 else Fraction(-1, 2))
    return out


_B = _bernoulli(30)
# Stirling: lgamma(z) ~ (z - 1/2) log z - z + log(2 pi)/2 + sum B_2k / (2k (2k - 1) z^(2k-1))
_STIRLING = [float(_B[2 * k] / (2 * k * (2 * k - 1))) for k in range(1, 9)]
# digamma(z) ~ log z - 1/(2z) - sum B_2k / (2k z^2k)
_PSI = [float(_B[2 * k] / (2 * k)) for k in range(1, 9)]
# Euler-Maclaurin: (2j)! / B_2j, as Cephes' table
_EM = [float(math.factorial(2 * j) / _B[2 * j]) for j in range(1, 13)]


def _reduced(x: Tensor) -> Tensor:
    """x - round(x), exact, in [-1/2, 1/2]: sin(pi x) and tan(pi x) up to sign, accurately."""
    return x - floor(x + 0.5)


def _lgamma_pos(x: Tensor) -> Tensor:
    small = x < _SHIFT
    prod = x * 0 + 1
    for k in range(_SHIFT):
        prod = prod * where(small, x + k, 1.0)
    z = where(small, x + _SHIFT, x)
    inv, inv2 = 1 / z, 1 / (z * z)
    series = z * 0
    for c in reversed(_STIRLING):
        series = series * inv2 + c
    out = (z - 0.5) * log(z) - z + _HALF_LOG_2PI + series * inv
    return out - log(prod)


def lgamma(x: Tensor) -> Tensor:
    pos = x > 0
    right = _lgamma_pos(where(pos, x, 1 - x))
    r = _reduced(x)
    reflected = math.log(math.pi) - log(abs(sin(math.pi * r))) - right
    out = where(pos, right, reflected)
    out = where(abs(x) < 1e-300, -log(abs(x)), out)  # sin(pi x) would round in subnormals
    out = where((x <= 0) & (r == 0), math.inf, out)  # poles at 0, -1, -2, ...
    out = where((x == 1) | (x == 2), 0.0, out)  # exact zeros, as libm gives
    return where(abs(x) == math.inf, math.inf, out)


@decomposition("lgamma", keeps_dtype=True)
def _lgamma(x: Tensor) -> Tensor:
    return lgamma(work_dtype(x))


def _digamma_pos(x: Tensor) -> Tensor:
    small = x < _PSI_SHIFT
    acc = x * 0
    for k in range(_PSI_SHIFT):
        acc = acc + where(small, 1 / (x + k), 0.0)
    z = where(small, x + _PSI_SHIFT, x)
    inv2 = 1 / (z * z)
    series = z * 0
    for c in reversed(_PSI):
        series = series * inv2 + c
    return log(z) - 0.5 / z - series * inv2 - acc


def digamma(x: Tensor) -> Tensor:
    pos = x > 0
    right = _digamma_pos(where(pos, x, 1 - x))
    r = _reduced(x)
    reflected = right - math.pi * cos(math.pi * r) / sin(math.pi * r)
    out = where(pos, right, reflected)
    out = where((x < 0) & (r == 0), math.nan, out)  # poles at -1, -2, ...
    out = where(x == math.inf, math.inf, out)
    return where(x == 0, copysign(x * 0 + math.inf, -x), out)  # digamma(+-0) = -+inf


@decomposition("digamma", keeps_dtype=True)
def _digamma(x: Tensor) -> Tensor:
    return digamma(work_dtype(x))


def zeta(s: Tensor, q: Tensor, terms: int = 10) -> Tensor:
    """Hurwitz zeta sum_k (q + k)^-s for s > 1 (Cephes' Euler-Maclaurin sum), q > 0 or
    q < 0 with integer s; ``terms`` direct terms before the correction."""
    total = s * 0
    k: float  # the direct terms' int index, then the Euler-Maclaurin float one
    for k in range(terms):
        total = total + (q + k) ** -s
    w = q + terms
    b = w**-s
    total = total + w * b / (s - 1) + 0.5 * b
    a, k = s * 0 + 1, 0.0
    for coef in _EM:
        a = a * (s + k)
        b = b / w
        total = total + a * b / coef
        k += 1
        a = a * (s + k)
        b = b / w
        k += 1
    total = where(s == 1, math.inf, total)
    total = where(s < 1, math.nan, total)
    neg = q <= 0
    pole = neg & (q == floor(q))
    return where(pole, math.inf, where(neg & (s != floor(s)), math.nan, total))


def _terms_for(q: Tensor) -> int:
    """Direct terms so that q + terms >= 10 everywhere (negative q need more; one host read)."""
    if q.numel() == 0:
        return 10
    low = float(q.amin().item())
    if not math.isfinite(low) or low >= 0:
        return 10
    return 10 + math.ceil(-low)


@decomposition("zeta", keeps_dtype=True)
def _zeta(s: Tensor, q: Tensor) -> Tensor:
    s, q = work_dtype(s), work_dtype(q)
    return zeta(s, q, _terms_for(q))


@decomposition("polygamma", keeps_dtype=True)
def _polygamma(x: Tensor, n: int) -> Tensor:
    x = work_dtype(x)
    if n == 0:
        return digamma(x)
    sign = -1.0 if n % 2 == 0 else 1.0
    z = zeta(x * 0 + (n + 1), x, _terms_for(x))
    return sign * math.factorial(n) * z
