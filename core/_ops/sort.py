"""Sorting: ``sort`` (a stable primitive), ``argsort`` and ``topk`` built on it."""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from .._dispatch import call
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel
from ._common import norm_dim
from .reduce import return_types

__all__ = ["argsort", "msort", "sort", "topk"]


def _sort_rule(n: Any, g: Tensor) -> tuple:
    shape, d, idx = n.ctx
    from .._creation import zeros

    return (zeros(shape, dtype=g.dtype, device=g._device).scatter(d, idx, g),)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """``(values, indices)`` sorted along ``dim``; equal elements keep their order; NaN is largest."""
    if input.dtype.is_complex:
        raise RuntimeError("sort(): complex tensors are not supported")
    if input.ndim == 0:
        return return_types.sort(
            input.clone(),
            wrap(
                call(input._be, "full", (), 0, D.int64, input._device.index or 0),
                input._be,
                input._device,
                D.int64,
                (),
            ),
        )
    d = norm_dim(dim, input.ndim)
    vals, idx = call(input._be, "sort", input._data, d, bool(descending))
    values = wrap(vals, input._be, input._device, input.dtype, input._shape)
    indices = wrap(idx, input._be, input._device, D.int64, input._shape)
    if _grad.enabled and input.requires_grad:
        record("SortBackward0", _sort_rule, values, (input,), (), (input._shape, d, indices))
    return return_types.sort(values, indices)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """Indices that sort ``input`` along ``dim``."""
    return sort(input, dim, descending, stable).indices


def msort(input: Tensor) -> Tensor:
    return sort(input, 0).values


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    d = norm_dim(dim, input.ndim) if input.ndim else 0
    size = input._shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = sort(input, d, descending=largest)
    if input.ndim == 0:
        return return_types.topk(values, indices)
    return return_types.topk(relabel(values.narrow(d, 0, k), "TopkBackward0"), indices.narrow(d, 0, k))
