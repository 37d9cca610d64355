"""Decompositions of the Bessel functions I0, I1 (and their scaled forms), J0 and J1.

Small arguments use the power series (I: all terms positive) or Miller's backward
recurrence in ratio form (J: stable where the power series cancels); large ones use the
Hankel asymptotic expansions, whose terms fall below 1e-17 before they diverge there.
"""

from __future__ import annotations

import math

from ._decomp_elementary import work_dtype
from ._ops._composite import decomposition
from ._ops.pointwise_special import copysign
from ._ops.pointwise_unary import abs, cos, exp, sin, sqrt
from ._ops.select import where
from ._tensor import Tensor

__all__ = ["bessel_i", "bessel_j"]

_I_SERIES_UP_TO = 20.0
_I_SERIES_TERMS = 50
_I_ASYMPTOTIC_TERMS = 30
_J_SERIES_UP_TO = 25.0
_J_START = 70  # Miller's recurrence starts at order 70 (J_70(25) / J_69(25) ~ 1e-22)
_J_ASYMPTOTIC_TERMS = 30


def _i_series(a: Tensor, nu: int) -> Tensor:
    """sum_k (a/2)^(2k+nu) / (k! (k+nu)!) for a <= 20."""
    h = a * 0.5
    q = h * h
    term = h if nu else a * 0 + 1
    total = term
    for k in range(1, _I_SERIES_TERMS):
        term = term * q / (k * (k + nu))
        total = total + term
    return total


def _asymptotic_terms(a: Tensor, nu: int, count: int) -> list[Tensor]:
    """a_k(nu) / a^k with a_k = prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k), k < count."""
    mu = 4 * nu * nu
    terms = [a * 0 + 1]
    for k in range(1, count):
        terms.append(terms[-1] * ((mu - (2 * k - 1) ** 2) / (8 * k)) / a)
    return terms


def _ie_asymptotic(a: Tensor, nu: int) -> Tensor:
    """exp(-a) I_nu(a) ~ sum (-1)^k a_k(nu) / a^k / sqrt(2 pi a), for a > 20."""
    total = a * 0
    for k, t in enumerate(_asymptotic_terms(a, nu, _I_ASYMPTOTIC_TERMS)):
        total = total + (t if k % 2 == 0 else -t)
    return total / sqrt(2 * math.pi * a)


def bessel_i(x: Tensor, nu: int, scaled: bool) -> Tensor:
    """I_nu(x) for nu in (0, 1); ``scaled``: exp(-|x|) I_nu(x)."""
    a = abs(x)
    small = a <= _I_SERIES_UP_TO
    series = _i_series(where(small, a, 0.0), nu)
    big = where(small, _I_SERIES_UP_TO + 1, a)
    asym = _ie_asymptotic(big, nu)
    # asym underflows to 0 where sqrt(2 pi a) overflows (a > 2.8e307): I is inf there, not 0 * inf
    grown = where(asym == 0, math.inf, asym * exp(big))
    out = where(small, series * exp(-a), asym) if scaled else where(small, series, grown)
    out = where(a == math.inf, 0.0 if scaled else math.nan, out)  # PyTorch: i0(inf) is nan
    return copysign(out, x) if nu else out


def _j_miller(a: Tensor, nu: int) -> Tensor:
    """J_nu(a) for 0 <= a <= 25 from the ratios r_k = J_k / J_(k-1), normalised by
    J_0 + 2 sum J_2m = 1."""
    two_over = 2 / where(a == 0, 1.0, a)
    r = a * 0
    ratios = []
    for k in range(_J_START, 0, -1):
        r = 1 / (k * two_over - r)
        ratios.append(r)
    ratios.reverse()  # ratios[k - 1] = r_k
    prod, norm = a * 0 + 1, a * 0 + 1
    for k in range(1, _J_START + 1):
        prod = prod * ratios[k - 1]
        if k % 2 == 0:
            norm = norm + 2 * prod
    j0 = 1 / norm
    out = j0 * ratios[0] if nu else j0
    return where(a == 0, 0.0 if nu else 1.0, out)


def _j_asymptotic(a: Tensor, nu: int) -> Tensor:
    """Hankel's expansion for a > 25, with cos/sin(a - (2 nu + 1) pi / 4) expanded exactly."""
    terms = _asymptotic_terms(a, nu, 2 * _J_ASYMPTOTIC_TERMS)
    p, q = a * 0, a * 0
    for k, t in enumerate(terms):
        sign = -1 if (k // 2) % 2 else 1
        if k % 2 == 0:
            p = p + sign * t
        else:
            q = q + sign * t
    c, s = cos(a), sin(a)
    root2 = math.sqrt(0.5)
    if nu == 0:
        cos_chi, sin_chi = (c + s) * root2, (s - c) * root2
    else:
        cos_chi, sin_chi = (s - c) * root2, -(s + c) * root2
    return sqrt(2 / (math.pi * a)) * (p * cos_chi - q * sin_chi)


def bessel_j(x: Tensor, nu: int) -> Tensor:
    """J_nu(x) for nu in (0, 1)."""
    a = abs(x)
    small = a <= _J_SERIES_UP_TO
    near = _j_miller(where(small, a, 0.0), nu)
    far = _j_asymptotic(where(small, _J_SERIES_UP_TO + 1, a), nu)
    out = where(small, near, far)
    return where(x < 0, -out, out) if nu else out


def _register(op: str, fn: object) -> None:
    decomposition(op, keeps_dtype=True)(fn)  # type: ignore[arg-type]


_register("i0", lambda x: bessel_i(work_dtype(x), 0, False))
_register("i0e", lambda x: bessel_i(work_dtype(x), 0, True))
_register("i1", lambda x: bessel_i(work_dtype(x), 1, False))
_register("i1e", lambda x: bessel_i(work_dtype(x), 1, True))
_register("bessel_j0", lambda x: bessel_j(work_dtype(x), 0))
_register("bessel_j1", lambda x: bessel_j(work_dtype(x), 1))
