"""``kl_divergence(p, q)`` with a registry of closed forms, dispatched on the most specific types."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from . import _ember as ember
from .continuous import Cauchy, Exponential, Laplace, Normal, Uniform
from .counts import Binomial, Poisson
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .gamma import Beta, Dirichlet, Gamma
from .multivariate_normal import MultivariateNormal, batch_mahalanobis
from .transformed import Independent, TransformedDistribution
from .transforms import sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_REGISTRY: dict[tuple[type, type], Callable[..., Any]] = {}
_MEMO: dict[tuple[type, type], Any] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: ``@register_kl(P, Q)`` makes ``fn(p, q)`` the KL for those types and subclasses."""
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: Callable[..., Any]) -> Callable[..., Any]:
        _REGISTRY[type_p, type_q] = fun
        _MEMO.clear()
        return fun

    return decorator


def _dispatch(type_p: type, type_q: type) -> Any:
    """The registered pair nearest to (type_p, type_q) in their MROs, warning when p-first and q-first disagree."""
    matches = [(sp, sq) for sp, sq in _REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    mp, mq = type_p.__mro__, type_q.__mro__
    left = min(matches, key=lambda m: (mp.index(m[0]), mq.index(m[1])))
    right = min(matches, key=lambda m: (mq.index(m[1]), mp.index(m[0])))
    if _REGISTRY[left] is not _REGISTRY[right]:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left[0].__name__}, {right[1].__name__})",
            RuntimeWarning,
            stacklevel=2,
        )
    return _REGISTRY[left]


def kl_divergence(p: Distribution, q: Distribution) -> Any:
    """``KL(p || q)`` over the batch; ``NotImplementedError`` for a pair with no closed form."""
    key = (type(p), type(q))
    if key not in _MEMO:
        _MEMO[key] = _dispatch(*key)
    fun = _MEMO[key]
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type {q.__class__.__name__}"
        )
    return fun(p, q)


def _inf_like(t: Any) -> Any:
    return ember.full_like(t, math.inf)


def _set(t: Any, mask: Any, value: float) -> Any:
    """``t`` with ``value`` where ``mask`` (PyTorch's in-place masked assignment, out of place)."""
    return ember.where(mask, ember.full_like(t, value), t)


def _x_log_x(t: Any) -> Any:
    return t * t.log()


_EULER = 0.57721566490153286060


@register_kl(Bernoulli, Bernoulli)
def _bernoulli_bernoulli(p: Any, q: Any) -> Any:
    sp = ember.functional.softplus
    t1 = p.probs * (sp(-q.logits) - sp(-p.logits))
    t1 = _set(_set(t1, q.probs == 0, math.inf), p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (sp(q.logits) - sp(p.logits))
    t2 = _set(_set(t2, q.probs == 1, math.inf), p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Beta, Beta)
def _beta_beta(p: Any, q: Any) -> Any:
    sp = p.concentration1 + p.concentration0
    sq = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sp.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sq.lgamma()
    t3 = (p.concentration1 - q.concentration1) * ember.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ember.digamma(p.concentration0)
    t5 = (sq - sp) * ember.digamma(sp)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _binomial_binomial(p: Any, q: Any) -> Any:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _set(kl, p.total_count > q.total_count, math.inf)


@register_kl(Categorical, Categorical)
def _categorical_categorical(p: Any, q: Any) -> Any:
    t = p.probs * (p.logits - q.logits)
    t = _set(t, (q.probs == 0).expand_as(t), math.inf)
    t = _set(t, (p.probs == 0).expand_as(t), 0.0)
    return t.sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _dirichlet_dirichlet(p: Any, q: Any) -> Any:
    sp, sq = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = sp.lgamma() - sq.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sp.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _exponential_exponential(p: Any, q: Any) -> Any:
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(Gamma, Gamma)
def _gamma_gamma(p: Any, q: Any) -> Any:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = ember.lgamma(q.concentration) - ember.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ember.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Laplace, Laplace)
def _laplace_laplace(p: Any, q: Any) -> Any:
    ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -ratio.log() + diff / q.scale + ratio * ember.exp(-diff / p.scale) - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _mvn_mvn(p: Any, q: Any) -> Any:
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes cannot be computed"
        )
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    batch = tuple(ember.broadcast_shapes(tuple(lq.shape[:-2]), tuple(lp.shape[:-2])))
    n = p.event_shape[0]
    x = ember.linalg.solve_triangular(lq.expand(*batch, n, n), lp.expand(*batch, n, n), upper=False)
    term2 = x.pow(2).sum((-2, -1))
    term3 = batch_mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _normal_normal(p: Any, q: Any) -> Any:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _onehot_onehot(p: Any, q: Any) -> Any:
    return _categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _poisson_poisson(p: Any, q: Any) -> Any:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _transformed_transformed(p: Any, q: Any) -> Any:
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _uniform_uniform(p: Any, q: Any) -> Any:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _set(result, (q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Independent, Independent)
def _independent_independent(p: Any, q: Any) -> Any:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _cauchy_cauchy(p: Any, q: Any) -> Any:
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


# Pairs of different families -------------------------------------------------------------


@register_kl(Bernoulli, Poisson)
def _bernoulli_poisson(p: Any, q: Any) -> Any:
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Exponential)
def _beta_exponential(p: Any, q: Any) -> Any:
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0))


