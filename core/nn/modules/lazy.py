"""Lazy layers: ``in_features``/``in_channels`` come from the first input.

Parameters exist from the start (empty), so optimizers can hold them; the first call gives
them their shapes in place (same Parameter objects), initialises them, and the module turns
into its ordinary class (``LazyLinear`` → ``Linear``), as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from ..._creation import empty
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from .conv import Conv1d, Conv2d
from .linear import Linear
from .module import Module

__all__ = ["LazyConv1d", "LazyConv2d", "LazyLinear"]


def _materialise(p: Parameter | None, shape: tuple[int, ...]) -> None:
    if p is not None:
        with no_grad():
            p.data = empty(shape, dtype=p.dtype, device=p.device)


class LazyLinear(Linear):
    """``Linear`` whose ``in_features`` is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        Module.__init__(self)
        self.in_features, self.out_features = 0, out_features
        self.weight = Parameter(empty(0, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(0, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)

    def __call__(self, input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if type(self) is LazyLinear:
            self.in_features = input.shape[-1]
            _materialise(self.weight, (self.out_features, self.in_features))
            _materialise(self.bias, (self.out_features,))
            self.reset_parameters()
            self.__class__ = self.cls_to_become  # type: ignore[assignment]
        return Module.__call__(self, input, *args, **kwargs)


class _LazyConv:
    _base: type = Conv2d

    def __init__(self, out_channels: int, kernel_size: Any, *args: Any, **kwargs: Any) -> None:
        self._base.__init__(self, 1, out_channels, kernel_size, *args, **kwargs)  # type: ignore[misc]
        self.in_channels = 0

    def __call__(self, input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if self.in_channels == 0:
            nd = self._base._nd  # type: ignore[attr-defined]
            self.in_channels = input.shape[1] if input.ndim == nd + 2 else input.shape[0]
            _materialise(self.weight, (self.out_channels, self.in_channels // self.groups) + self.kernel_size)  # type: ignore[attr-defined]
            self.reset_parameters()  # type: ignore[attr-defined]
            self.__class__ = self._base
        return Module.__call__(self, input, *args, **kwargs)  # type: ignore[arg-type]


class LazyConv2d(_LazyConv, Conv2d):
    """``Conv2d`` whose ``in_channels`` comes from the first input."""

    _base = Conv2d


class LazyConv1d(_LazyConv, Conv1d):
    """``Conv1d`` whose ``in_channels`` comes from the first input."""

    _base = Conv1d
