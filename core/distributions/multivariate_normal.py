"""MultivariateNormal, held as the Cholesky factor of its covariance."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from . import _ember as ember
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, standard_normal

__all__ = ["MultivariateNormal"]


def batch_mv(bmat: Any, bvec: Any) -> Any:
    """Matrix-vector products over broadcast batch dims."""
    return ember.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def batch_mahalanobis(L: Any, x: Any) -> Any:
    """``x^T (L L^T)^-1 x`` by one triangular solve (``L`` broadcast to ``x``'s batch)."""
    batch = tuple(ember.broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1])))
    n = x.shape[-1]
    sol = ember.linalg.solve_triangular(
        L.expand(*batch, n, n), x.expand(*batch, n).unsqueeze(-1), upper=False
    ).squeeze(-1)
    return sol.pow(2).sum(-1)


def precision_to_scale_tril(P: Any) -> Any:
    """The lower Cholesky factor of ``P^-1`` without forming the inverse (flip, factor, solve)."""
    Lf = ember.linalg.cholesky(ember.flip(P, (-2, -1)))
    L_inv = ember.transpose(ember.flip(Lf, (-2, -1)), -2, -1)
    eye = ember.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return ember.linalg.solve_triangular(L_inv, eye.expand(L_inv.shape), upper=False)


class MultivariateNormal(Distribution):
    """Gaussian over vectors, from exactly one of covariance, precision or ``scale_tril``."""

    arg_constraints: ClassVar[dict[str, Any]] = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Any,
        covariance_matrix: Any = None,
        precision_matrix: Any = None,
        scale_tril: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
            )
        for name, m in (
            ("scale_tril", scale_tril),
            ("covariance_matrix", covariance_matrix),
            ("precision_matrix", precision_matrix),
        ):
            if m is None:
                continue
            if m.dim() < 2:
                raise ValueError(
                    f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions"
                )
            batch = tuple(ember.broadcast_shapes(tuple(m.shape[:-2]), tuple(loc.shape[:-1])))
            setattr(self, name, m.expand(*batch, -1, -1))
            source = name
        self.loc = loc.expand(*batch, -1)
        super().__init__(batch, tuple(self.loc.shape[-1:]), validate_args=validate_args)
        if source == "scale_tril":
            self._unbroadcasted_scale_tril = scale_tril
        elif source == "covariance_matrix":
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch = tuple(batch_shape)
        n = self._event_shape[0]
        new.loc = self.loc.expand(*batch, n)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*batch, n, n))
        Distribution.__init__(new, batch, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return (*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self) -> Any:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Any:
        L = self._unbroadcasted_scale_tril
        return ember.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Any:
        return ember.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(*self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Any:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Any:
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(tuple(self._batch_shape))