@register_kl(Beta, Gamma)
def _beta_gamma(p: Any, q: Any) -> Any:
    total = p.concentration1 + p.concentration0
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma() - total.digamma())
    return -p.entropy() + t2 - t3 + q.rate * p.concentration1 / total


@register_kl(Beta, Normal)
def _beta_normal(p: Any, q: Any) -> Any:
    total = p.concentration1 + p.concentration0
    e = p.concentration1 / total
    var = q.scale.pow(2)
    t2 = 0.5 * (var * 2 * math.pi).log()
    t3 = (e * (1 - e) / (total + 1) + e.pow(2)) * 0.5
    return -p.entropy() + t2 + (t3 - q.loc * e + q.loc.pow(2) * 0.5) / var


@register_kl(Beta, Uniform)
def _beta_uniform(p: Any, q: Any) -> Any:
    result = -p.entropy() + (q.high - q.low).log()
    return _set(result, (q.low > 0.0) | (q.high < 1.0), math.inf)


@register_kl(Exponential, Beta)
@register_kl(Exponential, Uniform)
def _exponential_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.rate)


@register_kl(Exponential, Gamma)
def _exponential_gamma(p: Any, q: Any) -> Any:
    ratio = q.rate / p.rate
    c = q.concentration
    return -c * ember.log(ratio) + ratio + c.lgamma() + c * _EULER - (1 + _EULER)


@register_kl(Exponential, Normal)
def _exponential_normal(p: Any, q: Any) -> Any:
    var = q.scale.pow(2)
    rate2 = p.rate.pow(2)
    t1 = 0.5 * ember.log(rate2 * var * 2 * math.pi)
    return t1 - 1 + (rate2.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var


@register_kl(Gamma, Beta)
@register_kl(Gamma, Uniform)
def _gamma_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.concentration)


@register_kl(Gamma, Exponential)
def _gamma_exponential(p: Any, q: Any) -> Any:
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Normal)
def _gamma_normal(p: Any, q: Any) -> Any:
    var = q.scale.pow(2)
    b2 = p.rate.pow(2)
    c = p.concentration
    t1 = 0.5 * ember.log(b2 * var * 2 * math.pi) - c - c.lgamma()
    t2 = 0.5 * (c.pow(2) + c) / b2
    return t1 + (c - 1) * c.digamma() + (t2 - q.loc * c / p.rate + 0.5 * q.loc.pow(2)) / var


@register_kl(Laplace, Beta)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Uniform)
@register_kl(Normal, Beta)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Uniform)
def _loc_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.loc)


@register_kl(Laplace, Normal)
def _laplace_normal(p: Any, q: Any) -> Any:
    var = q.scale.pow(2)
    ratio = p.scale.pow(2) / var
    t1 = 0.5 * ember.log(2 * ratio / math.pi)
    return -t1 + ratio + (0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)) / var - 1


@register_kl(Normal, Laplace)
def _normal_laplace(p: Any, q: Any) -> Any:
    diff = p.loc - q.loc
    ratio = p.scale / q.scale
    z = diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * ember.exp(-0.5 * z.pow(2))
    t3 = diff * ember.erf(math.sqrt(0.5) * z)
    return -ember.log(ratio) + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _poisson_infinity(p: Any, q: Any) -> Any:
    return _inf_like(p.rate)


@register_kl(Uniform, Beta)
def _uniform_beta(p: Any, q: Any) -> Any:
    width = p.high - p.low
    t1 = ember.log(width)
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (
        q.concentration1.lgamma() + q.concentration0.lgamma() - (q.concentration1 + q.concentration0).lgamma()
    )
    return _set(t3 + t4 - t1 - t2, (p.high > 1.0) | (p.low < 0.0), math.inf)


@register_kl(Uniform, Exponential)
def _uniform_exponential(p: Any, q: Any) -> Any:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _set(result, p.low < 0.0, math.inf)


@register_kl(Uniform, Gamma)
def _uniform_gamma(p: Any, q: Any) -> Any:
    width = p.high - p.low
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = -width.log() + t2 + t3 + q.rate * (p.high + p.low) / 2
    return _set(result, p.low < 0.0, math.inf)


@register_kl(Uniform, Normal)
def _uniform_normal(p: Any, q: Any) -> Any:
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
