"""Count distributions: Poisson, Binomial, Multinomial."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any, ClassVar

from . import _ember as ember
from . import constraints
from ._count_sampling import binomial, poisson
from .continuous import ExponentialFamily, expand_params
from .discrete import Categorical, either_param, expand_probs_logits
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits, xlogy

__all__ = ["Binomial", "Geometric", "Multinomial", "NegativeBinomial", "Poisson"]


class Poisson(ExponentialFamily):
    """Number of events at ``rate`` per unit time."""

    arg_constraints: ClassVar[dict[str, Any]] = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, Number) else self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        return expand_params(self, Poisson, ("rate",), batch_shape, _instance)

    @property
    def mean(self) -> Any:
        return self.rate

    @property
    def mode(self) -> Any:
        return self.rate.floor()

    @property
    def variance(self) -> Any:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        with ember.no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - (value + 1).lgamma()


def _clamp_by_zero(x: Any) -> Any:
    """``max(x, 0)`` with gradient 1/2 at 0, as PyTorch's binomial log_prob uses."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """Successes in ``total_count`` independent trials of probability ``probs``."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(
        self, total_count: Any = 1, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        either_param(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        new = self._get_checked_instance(Binomial, _instance)
        new.total_count = self.total_count.expand(tuple(batch_shape))
        expand_probs_logits(self, new, ember.Size(batch_shape), tuple(batch_shape))
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        return constraints.integer_interval(0, self.total_count)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    @property
    def mean(self) -> Any:
        return self.total_count * self.probs

    @property
    def mode(self) -> Any:
        return ((self.total_count + 1) * self.probs).floor().minimum(self.total_count)

    @property
    def variance(self) -> Any:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        with ember.no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        normalize = (
            n * _clamp_by_zero(logits) + n * ember.log1p(ember.exp(-logits.abs())) - ember.lgamma(n + 1)
        )
        return value * logits - ember.lgamma(value + 1) - ember.lgamma(n - value + 1) - normalize

    def _homogeneous(self, what: str) -> int:
        total = int(self.total_count.max())
        if not float(self.total_count.min()) == total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self) -> Any:
        self._homogeneous("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ember.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Any:
        total = self._homogeneous("enumerate_support")
        values = ember.arange(1 + total, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values


class Multinomial(Distribution):
    """Counts of each of ``K`` categories over ``total_count`` Categorical draws."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }

    def __init__(
        self, total_count: int = 1, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        param_shape = tuple(self._categorical.param_shape)
        super().__init__(self._categorical.batch_shape, param_shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial
        Distribution.__init__(new, ember.Size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> Any:
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Any:
        return self._categorical.logits

    @property
    def probs(self) -> Any:
        return self._categorical.probs

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape

    @property
    def mean(self) -> Any:
        return self.probs * self.total_count

    @property
    def variance(self) -> Any:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Any:
        sample_shape = tuple(ember.Size(sample_shape))
        samples = self._categorical.sample((self.total_count, *sample_shape))
        order = [*range(1, samples.dim()), 0]
        samples = samples.permute(*order)  # the draws last
        shape = tuple(self._extended_shape(sample_shape))
        counts = ember.zeros(shape, dtype=samples.dtype, device=samples.device)
        counts = counts.scatter_add(-1, samples.contiguous(), ember.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self) -> Any:
        n = ember.tensor(float(self.total_count), dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - ember.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = ember.exp(self._binomial.log_prob(support))
        term2 = (binomial_probs * ember.lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = ember.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ember.lgamma(value + 1).sum(-1)
        logits = ember.where((value == 0) & (logits == -math.inf), ember.zeros_like(logits), logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)


class Geometric(Distribution):
    """Failures before the first success in Bernoulli(``probs``) trials (support 0, 1, 2, ...)."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        either_param(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        super().__init__(() if isinstance(given, Number) else given.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} to be positive but found invalid values:\n{value[~valid]}"
                )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        new = self._get_checked_instance(Geometric, _instance)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(tuple(batch_shape)))
        Distribution.__init__(new, ember.Size(batch_shape), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Any:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Any:
        return ember.zeros_like(self.probs)

    @property
    def variance(self) -> Any:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Any:
        """Inversion: ``floor(log U / log(1 - p))`` with ``U`` in ``[tiny, 1)``."""
        shape = tuple(self._extended_shape(sample_shape))
        tiny = ember.finfo(self.probs.dtype).tiny
        with ember.no_grad():
            u = ember.empty(shape, dtype=self.probs.dtype, device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = ember.where((probs == 1) & (value == 0), ember.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Any:
        bce = ember.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
        return bce / self.probs


class NegativeBinomial(Distribution):
    """Successes before ``total_count`` failures, success probability ``probs``: a Gamma-Poisson mixture."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self, total_count: Any, probs: Any = None, logits: Any = None, validate_args: Any = None
    ) -> None:
        either_param(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        new = self._get_checked_instance(NegativeBinomial, _instance)
        new.total_count = self.total_count.expand(tuple(batch_shape))
        expand_probs_logits(self, new, ember.Size(batch_shape), tuple(batch_shape))
        return new

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    @property
    def mean(self) -> Any:
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self) -> Any:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Any:
        return self.mean / ember.sigmoid(-self.logits)

    def sample(self, sample_shape: Any = ()) -> Any:
        with ember.no_grad():
            rate = Gamma(self.total_count, ember.exp(-self.logits), validate_args=False).sample(sample_shape)
            return poisson(rate)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = ember.functional.logsigmoid
        n = self.total_count
        log_unnormalized = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_norm = -ember.lgamma(n + value) + ember.lgamma(1.0 + value) + ember.lgamma(n)
        log_norm = ember.where(n + value == 0.0, ember.zeros_like(log_norm), log_norm)
        return log_unnormalized - log_norm
