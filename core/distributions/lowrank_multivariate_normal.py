"""LowRankMultivariateNormal: covariance ``W W^T + diag(D)``, handled through the m x m capacitance."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from . import _ember as ember
from . import constraints
from .distribution import Distribution
from .multivariate_normal import batch_mahalanobis, batch_mv
from .utils import lazy_property, standard_normal

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(k: Any) -> Any:
    n = k.shape[-1]
    return k + ember.eye(n, dtype=k.dtype, device=k.device)


def batch_capacitance_tril(w: Any, d: Any) -> Any:
    """Cholesky factor of ``I + W^T D^-1 W`` (m x m, with m the rank)."""
    wt_dinv = w.mT / d.unsqueeze(-2)
    return ember.linalg.cholesky(_plus_identity(ember.matmul(wt_dinv, w)))


def batch_lowrank_logdet(w: Any, d: Any, capacitance_tril: Any) -> Any:
    """``log det(W W^T + D)`` by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + d.log().sum(-1)


def batch_lowrank_mahalanobis(w: Any, d: Any, x: Any, capacitance_tril: Any) -> Any:
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    wt_dinv = w.mT / d.unsqueeze(-2)
    term1 = (x.pow(2) / d).sum(-1)
    return term1 - batch_mahalanobis(capacitance_tril, batch_mv(wt_dinv, x))


class LowRankMultivariateNormal(Distribution):
    """Gaussian over vectors with covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Any, cov_factor: Any, cov_diag: Any, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch dimensions"
            )
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {ember.Size(event_shape)}")
        try:
            loc_, self.cov_factor, diag_ = ember.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1)
            )
        except RuntimeError as exc:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, cov_diag {cov_diag.shape}"
            ) from exc
        self.loc = loc_[..., 0]
        self.cov_diag = diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(tuple(self.loc.shape[:-1]), event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        loc_shape = (*batch_shape, *self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(*loc_shape, self.cov_factor.shape[-1])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, ember.Size(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return (*self._batch_shape, *self._event_shape, *self._event_shape)

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @lazy_property
    def variance(self) -> Any:
        v = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return v.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self) -> Any:
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        w = self._unbroadcasted_cov_factor / d_sqrt
        k = _plus_identity(ember.matmul(w, w.mT))
        return (d_sqrt * ember.linalg.cholesky(k)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Any:
        w = self._unbroadcasted_cov_factor
        cov = ember.matmul(w, w.mT) + ember.diag_embed(self._unbroadcasted_cov_diag)
        return cov.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Any:
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = ember.linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        prec = ember.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - ember.matmul(a.mT, a)
        return prec.expand(self._matrix_shape())

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        w_shape = (*shape[:-1], self.cov_factor.shape[-1])
        eps_w = standard_normal(w_shape, self.loc.dtype, self.loc.device)
        eps_d = standard_normal(shape, self.loc.dtype, self.loc.device)
        return (
            self.loc
            + batch_mv(self._unbroadcasted_cov_factor, eps_w)
            + self._unbroadcasted_cov_diag.sqrt() * eps_d
        )

    def _log_det(self) -> Any:
        return batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        m = batch_lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            value - self.loc,
            self._capacitance_tril,
        )
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + m)

    def entropy(self) -> Any:
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h if len(self._batch_shape) == 0 else h.expand(tuple(self._batch_shape))
