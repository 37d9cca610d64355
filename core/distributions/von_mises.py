"""VonMises: the circular normal on angles (radians, taken modulo 2 pi)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from . import _ember as ember
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

_MAX_ROUNDS = 1000


def _log_i0(x: Any) -> Any:
    """``log I0(x)`` for ``x > 0``, from the exponentially scaled Bessel function (no overflow)."""
    return ember.log(ember.special.i0e(x)) + x


def _rejection_sample(loc: Any, concentration: Any, proposal_r: Any, shape: tuple[int, ...]) -> Any:
    """Best and Fisher's (1979) wrapped-Cauchy envelope, repeated only while some element is rejected."""
    x = ember.zeros(shape, dtype=loc.dtype, device=loc.device)
    done = ember.zeros(shape, dtype=ember.bool, device=loc.device)
    for _ in range(_MAX_ROUNDS):
        u1, u2, u3 = ember.rand((3, *shape), dtype=loc.dtype, device=loc.device).unbind()
        z = ember.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = ember.where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
        if bool(done.all()):
            break
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Density ``exp(concentration * cos(x - loc)) / (2 pi I0(concentration))``; draws by rejection, in float64."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "loc": constraints.real,
        "concentration": constraints.positive,
    }
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(tuple(self.loc.shape), (), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        shape = tuple(batch_shape)
        validate_args = self.__dict__.get("_validate_args")
        return type(self)(
            self.loc.expand(shape), self.concentration.expand(shape), validate_args=validate_args
        )

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return (
            self.concentration * ember.cos(value - self.loc)
            - math.log(2 * math.pi)
            - _log_i0(self.concentration)
        )

    @lazy_property
    def _proposal_r(self) -> Any:
        kappa = self.concentration.to(ember.float64)
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho**2) / (2 * rho)
        return ember.where(kappa < 1e-5, 1 / kappa + kappa, r)

    def sample(self, sample_shape: Any = ()) -> Any:
        """Float64 inside: in float32 the envelope degenerates for concentrations near 1e-4."""
        shape = tuple(self._extended_shape(sample_shape))
        with ember.no_grad():
            loc = self.loc.to(ember.float64)
            kappa = self.concentration.to(ember.float64)
            return _rejection_sample(loc, kappa, self._proposal_r, shape).to(self.loc.dtype)

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @lazy_property
    def variance(self) -> Any:
        """The circular variance ``1 - I1(k) / I0(k)``."""
        k = self.concentration
        return 1 - ember.special.i1e(k) / ember.special.i0e(k)
