"""The rename table between ember dtypes, NumPy dtypes and OpenCL C types.

bool is stored as ``uchar`` holding 0 or 1 (NumPy's bool layout), so host transfer is a
plain byte copy. Which dtypes a device gets depends on its extensions (fp64, fp16), so the
declared set is computed from the device, not fixed here.
"""

from __future__ import annotations

import numpy as np
from ember.backends import DTYPES_BY_NAME, DType

__all__ = ["BASE_DTYPES", "FP16", "FP64", "ctype", "from_np", "kind", "to_np", "utype"]

_CTYPES = {
    "bool": "uchar",
    "uint8": "uchar",
    "int8": "char",
    "int16": "short",
    "int32": "int",
    "int64": "long",
    "float16": "half",
    "float32": "float",
    "float64": "double",
}
# Wrapping integer arithmetic (add, sub, mul, neg, pow) is done in an unsigned type at
# least as wide as int: signed overflow is undefined in C, and char/short operands are
# promoted to (signed) int, where 65535 * 65535 would overflow.
_UTYPES = {"uchar": "uint", "char": "uint", "short": "uint", "int": "uint", "long": "ulong"}

BASE_DTYPES: tuple[DType, ...] = tuple(
    DTYPES_BY_NAME[n] for n in ("bool", "uint8", "int8", "int16", "int32", "int64", "float32")
)
FP64 = DTYPES_BY_NAME["float64"]
FP16 = DTYPES_BY_NAME["float16"]


def to_np(d: DType) -> np.dtype:
    return np.dtype(d.name)


def from_np(d: np.dtype) -> DType | None:
    """The ember dtype of a NumPy dtype, None when ember has none (uint32, complex...)."""
    return DTYPES_BY_NAME.get(np.dtype(d).name)


def ctype(d: DType) -> str:
    """The OpenCL C type that stores ``d``."""
    return _CTYPES[d.name]


def utype(d: DType) -> str:
    """The unsigned OpenCL C type used for wrapping integer arithmetic on ``d``."""
    c = _CTYPES[d.name]
    return _UTYPES.get(c, c)


def kind(d: DType) -> str:
    """'b' bool, 'i' integer, 'f' floating: selects the expression family of an op."""
    if d.name == "bool":
        return "b"
    return "f" if d.is_floating_point else "i"
