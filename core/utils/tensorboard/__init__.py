"""``ember.utils.tensorboard``: ``SummaryWriter`` for TensorBoard (needs the ``tensorboard``
package: ``pip install ember[tensorboard]``; without it this import fails as PyTorch's does)."""

from __future__ import annotations

import tensorboard


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit()) or "0"
        parts.append(int(digits))
    return tuple(parts)


if not hasattr(tensorboard, "__version__") or _version(tensorboard.__version__) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter

from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
