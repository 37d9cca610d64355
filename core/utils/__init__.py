"""Utilities: ``data`` (datasets, samplers, DataLoader), ``checkpoint`` (activation
checkpointing), ``backcompat`` (PyTorch's legacy warning switches) and ``tensorboard``
(``SummaryWriter``; imported on first access, as it needs the optional ``tensorboard`` package)."""

from __future__ import annotations

import importlib
from typing import Any

from . import backcompat, checkpoint, data

__all__ = ["backcompat", "checkpoint", "data", "tensorboard"]


def __getattr__(name: str) -> Any:
    if name == "tensorboard":
        return importlib.import_module(".tensorboard", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
