"""Small top-level helpers: type queries, broadcast_shapes, determinism switches."""

from __future__ import annotations

from typing import Any

from ember.backends import DType, registry
from ember.backends.dtypes import promote_types as _promote

from ._ops._common import broadcast_shape
from ._tensor import Size, Tensor

__all__ = [
    "are_deterministic_algorithms_enabled",
    "broadcast_shapes",
    "is_complex",
    "is_floating_point",
    "is_tensor",
    "numel",
    "promote_types",
    "use_deterministic_algorithms",
]


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    return input.dtype.is_complex


def numel(input: Tensor) -> int:
    return input.numel()


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape all ``shapes`` broadcast to: ``broadcast_shapes((2, 1), (3,)) == (2, 3)``."""
    out: tuple[int, ...] = ()
    for s in shapes:
        out = broadcast_shape(out, (s,) if isinstance(s, int) else tuple(s))
    return Size(out)


def promote_types(type1: DType, type2: DType) -> DType:
    """The smallest dtype both ``type1`` and ``type2`` convert to without losing category."""
    return _promote(type1, type2)


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make kernels that backends declare nondeterministic raise instead of running."""
    registry.set_deterministic(bool(mode) and not warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return registry.is_deterministic()
