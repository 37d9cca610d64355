"""Padding modules: ``ZeroPad2d``, ``ConstantPad1d/2d``, ``ReflectionPad1d/2d``, ``ReplicationPad1d/2d``, ``CircularPad1d/2d``."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


class _Pad(Module):
    _n = 2
    _mode = "constant"

    def __init__(self, padding: Any, value: float | None = None) -> None:
        super().__init__()
        self.padding = (padding,) * (2 * self._n) if isinstance(padding, int) else tuple(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value or 0.0)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        if type(self).__name__.startswith("Constant"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class ConstantPad1d(_Pad):
    _n = 1

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad2d(_Pad):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ZeroPad1d(_Pad):
    _n = 1

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ZeroPad2d(_Pad):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ReflectionPad1d(_Pad):
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_Pad):
    _mode = "reflect"


class ReplicationPad1d(_Pad):
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_Pad):
    _mode = "replicate"


class CircularPad1d(_Pad):
    _n, _mode = 1, "circular"


class CircularPad2d(_Pad):
    _mode = "circular"


class ConstantPad3d(_Pad):
    _n = 3

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ZeroPad3d(_Pad):
    _n = 3

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ReflectionPad3d(_Pad):
    _n, _mode = 3, "reflect"


class ReplicationPad3d(_Pad):
    _n, _mode = 3, "replicate"


class CircularPad3d(_Pad):
    _n, _mode = 3, "circular"
