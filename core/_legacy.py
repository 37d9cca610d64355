"""PyTorch's legacy tensor types (``ember.FloatTensor``) and ``Tensor.type``'s conversions.

Old code builds tensors with ``FloatTensor([1, 2])`` or ``LongTensor(2, 3)``, tests them with
``isinstance(x, FloatTensor)`` and converts with ``x.type(LongTensor)`` or
``x.type("torch.LongTensor")``. Each legacy type here is a class whose metaclass answers those
calls; instances are ordinary ``ember.Tensor``s, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember.backends import DType
from ember.backends import dtypes as D

from ._creation import empty, tensor
from ._dtype import get_default_dtype
from ._ops import convert as C
from ._ops import views as V
from ._public import op, public
from ._tensor import LEGACY_NEW, Size, Tensor

PUBLIC = public(
    __name__,
    {
        "tensor_type": op(method=("type",), function=False),
    },
)
__all__ = [
    *PUBLIC,
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "legacy_new",
]


def _is_size(args: tuple[Any, ...]) -> bool:
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


def _typename(x: Any) -> str:
    return type(x).__name__


def legacy_new(dtype: DType, args: tuple[Any, ...], device: Any = None) -> Tensor:
    """PyTorch's legacy constructor: no argument is an empty tensor, ints or a ``Size`` an
    uninitialised tensor of that shape, one sequence the data, one tensor of ``dtype`` itself."""
    if len(args) == 1 and isinstance(args[0], Size):
        return empty(tuple(args[0]), dtype=dtype, device=device)  # Size([]) is 0-d, unlike no argument
    if _is_size(args):
        return empty(args if args else (0,), dtype=dtype, device=device)
    if len(args) > 1:
        got = ", ".join(_typename(a) for a in args)
        raise TypeError(f"new() received an invalid combination of arguments - got ({got})")
    data = args[0]
    if isinstance(data, Tensor):
        if data.dtype is not dtype:
            raise TypeError(f"expected {dtype} (got {data.dtype})")
        return V.view(data, data._shape)  # an alias sharing storage, as PyTorch's
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{_typename(data)}'")
    if not isinstance(data, Sequence) and not hasattr(data, "__array__"):
        raise TypeError(f"new(): data must be a sequence (got {_typename(data)})")
    return tensor(data, dtype=dtype, device=device)


class _LegacyTensorType(type):
    """The metaclass of the legacy types: calling one constructs, ``isinstance`` checks the dtype."""

    dtype: DType

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        return legacy_new(cls.dtype, args, device)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"


def _default_new(args: tuple[Any, ...], device: Any) -> Tensor:
    return legacy_new(get_default_dtype(), args, device)


LEGACY_NEW["default"] = _default_new


def _legacy(name: str, dtype: DType) -> _LegacyTensorType:
    return _LegacyTensorType(
        name, (), {"dtype": dtype, "__module__": "ember", "__doc__": f"{dtype} tensors."}
    )


FloatTensor = _legacy("FloatTensor", D.float32)
DoubleTensor = _legacy("DoubleTensor", D.float64)
HalfTensor = _legacy("HalfTensor", D.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", D.bfloat16)
LongTensor = _legacy("LongTensor", D.int64)
IntTensor = _legacy("IntTensor", D.int32)
ShortTensor = _legacy("ShortTensor", D.int16)
CharTensor = _legacy("CharTensor", D.int8)
ByteTensor = _legacy("ByteTensor", D.uint8)
BoolTensor = _legacy("BoolTensor", D.bool_)

_BY_NAME = {
    t.__name__: t.dtype
    for t in (
        FloatTensor,
        DoubleTensor,
        HalfTensor,
        BFloat16Tensor,
        LongTensor,
        IntTensor,
        ShortTensor,
        CharTensor,
        ByteTensor,
        BoolTensor,
    )
}


def _dtype_of_name(name: str) -> DType:
    """``'torch.LongTensor'`` or ``'ember.LongTensor'`` -> ``int64``; PyTorch's ValueError otherwise."""
    prefix, _, short = name.rpartition(".")
    if prefix in ("torch", "ember") and short in _BY_NAME:
        return _BY_NAME[short]
    raise ValueError(f"invalid type: '{name}'")


def tensor_type(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """``x.type()``: the legacy name (``'ember.FloatTensor'``); with a dtype, a legacy type or its
    name (``'torch.LongTensor'`` too, for old code), the tensor converted to that dtype."""
    if dtype is None:
        return f"ember.{C._pt(self.dtype)}Tensor"
    if isinstance(dtype, _LegacyTensorType):
        dtype = dtype.dtype
    elif isinstance(dtype, str):
        dtype = _dtype_of_name(dtype)
    elif not isinstance(dtype, DType):
        raise TypeError("dtype must be a type, str, or dtype object")
    return C.to(self, dtype)
