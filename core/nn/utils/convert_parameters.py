"""``parameters_to_vector`` / ``vector_to_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

from ..._ops.join import cat
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated into one vector (differentiable)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into each parameter's data."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset : offset + n].view_as(p).data
        offset += n
