"""Default dtype state and PyTorch's result_type rules for tensors, 0-d tensors and scalars."""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as _d
from ember.backends.dtypes import BOOL, COMPLEX, FLOAT, INT, DType, promote_types

from ._public import op, public

PUBLIC = public(
    __name__,
    {
        "get_default_dtype": op(),
        "set_default_dtype": op(),
    },
)
__all__ = [
    *PUBLIC,
    "C_NAMES",
    "PT_NAMES",
    "c_name",
    "combine",
    "pt_name",
    "result_type_scalar",
    "scalar_dtype",
]

_state = {"float": _d.float32, "complex": _d.complex64}
# (tensor dtype, Python scalar type) -> result dtype, for the x * 2.0 hot path; it depends
# on the default dtype, so set_default_dtype clears it.
SCALAR_RESULT_CACHE: dict[tuple[DType, type], DType] = {}


def get_default_dtype() -> DType:
    """The dtype of float tensors made from Python floats (float32 unless changed)."""
    return _state["float"]


def set_default_dtype(d: DType) -> None:
    """Set the default floating dtype; only float32, float64, float16 and bfloat16 qualify."""
    if not isinstance(d, DType):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if d.category != FLOAT:
        raise TypeError("only floating-point types are supported as the default type")
    _state["float"] = d
    SCALAR_RESULT_CACHE.clear()
    _state["complex"] = _d.complex128 if d is _d.float64 else _d.complex64


def scalar_dtype(x: Any) -> DType:
    """The dtype a Python scalar takes on its own: bool, int64, default float or complex."""
    if isinstance(x, bool):
        return _d.bool_
    if isinstance(x, int):
        return _d.int64
    if isinstance(x, float):
        return _state["float"]
    if isinstance(x, complex):
        return _state["complex"]
    raise TypeError(f"expected a Python number, got {type(x).__name__}")


def _category_of_scalar(x: Any) -> int:
    if isinstance(x, bool):
        return BOOL
    if isinstance(x, int):
        return INT
    if isinstance(x, float):
        return FLOAT
    return COMPLEX


def result_type_scalar(d: DType, x: Any) -> DType:
    """dtype of ``tensor(d) op scalar``: a scalar never widens within the tensor's category."""
    cat = _category_of_scalar(x)
    if cat <= d.category:
        return d
    if cat == COMPLEX:
        return _d.to_complex(d) if d.category == FLOAT else _state["complex"]
    if cat == FLOAT:
        return _state["float"]
    return _d.int64


def _combine_categories(higher: DType | None, lower: DType | None) -> DType | None:
    # PyTorch's combine_categories: a lower-priority operand only matters across categories.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:
        return _d.to_complex(higher) if higher.category == FLOAT else lower
    if higher.category == FLOAT:
        return higher
    if higher.category == BOOL or lower.category == FLOAT:
        return promote_types(higher, lower)
    return higher


def combine(dim: DType | None, zero: DType | None, wrapped: DType | None) -> DType:
    """Result dtype from the promoted dtypes of dimensioned tensors, 0-d tensors and scalars."""
    out = _combine_categories(dim, _combine_categories(zero, wrapped))
    if out is None:
        raise TypeError("result_type: no operand had a dtype")
    return out


# PyTorch's scalar-type names, as its error messages spell them ("expected scalar type Float").
PT_NAMES = {
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def pt_name(d: DType) -> str:
    """PyTorch's name for ``d`` in error messages: ``Float``, ``Long``, ``ComplexDouble``."""
    return PT_NAMES[d.name]


# The C++ type names some of PyTorch's messages use ("expected dtype float ... got double").
C_NAMES = {
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def c_name(d: DType) -> str:
    """The C++ type PyTorch's messages name for ``d``: ``float``, ``double``, ``long int``."""
    return C_NAMES[d.name]
