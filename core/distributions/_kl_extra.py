"""KL closed forms for Geometric, Gumbel and HalfNormal (registered on import by the package)."""

from __future__ import annotations

import math
from typing import Any

from . import _ember as ember
from .continuous import Exponential, Normal, Uniform
from .counts import Geometric
from .folded import Gumbel, HalfNormal
from .gamma import Beta, Gamma
from .kl import _inf_like, _normal_normal, register_kl

__all__: list[str] = []

_EULER = 0.57721566490153286060


@register_kl(Geometric, Geometric)
def _geometric_geometric(p: Any, q: Any) -> Any:
    return -p.entropy() - ember.log1p(-q.probs) / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _gumbel_gumbel(p: Any, q: Any) -> Any:
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t3 = ember.exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + ct1 * _EULER + t3 - (1 + _EULER)


@register_kl(HalfNormal, HalfNormal)
def _halfnormal_halfnormal(p: Any, q: Any) -> Any:
    return _normal_normal(p.base_dist, q.base_dist)


@register_kl(Exponential, Gumbel)
def _exponential_gumbel(p: Any, q: Any) -> Any:
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    t2 = ember.exp(ratio) * prod / (prod + 1)
    return prod.log() - 1 - ratio + t2 + prod.reciprocal()


@register_kl(Gamma, Gumbel)
def _gamma_gumbel(p: Any, q: Any) -> Any:
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    c = p.concentration
    t1 = (c - 1) * c.digamma() - c.lgamma() - c
    t2 = prod.log() + c / prod
    t3 = ember.exp(ratio) * (1 + prod.reciprocal()).pow(-c) - ratio
    return t1 + t2 + t3


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Uniform)
def _gumbel_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.loc)


@register_kl(Gumbel, Normal)
def _gumbel_normal(p: Any, q: Any) -> Any:
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _EULER - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_EULER + 1)


@register_kl(Normal, Gumbel)
def _normal_gumbel(p: Any, q: Any) -> Any:
    mean_ratio = p.loc / q.scale
    var_ratio = (p.scale / q.scale).pow(2)
    loc_ratio = q.loc / q.scale
    t3 = ember.exp(-mean_ratio + 0.5 * var_ratio + loc_ratio)
    return -var_ratio.log() * 0.5 + mean_ratio - loc_ratio + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Uniform, Gumbel)
def _uniform_gumbel(p: Any, q: Any) -> Any:
    common = q.scale / (p.high - p.low)
    high = (p.high - q.loc) / q.scale
    low = (p.low - q.loc) / q.scale
    t1 = common.log() + 0.5 * (high + low)
    return t1 - common * (ember.exp(-high) - ember.exp(-low))
