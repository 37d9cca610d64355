"""Operand handling shared by the elementwise extras: promotion to a common (floating)
dtype and PyTorch's argument checks."""

from __future__ import annotations

from typing import Any

from .._creation import full
from .._dtype import get_default_dtype, pt_name
from .._tensor import Tensor
from .pointwise_binary import result_type

__all__ = ["as_float", "check_tensors", "promoted_pair", "scalar_tensor"]


def as_float(x: Tensor) -> Tensor:
    return x.to(get_default_dtype()) if x.dtype.category < 2 else x


def scalar_tensor(x: Any, like: Tensor) -> Tensor:
    if isinstance(x, Tensor):
        return x

    dt = result_type(like, x)
    return full((), x, dtype=dt, device=like._device)


def check_tensors(name: str, a: Any, b: Any, floats_only: bool = False) -> None:
    """PyTorch's argument checks for ops that take two tensors (and only floating ones)."""
    for pos, (arg, x) in enumerate((("input", a), ("other", b)), 1):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}"
            )
    if floats_only and a.dtype.category < 2 and b.dtype.category < 2:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{pt_name(a.dtype)}'")


def promoted_pair(a: Any, b: Any, floating: bool = True) -> tuple[Tensor, Tensor]:
    """Both operands as tensors of their promoted dtype (floating if asked)."""
    like = a if isinstance(a, Tensor) else b
    dt = result_type(a, b)
    if floating and dt.category < 2:
        dt = get_default_dtype()
    ta, tb = scalar_tensor(a, like), scalar_tensor(b, like)
    return ta.to(dt), tb.to(dt)
