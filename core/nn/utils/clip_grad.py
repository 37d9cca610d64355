"""Gradient clipping: by total norm and by value (in place, without recording)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..._creation import tensor
from ..._ops import pointwise_unary as U
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm"]


def _grads(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _norm(t: Tensor, p: float) -> Tensor:
    if p == 2 and t.dtype.is_floating_point:  # no |t| pass: one product and its sum
        return (t * t).sum().sqrt()
    a = U.abs(t)
    if p == float("inf"):
        return a.amax()
    return (a**p).sum() ** (1.0 / p)


def get_total_norm(
    tensors: Iterable[Tensor], norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach: Any = None
) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` taken together."""
    ts = list(tensors)
    if not ts:
        return tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        norms = [_norm(t, norm_type) for t in ts]
        if norm_type == float("inf"):
            total = norms[0]
            for n in norms[1:]:
                total = total.maximum(n)
        else:
            total = _norm(_stack(norms), norm_type)
    if error_if_nonfinite and not bool(U.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total


def _stack(ts: list[Tensor]) -> Tensor:
    from ..._ops.join import stack

    return stack(ts)


def clip_grad_norm_(
    parameters: Any,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Any = None,
) -> Tensor:
    """Scale all gradients by ``min(1, max_norm / (total_norm + 1e-6))``; returns the total norm."""
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    with no_grad():
        coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
        cast: dict[Any, Tensor] = {}  # one cast per dtype, not per gradient
        for g in grads:
            c = cast.get(g.dtype)
            if c is None:
                c = cast[g.dtype] = coef if coef.dtype == g.dtype else coef.to(g.dtype)
            g.mul_(c)
    return total


def clip_grad_value_(parameters: Any, clip_value: float, foreach: Any = None) -> None:
    """Clamp every gradient into ``[-clip_value, clip_value]`` in place."""
    v = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-v, v)
