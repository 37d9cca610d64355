"""KL closed forms with ContinuousBernoulli (registered on import by the package)."""

from __future__ import annotations

import math
from typing import Any

from . import _ember as ember
from .continuous import Exponential, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .folded import Gumbel
from .gamma import Beta, Gamma
from .kl import _inf_like, register_kl
from .positive import Pareto

__all__: list[str] = []


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _cb_cb(p: Any, q: Any) -> Any:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + ember.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - ember.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Beta, ContinuousBernoulli)
@register_kl(Uniform, ContinuousBernoulli)
def _to_cb(p: Any, q: Any) -> Any:
    result = -p.entropy() - p.mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()
    if isinstance(p, Uniform):
        outside = (p.high >= 1.0) | (p.low <= 0.0)
        return ember.where(outside, ember.full_like(result, math.inf), result)
    return result


@register_kl(ContinuousBernoulli, Pareto)
def _cb_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.probs)


@register_kl(ContinuousBernoulli, Exponential)
def _cb_exponential(p: Any, q: Any) -> Any:
    return -p.entropy() - ember.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _cb_normal(p: Any, q: Any) -> Any:
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + ember.square(q.loc / q.scale)) + ember.log(q.scale)
    t3 = (p.variance + ember.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * ember.square(q.scale))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _cb_uniform(p: Any, q: Any) -> Any:
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low >= 0.0) | (q.high <= 1.0)
    return ember.where(outside, ember.full_like(result, math.inf), result)


@register_kl(Exponential, ContinuousBernoulli)
def _exponential_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.rate)


@register_kl(Gamma, ContinuousBernoulli)
def _gamma_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.concentration)


@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Normal, ContinuousBernoulli)
def _loc_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.loc)


@register_kl(Pareto, ContinuousBernoulli)
def _pareto_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.scale)
