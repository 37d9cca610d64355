"""``where`` and ``clamp``: selection between values, with PyTorch's promotion."""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from .._creation import full
from .._dispatch import call
from .._dtype import pt_name
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from ._args import invalid_combination
from ._common import broadcast_shape, same_device, sum_to
from ._composite import NoRecord
from .pointwise_binary import _scalar_for, maximum, minimum, result_type

PUBLIC = public(
    __name__,
    {
        "clamp": op("clip", method=True, inplace=("clamp", "clip")),
        "where": op(),
    },
)
__all__ = [*PUBLIC, "clip"]


def _where_rule(n: Any, g: Tensor) -> tuple:
    cond, sa, sb = n.ctx
    need = n.needs_input_grad
    ga = sum_to(where(cond, g, 0), sa) if need[1] else None
    gb = sum_to(where(cond, 0, g), sb) if need[2] else None
    return (None, ga, gb)


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """``input`` where ``condition`` else ``other``, broadcasting all three.

    With one argument, the same as ``nonzero(condition, as_tuple=True)``.
    """
    if input is None and other is None:
        from .search import nonzero  # cycle: ember._ops.search

        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        raise invalid_combination("where", (condition, input, other))
    if condition.dtype is not D.bool_:
        got = pt_name(condition.dtype) if isinstance(condition, Tensor) else type(condition).__name__
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype {got}"
        )
    ta, tb = isinstance(input, Tensor), isinstance(other, Tensor)
    if ta or tb:
        dt = result_type(input, other)
    else:
        dt = result_type(wrap_scalar(condition, input), other)
    shape = condition._shape
    for x in (input, other):
        if isinstance(x, Tensor):
            same_device(condition, x, "where")
            shape = broadcast_shape(shape, x._shape)
    be = condition._be
    xc = condition._data if condition._shape == shape else call(be, "expand", condition._data, shape)
    xs = []
    for x in (input, other):
        if isinstance(x, Tensor):
            d = x._data if x.dtype is dt else call(be, "cast", x._data, dt)
            xs.append(d if x._shape == shape else call(be, "expand", d, shape))
        else:
            xs.append(_scalar_for(x, dt))
    if not ta and not tb:
        xs[0] = call(be, "expand", call(be, "full", (), xs[0], dt, condition._device.index or 0), shape)
    out = wrap(call(be, "where", xc, xs[0], xs[1]), condition._be, condition._device, dt, shape)
    if _grad.enabled and (getattr(input, "requires_grad", False) or getattr(other, "requires_grad", False)):
        sa = input._shape if ta else ()
        sb = other._shape if tb else ()
        record("WhereBackward0", _where_rule, out, (condition, input, other), (), (condition, sa, sb))
    return out


def wrap_scalar(like: Tensor, value: Any) -> Tensor:
    return full((), value, device=like._device)


def _clamp_rule(n: Any, g: Tensor) -> tuple:
    x, lo, hi = n.ctx
    mask = None
    if lo is not None:
        mask = x >= lo
    if hi is not None:
        mask = (x <= hi) if mask is None else mask & (x <= hi)
    return (where(mask, g, 0),)  # type: ignore[arg-type]


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Limit values to ``[min, max]``; the result dtype promotes with the bounds (PyTorch 1.13+)."""
    if min is None and max is None:
        raise RuntimeError("ember.clamp: At least one of 'min' or 'max' must not be None")
    for bound in (min, max):
        if bound is not None and not isinstance(bound, (Tensor, bool, int, float)):
            given = {k: v for k, v in (("min", min), ("max", max)) if v is not None}
            raise invalid_combination("clamp", (input,), given)
    if input.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    with NoRecord():
        out = input
        if min is not None:
            out = maximum(out, min)
        if max is not None:
            out = minimum(out, max)
        if out is input:
            out = input.clone()
        dt = result_type(input, min) if min is not None else input.dtype
        if max is not None:
            dt = D.promote_types(dt, result_type(input, max))
        if out.dtype is not dt:
            out = out.to(dt)
    tensors = isinstance(min, Tensor) or isinstance(max, Tensor)
    if tensors and _grad.enabled:
        inputs = (input, min if isinstance(min, Tensor) else None, max if isinstance(max, Tensor) else None)
        record("ClampBackward0", _clamp_tensors_rule, out, inputs, (), (input, min, max))
    elif _grad.enabled and input.requires_grad:
        record("ClampBackward1", _clamp_rule, out, (input,), (), (input, min, max))
    return out


def _clamp_tensors_rule(n: Any, g: Tensor) -> tuple:
    """PyTorch's masks: the input inside [min, max]; min where it won (and min < max);
    max where it won or where max < min (then max is the result everywhere)."""
    x, lo, hi = n.ctx
    need = n.needs_input_grad
    (gx,) = _clamp_rule(n, g)
    glo = ghi = None
    if need[1]:
        m = x < lo if hi is None else (x < lo) & (lo < hi)
        glo = sum_to(where(m, g, 0), lo._shape)
    if need[2]:
        m = x > hi if lo is None else (x > hi) | (hi < lo)
        ghi = sum_to(where(m, g, 0), hi._shape)
    return (gx if need[0] else None), glo, ghi


clip = clamp
