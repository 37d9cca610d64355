"""In-place helpers the update formulas use, written once with ember ops.

They follow PyTorch's kernels' order of operations (``self + value * t1 / t2``) so the
results agree to float32 rounding.
"""

from __future__ import annotations

from .._tensor import Tensor

__all__ = ["addcdiv_", "addcmul_", "lerp_"]


def lerp_(t: Tensor, end: Tensor, weight: float) -> Tensor:
    """``t += weight * (end - t)`` (PyTorch's form for ``weight < 0.5``; else from ``end``)."""
    diff = end - t
    if weight < 0.5:
        return t.add_(diff.mul_(weight))
    return t.copy_(end - diff.mul_(1.0 - weight))


def addcmul_(t: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0) -> Tensor:
    """``t += value * t1 * t2``."""
    prod = t1 * value if value != 1 else t1.clone()
    return t.add_(prod.mul_(t2))


def addcdiv_(t: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0) -> Tensor:
    """``t += value * t1 / t2``."""
    q = t1 * value if value != 1 else t1.clone()
    return t.add_(q.div_(t2))
