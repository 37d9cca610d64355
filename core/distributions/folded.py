"""Distributions built by transforming another: HalfNormal, HalfCauchy, Gumbel."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any, ClassVar

from . import _ember as ember
from . import constraints
from ._transform_pointwise import AbsTransform, AffineTransform, ExpTransform
from .continuous import Cauchy, Normal, Uniform
from .transformed import TransformedDistribution
from .utils import broadcast_all

__all__ = ["Gumbel", "HalfCauchy", "HalfNormal"]

_EULER = 0.57721566490153286060


class _Folded(TransformedDistribution):
    """``|X|`` for a distribution symmetric about 0: twice the density on ``x >= 0``."""

    base_dist: Normal | Cauchy
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mode(self) -> Any:
        return ember.zeros_like(self.scale)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value = ember.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, log_prob, ember.full_like(log_prob, -math.inf))

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Any) -> Any:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Any:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """``|N(0, scale)|``."""

    arg_constraints: ClassVar[dict[str, Any]] = {"scale": constraints.positive}

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Any:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Any:
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """``|Cauchy(0, scale)|``: infinite mean."""

    arg_constraints: ClassVar[dict[str, Any]] = {"scale": constraints.positive}

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Any:
        shape = tuple(self._extended_shape())
        return ember.full(shape, math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self) -> Any:
        return self.base_dist.variance


class Gumbel(TransformedDistribution):
    """Extreme-value law: ``loc - scale * log(-log U)`` for uniform ``U``."""

    arg_constraints: ClassVar[dict[str, Any]] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        fi = ember.finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base = Uniform(fi.tiny, 1 - fi.eps, validate_args=validate_args)
        else:
            lo = ember.full_like(self.loc, fi.tiny)
            base = Uniform(lo, ember.full_like(self.loc, 1 - fi.eps), validate_args=validate_args)
        transforms = [
            ExpTransform().inv,
            AffineTransform(loc=0, scale=-ember.ones_like(self.scale)),
            ExpTransform().inv,
            AffineTransform(loc=loc, scale=-self.scale),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Any:
        return self.loc + self.scale * _EULER

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Any:
        return self.stddev.pow(2)

    def entropy(self) -> Any:
        return self.scale.log() + (1 + _EULER)
