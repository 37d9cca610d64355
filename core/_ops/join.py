"""Joining tensors: ``cat`` (a primitive) and ``stack`` (cat of unsqueezed views)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember.backends.dtypes import promote_types

from .._autocast_hook import autocast_op
from .._dispatch import call
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel
from ._args import typename
from ._common import norm_dim, same_device

PUBLIC = public(
    __name__,
    {
        "cat": op("concat", "concatenate"),
        "hstack": op(),
        "stack": op(),
        "vstack": op("row_stack"),
    },
)
__all__ = [*PUBLIC, "concat", "concatenate"]


def _tensor_list(fn: str, tensors: Any) -> list[Tensor]:
    """``tensors`` as a list, refused as PyTorch's parser does: a Tensor or a non-sequence is
    not a tuple of Tensors, and each element must be one."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not {typename(tensors)}"
        )
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {typename(t)}")
    return list(tensors)


def _cat_rule(n: Any, g: Tensor) -> tuple:
    d, sizes = n.ctx
    return tuple(g.narrow(d, start, size) for start, size in sizes)


@autocast_op("cat")
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension (dtypes promote, shapes must match)."""
    ts = _tensor_list("cat", tensors)
    if not ts:
        raise ValueError("ember.cat(): expected a non-empty list of Tensors")
    ref = next((t for t in ts if not (t.ndim == 1 and t._shape[0] == 0)), ts[0])
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = norm_dim(dim, ref.ndim)
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = promote_types(dt, t.dtype)
    parts, sizes, start = [], [], 0
    for i, t in enumerate(ts):
        same_device(ref, t, "cat")
        if t.ndim == 1 and t._shape[0] == 0 and ref.ndim != 1:
            sizes.append((start, 0))
            continue  # legacy: empty 1-D tensors are skipped, as in PyTorch
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        if any(a != b for j, (a, b) in enumerate(zip(t._shape, ref._shape)) if j != d):
            raise RuntimeError(
                f"Sizes of tensors must match except in dimension {d}. Expected size "
                f"{_mismatch(ref, t, d)[0]} but got size {_mismatch(ref, t, d)[1]} for tensor number {i} in the list."
            )
        parts.append(t._data if t.dtype is dt else call(t._be, "cast", t._data, dt))
        sizes.append((start, t._shape[d]))
        start += t._shape[d]
    shape = ref._shape[:d] + (start,) + ref._shape[d + 1 :]
    out = wrap(call(ref._be, "cat", parts, d), ref._be, ref._device, dt, shape)
    if _grad.enabled and any(t.requires_grad for t in ts):
        record("CatBackward0", _cat_rule, out, tuple(ts), (), (d, sizes))
    return out


def _mismatch(ref: Tensor, t: Tensor, d: int) -> tuple[int, int]:
    if t.ndim != ref.ndim:
        return ref.ndim, t.ndim
    for j, (a, b) in enumerate(zip(ref._shape, t._shape)):
        if j != d and a != b:
            return a, b
    return 0, 0


concat = cat

concatenate = cat


@autocast_op("stack")
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join equally shaped tensors along a new dimension ``dim``."""
    ts = _tensor_list("stack", tensors)
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(ts):
        if t._shape != ts[0]._shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(ts[0]._shape)} at entry 0 "
                f"and {list(t._shape)} at entry {i}"
            )
    d = norm_dim(dim, ts[0].ndim + 1)
    return relabel(cat([t.unsqueeze(d) for t in ts], d), "StackBackward0")


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    if not _tensor_list("hstack", tensors):
        raise RuntimeError("hstack expects a non-empty TensorList")
    ts = [t if t.ndim else t.reshape(1) for t in tensors]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    if not _tensor_list("vstack", tensors):
        raise RuntimeError("vstack expects a non-empty TensorList")
    ts = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    return cat(ts, 0)
