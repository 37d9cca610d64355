"""KL closed forms with Pareto (registered on import by the package)."""

from __future__ import annotations

import math
from typing import Any

from .continuous import Exponential, Laplace, Normal, Uniform
from .folded import Gumbel
from .gamma import Beta, Gamma
from .kl import _inf_like, _set, _x_log_x, register_kl
from .positive import Pareto

__all__: list[str] = []


@register_kl(Pareto, Pareto)
def _pareto_pareto(p: Any, q: Any) -> Any:
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return _set(result, p.scale < q.scale, math.inf)


@register_kl(Beta, Pareto)
def _beta_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.concentration1)


@register_kl(Exponential, Pareto)
def _exponential_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.rate)


@register_kl(Gamma, Pareto)
def _gamma_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.concentration)


@register_kl(Gumbel, Pareto)
@register_kl(Laplace, Pareto)
@register_kl(Normal, Pareto)
def _loc_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.loc)


@register_kl(Pareto, Beta)
@register_kl(Pareto, Uniform)
def _pareto_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.scale)


@register_kl(Pareto, Exponential)
def _pareto_exponential(p: Any, q: Any) -> Any:
    prod = p.scale * q.rate
    result = (p.alpha / prod).log() - p.alpha.reciprocal() + p.alpha * prod / (p.alpha - 1) - 1
    return _set(result, p.alpha <= 1, math.inf)


@register_kl(Pareto, Gamma)
def _pareto_gamma(p: Any, q: Any) -> Any:
    common = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _set(t1 + t2 + t3 + t4 - 1, p.alpha <= 1, math.inf)


@register_kl(Pareto, Normal)
def _pareto_normal(p: Any, q: Any) -> Any:
    var2 = 2 * q.scale.pow(2)
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    result = t1 - p.alpha.reciprocal() + (t3 + t4) / var2 - 1
    return _set(result, p.alpha <= 2, math.inf)


@register_kl(Uniform, Pareto)
def _uniform_pareto(p: Any, q: Any) -> Any:
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return _set(t2 * (q.alpha + 1) - t1, p.low < q.scale, math.inf)
