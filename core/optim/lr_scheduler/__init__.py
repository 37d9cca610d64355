"""Learning-rate schedulers with PyTorch's formulas: ``sched.step()`` once per epoch (or batch).

Example::

    sched = ember.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...); sched.step()
"""

from __future__ import annotations

from ._base import LRScheduler
from ._combine import ChainedScheduler, ReduceLROnPlateau, SequentialLR
from ._cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from ._simple import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)

_LRScheduler = LRScheduler

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]
