"""``biject_to(constraint)`` and ``transform_to(constraint)``: transforms from unconstrained space.

``biject_to`` gives bijections (for change of variables, e.g. HMC); ``transform_to`` may give
non-bijective maps (for optimisation over a constrained parameter). Both dispatch on the
constraint's type; ``register`` adds a factory for a new constraint type.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Number
from typing import Any

from . import constraints
from ._transform_base import ComposeTransform, Transform, identity_transform
from ._transform_pointwise import AffineTransform, ExpTransform, SigmoidTransform
from ._transform_vector import (
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A map from constraint types to factories ``constraint -> Transform``."""

    def __init__(self) -> None:
        self._registry: dict[type, Callable[[Any], Transform]] = {}

    def register(self, constraint: Any, factory: Callable[[Any], Transform] | None = None) -> Any:
        """Register ``factory`` for ``constraint``'s type (a class or an instance); usable as a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: Any) -> Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(constraint: Any) -> Transform:
    return identity_transform


def _independent(registry: ConstraintRegistry) -> Callable[[Any], Transform]:
    def factory(constraint: Any) -> Transform:
        base = registry(constraint.base_constraint)
        return IndependentTransform(base, constraint.reinterpreted_batch_ndims)

    return factory


def _greater_than(constraint: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint: Any) -> Transform:
    lo, hi = constraint.lower_bound, constraint.upper_bound
    if isinstance(lo, Number) and isinstance(hi, Number) and lo == 0 and hi == 1:
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(lo, hi - lo)])


for _registry in (biject_to, transform_to):
    _registry.register(constraints.real, _real)
    _registry.register(constraints.independent, _independent(_registry))
    _registry.register(constraints.greater_than, _greater_than)
    _registry.register(constraints.greater_than_eq, _greater_than)
    _registry.register(constraints.less_than, _less_than)
    _registry.register(constraints.interval, _interval)
    _registry.register(constraints.half_open_interval, _interval)

# positive and nonnegative are GreaterThan(0) and GreaterThanEq(0): exp then a shift by 0, as
# in PyTorch (whose separate ExpTransform registration is overridden by the same type's).
biject_to.register(constraints.simplex, lambda c: StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda c: LowerCholeskyTransform())
transform_to.register(constraints.positive_definite, lambda c: PositiveDefiniteTransform())
