"""Invertible maps with log-Jacobians, for ``TransformedDistribution``.

``t(x)`` maps forward, ``t.inv(y)`` back, ``t.log_abs_det_jacobian(x, y)`` is
``log |dy/dx|`` summed over the transform's event dims. ``cache_size=1`` remembers the last
pair, so ``inv`` of a value ``t`` just produced is exact (PyTorch's behaviour).
"""

from __future__ import annotations

from ._transform_base import ComposeTransform, Transform, identity_transform, sum_rightmost
from ._transform_pointwise import (
    AbsTransform,
    AffineTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
)
from ._transform_vector import (
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "ComposeTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "identity_transform",
    "sum_rightmost",
]
