"""In-place helpers the update formulas use, written once with ember ops.

They follow PyTorch's kernels' order of operations (``self + value * t1 / t2``), and round
where PyTorch's vector loops round: ``lerp_`` and ``addcmul_`` end in a fused multiply-add
(one rounding), so float32 results agree bit for bit.
"""

from __future__ import annotations

import numpy as np
from ember.backends import dtypes as D

from .._tensor import Tensor

__all__ = ["addcdiv_", "addcmul_", "lerp_"]


def lerp_(t: Tensor, end: Tensor, weight: float) -> Tensor:
    """``t += weight * (end - t)`` (PyTorch's form for ``weight < 0.5``; else from ``end``),
    each one fused multiply-add; ``1 - weight`` at ``t``'s precision, as PyTorch computes it."""
    diff = end - t
    if weight < 0.5:
        return t.add_(diff, alpha=weight)
    one_minus = float(np.float32(1) - np.float32(weight)) if t.dtype is D.float32 else 1.0 - weight
    return t.copy_(end.sub(diff, alpha=one_minus))


def addcmul_(t: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0) -> Tensor:
    """``t += (value * t1) * t2``, the last multiply and the add rounded once (PyTorch's
    ``addcmul_``): float32 through float64, where that product is exact, when the device has
    float64; else multiplied, then added."""
    prod = t1 * value if value != 1 else t1
    f32, f64 = D.float32, D.float64
    if t.dtype is f32 and prod.dtype is f32 and t2.dtype is f32 and f64 in t._be.backend.dtypes:
        return t.copy_(prod.to(f64).mul_(t2.to(f64)).add_(t.to(f64)))
    return t.add_(prod * t2)


def addcdiv_(t: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0) -> Tensor:
    """``t += value * t1 / t2``."""
    q = t1 * value if value != 1 else t1.clone()
    return t.add_(q.div_(t2))
