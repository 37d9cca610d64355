"""Laws on bounded supports built by transforms: Kumaraswamy (unit interval), LogisticNormal (simplex)."""

from __future__ import annotations

import math
from typing import Any, ClassVar, cast

from . import _ember as ember
from . import constraints
from ._transform_pointwise import AffineTransform, PowerTransform
from ._transform_vector import StickBreakingTransform
from .continuous import Normal, Uniform
from .transformed import Independent, TransformedDistribution
from .utils import broadcast_all

__all__ = ["Kumaraswamy", "LogisticNormal"]

_EULER = 0.57721566490153286060


def _moments(a: Any, b: Any, n: int) -> Any:
    """``E[X**n]`` of Kumaraswamy(a, b): ``b * B(1 + n / a, b)``."""
    arg1 = 1 + n / a
    return b * ember.exp(ember.lgamma(arg1) + ember.lgamma(b) - ember.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    """``(1 - U**(1/b))**(1/a)`` for uniform ``U``: a Beta-like law with a closed-form CDF."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        c0 = self.concentration0
        base = Uniform(ember.full_like(c0, 0), ember.full_like(c0, 1), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=c0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Any:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Any:
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        log_mode = ember.where((b < 1) | (a < 1), ember.full_like(log_mode, math.nan), log_mode)
        return log_mode.exp()

    @property
    def variance(self) -> Any:
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self) -> Any:
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        h0 = ember.digamma(b + 1) + _EULER
        return t0 + t1 * h0 - ember.log(a) - ember.log(b)


class LogisticNormal(TransformedDistribution):
    """Stick-breaking of a Normal vector: a law on the simplex with one more coordinate than ``loc``."""

    base_dist: Independent  # Independent(Normal(loc, scale), 1): StickBreaking needs an event dim
    arg_constraints: ClassVar[dict[str, Any]] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def loc(self) -> Any:
        return cast(Normal, self.base_dist.base_dist).loc

    @property
    def scale(self) -> Any:
        return cast(Normal, self.base_dist.base_dist).scale
