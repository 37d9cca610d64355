"""Bessel functions without a SciPy kernel behind them, written in ember ops (so they run
on every backend): K0/K1 (and scaled) by the trapezoid rule on the cosh integral, Y0/Y1 and
fractional-order J by Gauss-Legendre on their integral representations, Hankel expansions
for large arguments, and Airy Ai through the Bessel relations. Not differentiable (as in
PyTorch, which has no derivatives for these)."""

from __future__ import annotations

import math
from typing import Any

from ember.backends import dtypes as D

from ._ops._operands import as_float as _float
from ._ops.pointwise_unary import exp, isnan, sin
from ._ops.select import where
from ._tensor import Tensor

__all__ = [
    "airy_ai",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
]


def _k_integral(x: Tensor, nu: float, scaled: bool) -> Tensor:
    """exp(x)^scaled * K_nu(x) = int_0^inf exp(-x (cosh t - scaled)) cosh(nu t) dt, by the
    trapezoid rule (exponentially accurate for this even, analytic integrand), for 0 < x <= 20."""
    from ._creation import arange

    h = 0.05
    t = arange(600, device=x._device).to(x.dtype) * h  # t up to 30: exp(-x cosh 30) underflows
    ct, cn = t.cosh(), (t * nu).cosh()
    xe = x.unsqueeze(-1)
    f = exp(-xe * (ct - (1.0 if scaled else 0.0))) * cn
    return (f.sum(-1) - 0.5 * f.select(-1, 0)) * h


def _k_integral_chunked(x: Tensor, nu: float, scaled: bool) -> Tensor:
    """``_k_integral`` over at most 2**15 elements at a time (600 nodes each)."""
    from ._ops.join import cat

    flat = x.reshape(-1)
    step = 1 << 15
    parts = [_k_integral(flat[i : i + step], nu, scaled) for i in range(0, max(flat.numel(), 1), step)]
    return (cat(parts, 0) if len(parts) > 1 else parts[0]).reshape(x._shape)


def _k_asymptotic(x: Tensor, nu: float, scaled: bool) -> Tensor:
    """The large-x expansion sqrt(pi/2x) e^-x sum_k a_k(nu) / x^k, for x > 20."""
    mu = 4.0 * nu * nu
    term = x * 0 + 1.0
    total = term
    for k in range(1, 30):
        term = term * (mu - (2 * k - 1) ** 2) / (8.0 * k * x)
        total = total + term
    out = (math.pi / (2 * x)).sqrt() * total
    return out if scaled else out * exp(-x)


def _modified_k(nu: int, scaled: bool) -> Any:
    def op(input: Tensor) -> Tensor:
        from ._ops._composite import NoRecord

        x = _float(input)
        wide = x.to(D.float64) if D.float64 in x._be.backend.dtypes else x
        with NoRecord():
            safe = where(wide > 0, wide, 1.0)
            small = _k_integral_chunked(where(safe <= 20, safe, 20.0), nu, scaled)
            large = _k_asymptotic(where(safe > 20, safe, 21.0), nu, scaled)
            out = where(safe <= 20, small, large)
            out = where(wide == 0, float("inf"), where(wide < 0, float("nan"), out))
            out = where(wide == float("inf"), 0.0, where(isnan(wide), wide, out))
        return out.to(x.dtype)

    op.__name__ = ("scaled_" if scaled else "") + f"modified_bessel_k{nu}"
    op.__doc__ = f"The modified Bessel function of the second kind K{nu}" + (
        ", times exp(x)." if scaled else "."
    )
    return op


modified_bessel_k0 = _modified_k(0, False)
modified_bessel_k1 = _modified_k(1, False)
scaled_modified_bessel_k0 = _modified_k(0, True)
scaled_modified_bessel_k1 = _modified_k(1, True)


_GL: dict[int, Any] = {}


def _gauss_legendre(n: int, like: Tensor) -> tuple[Tensor, Tensor]:
    """Gauss-Legendre nodes and weights on [-1, 1] (computed once, on the host)."""
    import numpy as np

    from ._creation import tensor

    if n not in _GL:
        _GL[n] = np.polynomial.legendre.leggauss(n)
    nodes, weights = _GL[n]
    return tensor(nodes, dtype=like.dtype, device=like._device), tensor(
        weights, dtype=like.dtype, device=like._device
    )


def _y_integral(x: Tensor, nu: int) -> Tensor:
    """Y_nu(x) = (1/pi) int_0^pi sin(x sin(th) - nu th) dth
    - (1/pi) int_0^inf (e^{nu t} + (-1)^nu e^{-nu t}) e^{-x sinh t} dt, by Gauss-Legendre, for x <= 25."""
    u, w = _gauss_legendre(160, x)
    xe = x.unsqueeze(-1)
    th = (u + 1) * (math.pi / 2)
    first = (sin(xe * sin(th) - nu * th) * w).sum(-1) * 0.5  # (pi/2 weights) / pi
    top = (750.0 / x).asinh().unsqueeze(-1)  # e^{-x sinh t} underflows beyond
    t = (u + 1) * 0.5 * top
    g = (exp(nu * t) + (-1) ** nu * exp(-nu * t)) * exp(-xe * t.sinh())
    second = (g * w).sum(-1) * top.squeeze(-1) * 0.5 / math.pi
    return first - second


