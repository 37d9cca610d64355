"""Numeric limits of dtypes (``finfo``/``iinfo``) and PyTorch's casting and result-type queries."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np
from ember.backends import dtypes as D
from ember.backends.dtypes import BOOL, COMPLEX, FLOAT, DType

from ._dtype import get_default_dtype, scalar_dtype
from ._ops.pointwise_binary import result_type as _tensor_result_type
from ._public import op, public
from ._tensor import Tensor

PUBLIC = public(
    __name__,
    {
        "can_cast": op(),
        "result_type": op(),
    },
)
__all__ = [*PUBLIC, "finfo", "iinfo"]


def _limits(eps: float, max: float, tiny: float, resolution: float) -> dict[str, float]:
    return {"eps": eps, "max": max, "tiny": tiny, "resolution": resolution}


def _numpy_limits(t: Any) -> dict[str, float]:
    i = np.finfo(t)
    return _limits(float(i.eps), float(i.max), float(i.smallest_normal), 10.0 ** -int(i.precision))


# NumPy has no bfloat16 (8 exponent bits, 7 stored mantissa bits): its limits are written out.
_FLOAT_LIMITS = {
    D.float16: _numpy_limits(np.float16),
    D.bfloat16: _limits(2.0**-7, (2.0 - 2.0**-7) * 2.0**127, 2.0**-126, 0.01),
    D.float32: _numpy_limits(np.float32),
    D.float64: _numpy_limits(np.float64),
}


def _require_dtype(fn: str, type: Any) -> DType:
    """PyTorch's argument-parser TypeError for a non-dtype argument."""
    if not isinstance(type, DType):
        raise TypeError(f"{fn}(): argument 'type' (position 1) must be ember.dtype, not {_typename(type)}")
    return type


def _typename(x: Any) -> str:
    return builtins.type(x).__name__


class finfo:
    """Machine limits of a floating dtype (of its real part for a complex one), as PyTorch reports them."""

    __slots__ = ("bits", "dtype", "eps", "max", "min", "resolution", "smallest_normal", "tiny")

    def __init__(self, type: Any = None) -> None:
        d = get_default_dtype() if type is None else _require_dtype("finfo", type)
        if d.category < FLOAT:
            raise TypeError(
                "ember.finfo() requires a floating point input type. Use ember.iinfo to handle 'ember.finfo'"
            )
        real = D.to_real(d)
        lim = _FLOAT_LIMITS[real]
        self.bits = real.bits
        self.dtype = real.name
        self.eps = lim["eps"]
        self.max = lim["max"]
        self.min = -lim["max"]
        self.tiny = self.smallest_normal = lim["tiny"]
        self.resolution = lim["resolution"]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype, as PyTorch reports them."""

    __slots__ = ("bits", "dtype", "max", "min")

    def __init__(self, type: Any) -> None:
        d = _require_dtype("iinfo", type)
        if d.category == BOOL:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if d.category != D.INT:
            raise TypeError(
                "ember.iinfo() requires an integer input type. Use ember.finfo to handle 'ember.iinfo'"
            )
        info = np.iinfo(d.name)
        self.bits = d.bits
        self.dtype = d.name
        self.max = int(info.max)
        self.min = int(info.min)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def can_cast(from_: DType, to: DType) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` without changing category downward:
    complex only to complex, float not to an integer, nothing but bool to bool."""
    _require_dtype("can_cast", from_)
    _require_dtype("can_cast", to)
    if from_.category == COMPLEX and to.category != COMPLEX:
        return False
    if from_.category == FLOAT and to.category < FLOAT:
        return False
    return not (from_.category != BOOL and to.category == BOOL)


def result_type(tensor1: Any, tensor2: Any) -> DType:
    """PyTorch's ``result_type``; two Python numbers give the dtype of the higher-kind one."""
    if isinstance(tensor1, Tensor) or isinstance(tensor2, Tensor):
        return _tensor_result_type(tensor1, tensor2)
    a, b = scalar_dtype(tensor1), scalar_dtype(tensor2)
    return a if a.category >= b.category else b
