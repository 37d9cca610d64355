"""ContinuousBernoulli: the normalised ``p**x (1-p)**(1-x)`` on ``[0, 1]`` (Loaiza-Ganem and Cunningham, 2019).

Near ``p = 1/2`` the closed forms divide 0 by 0, so inside ``lims`` Taylor expansions stand in,
as in PyTorch.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any, ClassVar

from . import _ember as ember
from . import constraints
from .continuous import ExponentialFamily
from .discrete import either_param
from .distribution import Distribution
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """A continuous law on ``[0, 1]`` shaped like a Bernoulli likelihood; reparameterised by its inverse CDF."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self,
        probs: Any = None,
        logits: Any = None,
        lims: tuple[float, float] = (0.499, 0.501),
        validate_args: Any = None,
    ) -> None:
        either_param(probs, logits)
        if probs is not None:
            scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(tuple(batch_shape)))
                new._param = getattr(new, name)
        Distribution.__init__(new, ember.Size(batch_shape), validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _stable(self) -> Any:
        """Where the closed forms are safe: ``probs`` outside ``lims``."""
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Any:
        return ember.where(self._stable(), self.probs, ember.full_like(self.probs, self._lims[0]))

    def _cont_bern_log_norm(self) -> Any:
        """The log normalising constant as a function of ``probs``."""
        p = self._cut_probs()
        below = ember.where(p <= 0.5, p, ember.zeros_like(p))
        above = ember.where(p >= 0.5, p, ember.ones_like(p))
        log_norm = ember.log(ember.abs(ember.log1p(-p) - ember.log(p))) - ember.where(
            p <= 0.5, ember.log1p(-2.0 * below), ember.log(2.0 * above - 1.0)
        )
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(self._stable(), log_norm, taylor)

    @property
    def mean(self) -> Any:
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / (ember.log1p(-p) - ember.log(p))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ember.where(self._stable(), mus, taylor)

    @property
    def stddev(self) -> Any:
        return self.variance.sqrt()

    @property
    def variance(self) -> Any:
        p = self._cut_probs()
        v = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / (ember.log1p(-p) - ember.log(p)).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._stable(), v, taylor)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    def sample(self, sample_shape: Any = ()) -> Any:
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = ember.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        unbounded = ember.where(self._stable(), cdfs, value)
        inside = ember.where(value >= 1.0, ember.ones_like(unbounded), unbounded)
        return ember.where(value <= 0.0, ember.zeros_like(inside), inside)

    def icdf(self, value: Any) -> Any:
        p = self._cut_probs()
        closed = (ember.log1p(-p + value * (2.0 * p - 1.0)) - ember.log1p(-p)) / (
            ember.log(p) - ember.log1p(-p)
        )
        return ember.where(self._stable(), closed, value)

    def entropy(self) -> Any:
        log_p0 = ember.log1p(-self.probs)
        log_p1 = ember.log(self.probs)
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0
