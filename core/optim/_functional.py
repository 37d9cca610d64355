"""In-place helpers the update formulas use, written once with ember ops.

They follow PyTorch's kernels' order of operations (``self + value * t1 / t2``) and round where
PyTorch's vector loops round: ``lerp_`` and ``addcmul_`` are the frontend's own (fused
multiply-adds, as PyTorch's), so float32 results agree bit for bit.
"""

from __future__ import annotations

from .._tensor import Tensor

__all__ = ["addcdiv_", "addcmul_", "lerp_"]


def lerp_(t: Tensor, end: Tensor, weight: float) -> Tensor:
    """``t += weight * (end - t)``: ``Tensor.lerp_`` (two-sided, each side one rounding)."""
    return t.lerp_(end, weight)  # type: ignore[attr-defined,no-any-return]


def addcmul_(t: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0) -> Tensor:
    """``t += (value * t1) * t2``: ``Tensor.addcmul_`` (the last multiply and the add rounded once)."""
    return t.addcmul_(t1, t2, value=value)  # type: ignore[attr-defined,no-any-return]


def addcdiv_(t: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0) -> Tensor:
    """``t += value * t1 / t2``."""
    q = t1 * value if value != 1 else t1.clone()
    return t.add_(q.div_(t2))