def _y_asymptotic(x: Tensor, nu: int) -> Tensor:
    """Hankel's expansion sqrt(2/(pi x)) (P sin chi + Q cos chi), chi = x - (nu/2 + 1/4) pi, x > 25."""
    mu = 4.0 * nu * nu
    p = x * 0 + 1.0
    q = x * 0
    term = x * 0 + 1.0
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (8.0 * k * x)
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q = q + sign * term
        else:
            p = p + sign * term
    chi = x - (nu / 2 + 0.25) * math.pi
    return (2 / (math.pi * x)).sqrt() * (p * sin(chi) + q * chi.cos())


def _bessel_y(nu: int) -> Any:
    def op(input: Tensor) -> Tensor:
        from ._ops._composite import NoRecord

        x = _float(input)
        wide = x.to(D.float64) if D.float64 in x._be.backend.dtypes else x
        with NoRecord():
            safe = where(wide > 0, wide, 1.0)
            flat = where(safe <= 25, safe, 25.0).reshape(-1)
            step = 1 << 15
            parts = [_y_integral(flat[i : i + step], nu) for i in range(0, max(flat.numel(), 1), step)]
            from ._ops.join import cat

            small = (cat(parts, 0) if len(parts) > 1 else parts[0]).reshape(safe._shape)
            large = _y_asymptotic(where(safe > 25, safe, 26.0), nu)
            out = where(safe <= 25, small, large)
            out = where(wide == 0, float("-inf"), where(wide < 0, float("nan"), out))
            out = where(isnan(wide), wide, out)
        return out.to(x.dtype)

    op.__name__ = f"bessel_y{nu}"
    op.__doc__ = f"The Bessel function of the second kind Y{nu}."
    return op


bessel_y0 = _bessel_y(0)
bessel_y1 = _bessel_y(1)


def _j_integral(z: Tensor, nu: float) -> Tensor:
    """J_nu(z) = (1/pi) int_0^pi cos(nu th - z sin th) dth - (sin(nu pi)/pi) int_0^inf e^{-z sinh t - nu t} dt."""
    u, w = _gauss_legendre(160, z)
    ze = z.unsqueeze(-1)
    th = (u + 1) * (math.pi / 2)
    first = ((nu * th - ze * sin(th)).cos() * w).sum(-1) * 0.5
    top = (750.0 / z).asinh().unsqueeze(-1)
    t = (u + 1) * 0.5 * top
    g = exp(-ze * t.sinh() - nu * t)
    second = (g * w).sum(-1) * top.squeeze(-1) * 0.5 * math.sin(nu * math.pi) / math.pi
    return first - second


def _j_asymptotic(z: Tensor, nu: float) -> Tensor:
    """Hankel's expansion sqrt(2/(pi z)) (P cos chi - Q sin chi) for large z."""
    mu = 4.0 * nu * nu
    p, q, term = z * 0 + 1.0, z * 0, z * 0 + 1.0
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (8.0 * k * z)
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q = q + sign * term
        else:
            p = p + sign * term
    chi = z - (nu / 2 + 0.25) * math.pi
    return (2 / (math.pi * z)).sqrt() * (p * chi.cos() - q * sin(chi))


def _j_frac(z: Tensor, nu: float) -> Tensor:
    small = _j_integral(where(z <= 25, z, 25.0), nu)
    return where(z <= 25, small, _j_asymptotic(where(z > 25, z, 26.0), nu))


_AI0 = 0.35502805388781723926  # Ai(0) = 3^(-2/3) / Gamma(2/3)


def airy_ai(input: Tensor) -> Tensor:
    """The Airy function Ai: K_{1/3} for x > 0, J_{+-1/3} for x < 0 (Bessel relations)."""
    from ._ops._composite import NoRecord

    x = _float(input)
    wide = x.to(D.float64) if D.float64 in x._be.backend.dtypes else x
    with NoRecord():
        a = wide.abs()
        zeta = where(a > 0, a, 1.0) ** 1.5 * (2.0 / 3.0)
        kz = where(
            zeta <= 20,
            _k_integral(where(zeta <= 20, zeta, 20.0), 1 / 3, False),
            _k_asymptotic(where(zeta > 20, zeta, 21.0), 1 / 3, False),
        )
        pos = (a / 3).sqrt() * kz / math.pi
        neg = a.sqrt() / 3 * (_j_frac(zeta, 1 / 3) + _j_frac(zeta, -1 / 3))
        out = where(wide > 0, pos, neg)
        out = where(wide == 0, _AI0, out)
        out = where(wide.abs() == float("inf"), float("nan"), out)  # (PyTorch)
        out = where(isnan(wide), wide, out)
    return out.to(x.dtype)
