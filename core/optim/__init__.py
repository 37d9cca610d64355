"""Optimizers and learning-rate schedulers, with PyTorch's algorithms and API.

Example::

    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt.zero_grad(); loss.backward(); opt.step()
"""

from __future__ import annotations

from typing import Any

from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "lr_scheduler",
]


def __getattr__(name: str) -> Any:
    # ``ember.optim.lr_scheduler`` loads on first use: training scripts without a scheduler
    # (and every ``import ember``) skip its import.
    if name == "lr_scheduler":
        import importlib

        return importlib.import_module(f"{__name__}.lr_scheduler")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
