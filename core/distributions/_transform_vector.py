"""Transforms over event dims: Independent, Softmax, StickBreaking, LowerCholesky, PositiveDefinite."""

from __future__ import annotations

from typing import Any

from . import _ember as ember
from . import constraints
from ._transform_base import Transform, sum_rightmost

__all__ = [
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "SoftmaxTransform",
    "StickBreakingTransform",
]


class IndependentTransform(Transform):
    """``base_transform`` with its rightmost ``reinterpreted_batch_ndims`` dims made event dims."""

    def __init__(
        self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0
    ) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> IndependentTransform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size
        )

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> Any:
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> Any:
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Any) -> Any:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Any) -> Any:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)


def _at_least_1d(shape: Any) -> Any:
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return shape


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by softmax; not bijective (no log-Jacobian)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x: Any) -> Any:
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Any) -> Any:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        return _at_least_1d(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return _at_least_1d(shape)


def _clipped_sigmoid(x: Any) -> Any:
    fi = ember.finfo(x.dtype)
    return ember.sigmoid(x).clamp(min=fi.tiny, max=1.0 - fi.eps)


class StickBreakingTransform(Transform):
    """``R^(K-1)`` to the K-simplex, bijectively: each coordinate takes a sigmoid share of what is left."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _offset(self, n: int, x: Any) -> Any:
        """``log(n, n-1, ..., 1)``: centres the shares so ``x = 0`` maps to the uniform point."""
        return ember.arange(n, 0, -1, dtype=x.dtype, device=x.device).log()

    def _call(self, x: Any) -> Any:
        z = _clipped_sigmoid(x - self._offset(x.shape[-1], x))
        z_cumprod = (1 - z).cumprod(-1)
        pad = ember.functional.pad
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y: Any) -> Any:
        y_crop = y[..., :-1]
        sf = (1 - y_crop.cumsum(-1)).clamp(min=ember.finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + self._offset(y_crop.shape[-1], y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        x = x - self._offset(x.shape[-1], x)
        return (-x + ember.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        shape = tuple(_at_least_1d(shape))
        return ember.Size((*shape[:-1], shape[-1] + 1))

    def inverse_shape(self, shape: Any) -> Any:
        shape = tuple(_at_least_1d(shape))
        return ember.Size((*shape[:-1], shape[-1] - 1))


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal (``exp`` of the diagonal)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: Any) -> Any:
        return x.tril(-1) + ember.diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y: Any) -> Any:
        return y.tril(-1) + ember.diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones: ``L L^T`` of their LowerCholeskyTransform."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: Any) -> Any:
        low = LowerCholeskyTransform()(x)
        return ember.matmul(low, low.mT)

    def _inverse(self, y: Any) -> Any:
        return LowerCholeskyTransform().inv(ember.linalg.cholesky(y))
