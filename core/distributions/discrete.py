"""Categorical-type distributions: Bernoulli, Categorical, OneHotCategorical."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any, ClassVar

from . import _ember as ember
from . import constraints
from .continuous import ExponentialFamily
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "either_param"]

_EITHER = "Either `probs` or `logits` must be specified, but not both."


def either_param(probs: Any, logits: Any) -> None:
    """Exactly one of ``probs`` and ``logits``, as PyTorch requires."""
    if (probs is None) == (logits is None):
        raise ValueError(_EITHER)


def expand_probs_logits(self: Distribution, new: Any, batch_shape: Any, param_shape: Any) -> None:
    """Copy whichever of ``probs``/``logits`` exist onto ``new``, expanded to ``param_shape``."""
    for name in ("probs", "logits"):
        if name in self.__dict__:
            setattr(new, name, self.__dict__[name].expand(param_shape))
            new._param = getattr(new, name)
    Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
    new._validate_args = self._validate_args


class Bernoulli(ExponentialFamily):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        either_param(probs, logits)
        if probs is not None:
            scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        new = self._get_checked_instance(Bernoulli, _instance)
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
        return self.probs

    @property
    def mode(self) -> Any:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return ember.where(self.probs == 0.5, ember.full_like(mode, math.nan), mode)

    @property
    def variance(self) -> Any:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        with ember.no_grad():
            return ember.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -ember.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Any:
        return ember.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Any:
        values = ember.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values


class Categorical(Distribution):
    """One of ``K`` categories (the last dim of ``probs``/``logits``); samples are indices."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        either_param(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch = tuple(self._param.shape[:-1]) if self._param.dim() > 1 else ()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = ember.Size(batch_shape)
        new._num_events = self._num_events
        expand_probs_logits(self, new, batch_shape, (*batch_shape, self._num_events))
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    def _nan(self) -> Any:
        shape = tuple(self._extended_shape())
        return ember.full(shape, math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mean(self) -> Any:
        return self._nan()

    @property
    def mode(self) -> Any:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Any:
        return self._nan()

    def sample(self, sample_shape: Any = ()) -> Any:
        """Inverse-CDF draws: one uniform per sample, located among the cumulative probabilities."""
        sample_shape = tuple(ember.Size(sample_shape))
        n = math.prod(sample_shape)
        with ember.no_grad():
            cdf = self.probs.reshape(-1, self._num_events).cumsum(-1)
            u = ember.rand((cdf.shape[0], n), dtype=cdf.dtype, device=cdf.device) * cdf[:, -1:]
            idx = ember.searchsorted(cdf, u, right=True).clamp(max=self._num_events - 1)
            return idx.T.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ember.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Any:
        logits = self.logits.clamp(min=ember.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Any:
        values = ember.arange(self._num_events, dtype=ember.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values


class OneHotCategorical(Distribution):
    """A Categorical whose samples are one-hot vectors of length ``K``."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        param_shape = tuple(self._categorical.param_shape)
        super().__init__(param_shape[:-1], param_shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, ember.Size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Any:
        return self._categorical._param

    @property
    def probs(self) -> Any:
        return self._categorical.probs

    @property
    def logits(self) -> Any:
        return self._categorical.logits

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape

    @property
    def mean(self) -> Any:
        return self._categorical.probs

    @property
    def mode(self) -> Any:
        probs = self._categorical.probs
        return ember.functional.one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Any:
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape: Any = ()) -> Any:
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return ember.functional.one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Any:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Any:
        n = self.event_shape[0]
        values = ember.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n, *self.batch_shape, n)) if expand else values
