"""Location-scale and simple continuous distributions: Normal, Uniform, Exponential, Laplace, Cauchy."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any, ClassVar

from . import _ember as ember
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, standard_normal

__all__ = ["Cauchy", "Exponential", "ExponentialFamily", "Laplace", "Normal", "Uniform", "expand_params"]


def expand_params(
    self: Distribution, cls: type[Distribution], names: tuple[str, ...], batch_shape: Any, _instance: Any
) -> Any:
    """``expand``'s shared body: each named parameter expanded to ``batch_shape``, no copy."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = ember.Size(batch_shape)
    for n in names:
        setattr(new, n, getattr(self, n).expand(batch_shape))
    Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


def _init_pair(self: Distribution, a: Any, b: Any, names: tuple[str, str], validate_args: Any) -> None:
    """Broadcast two parameters; two numbers give a scalar batch, as in PyTorch."""
    ta, tb = broadcast_all(a, b)
    setattr(self, names[0], ta)
    setattr(self, names[1], tb)
    batch = () if isinstance(a, Number) and isinstance(b, Number) else ta.size()
    Distribution.__init__(self, batch, validate_args=validate_args)


class ExponentialFamily(Distribution):
    """Marker base for exponential-family distributions (as in PyTorch's class tree)."""


class Normal(ExponentialFamily):
    """Gaussian with mean ``loc`` and standard deviation ``scale``; ``rsample`` is ``loc + scale * eps``."""

    loc: ember.Tensor
    scale: ember.Tensor
    arg_constraints: ClassVar[dict[str, Any]] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        _init_pair(self, loc, scale, ("loc", "scale"), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        return expand_params(self, Normal, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return self.scale

    @property
    def variance(self) -> Any:
        return self.stddev.pow(2)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        return self.loc + standard_normal(shape, self.loc.dtype, self.loc.device) * self.scale

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ember.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Any) -> Any:
        return self.loc + self.scale * ember.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Any:
        return 0.5 + 0.5 * math.log(2 * math.pi) + ember.log(self.scale)


class Uniform(Distribution):
    """Uniform on the half-open interval ``[low, high)``."""

    low: ember.Tensor
    high: ember.Tensor
    has_rsample = True

    @property
    def arg_constraints(self) -> dict[str, Any]:  # type: ignore[override]
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        _init_pair(self, low, high, ("low", "high"), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Uniform:
        return expand_params(self, Uniform, ("low", "high"), batch_shape, _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Any:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Any:
        return math.nan * self.high

    @property
    def stddev(self) -> Any:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Any:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        u = ember.rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return ember.log(lb * ub) - ember.log(self.high - self.low)

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Any) -> Any:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Any:
        return ember.log(self.high - self.low)


class Exponential(ExponentialFamily):
    """Waiting time of a Poisson process with ``rate``; ``rsample`` divides a unit draw by it."""

    rate: ember.Tensor
    arg_constraints: ClassVar[dict[str, Any]] = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch = () if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        return expand_params(self, Exponential, ("rate",), batch_shape, _instance)

    @property
    def mean(self) -> Any:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Any:
        return ember.zeros_like(self.rate)

    @property
    def stddev(self) -> Any:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Any:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        e = ember.empty(tuple(shape), dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return e / self.rate

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ember.exp(-self.rate * value)

    def icdf(self, value: Any) -> Any:
        return -ember.log1p(-value) / self.rate

    def entropy(self) -> Any:
        return 1.0 - ember.log(self.rate)


class Laplace(Distribution):
    """Double exponential around ``loc``; ``rsample`` inverts the CDF of a uniform draw."""

    loc: ember.Tensor
    scale: ember.Tensor
    arg_constraints: ClassVar[dict[str, Any]] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        _init_pair(self, loc, scale, ("loc", "scale"), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        return expand_params(self, Laplace, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Any:
        return (2**0.5) * self.scale

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = ember.finfo(self.loc.dtype).eps
        u = ember.empty(tuple(shape), dtype=self.loc.dtype, device=self.loc.device).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * ember.log1p(-u.abs())

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return -ember.log(2 * self.scale) - ember.abs(value - self.loc) / self.scale

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * ember.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value: Any) -> Any:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ember.log1p(-2 * term.abs())

    def entropy(self) -> Any:
        return 1 + ember.log(2 * self.scale)


class Cauchy(Distribution):
    """Ratio of two normals, centred at ``loc``: no mean, infinite variance."""

    loc: ember.Tensor
    scale: ember.Tensor
    arg_constraints: ClassVar[dict[str, Any]] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        _init_pair(self, loc, scale, ("loc", "scale"), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Cauchy:
        return expand_params(self, Cauchy, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self) -> Any:
        return ember.full(
            tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype, device=self.loc.device
        )

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return ember.full(
            tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype, device=self.loc.device
        )

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = ember.empty(tuple(shape), dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return ember.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Any) -> Any:
        return ember.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Any:
        return math.log(4 * math.pi) + self.scale.log()
