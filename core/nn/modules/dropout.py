"""Dropout modules (active in training mode only)."""

from __future__ import annotations

from typing import Any

from ..._ops.convert import inplace as _inplace_form
from ..._tensor import Tensor
from ...autograd.graph import relabel
from .. import functional as F
from .module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d"]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

    def _drop(self, fn: Any, input: Tensor) -> Tensor:
        """``fn(input, p, training)``; with ``inplace`` written into ``input`` as PyTorch's
        in-place dropout is (same tensor, version bumped, ``MulBackward0``, leaf refused)."""
        if not (self.inplace and self.training and self.p > 0):
            return fn(input, self.p, self.training)
        before = input.grad_fn
        out = _inplace_form(fn)(input, self.p, self.training)
        if out.grad_fn is not None and out.grad_fn is not before:
            relabel(out, "MulBackward0")
        return out


class Dropout(_DropoutNd):
    """Zero elements with probability ``p`` in training, scaling the rest by ``1/(1-p)``."""

    def forward(self, input: Tensor) -> Tensor:
        return self._drop(F.dropout, input)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) input."""

    def forward(self, input: Tensor) -> Tensor:
        return self._drop(F.dropout1d, input)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        return self._drop(F.dropout2d, input)


class Dropout3d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return self._drop(F.dropout3d, input)


class AlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)
