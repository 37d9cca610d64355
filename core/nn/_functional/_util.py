"""Small shared helpers of the functional ops: tuples of ints, reductions, no-record blocks
(``NoRecord`` is ``_ops._composite``'s, re-exported)."""

from __future__ import annotations

from typing import Any

from ..._ops._composite import NoRecord
from ..._tensor import Tensor
from ...autograd.grad_mode import state as _grad

__all__ = ["NoRecord", "apply_reduction", "ntuple", "recording"]


def recording(*tensors: Any) -> bool:
    """True when grad mode is on and one of ``tensors`` requires grad."""
    if not _grad.enabled:
        return False
    return any(getattr(t, "requires_grad", False) for t in tensors)


def ntuple(v: Any, n: int, name: str = "value") -> tuple[int, ...]:
    """``v`` as an n-tuple of ints (an int repeats; a 1-element sequence repeats)."""
    if isinstance(v, int):
        return (v,) * n
    t = tuple(int(x) for x in v)
    if len(t) == 1:
        return t * n
    if len(t) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values, got {list(t)}"
        )
    return t


def apply_reduction(loss: Tensor, reduction: str) -> Tensor:
    """``none`` keeps the elementwise loss, ``mean`` averages it, ``sum`` adds it up."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")
