"""The rename table between ember dtypes, NumPy dtypes and OpenCL C types.

bool is stored as ``uchar`` holding 0 or 1 (NumPy's bool layout), so host transfer is a
plain byte copy. float16 and bfloat16 are storage types only (``ushort`` bits): kernels
load them as float, compute in float32 and round once on store (round to nearest even, NaN
stays NaN), as the CPU backend's half loops do, so no device extension is needed. On a
device with ``cl_khr_fp16`` the elementwise kernels whose operands are all float16 compute
in native ``half`` instead (``native=True`` below; ``has_fp16`` reads the extension list).
complex64/complex128 are ``float2``/``double2`` (real, imaginary), NumPy's
layout. ``ctype`` is the type kernels compute in, ``stype`` the type in memory; kernels
read and write through ``load``/``store``. Which dtypes a device gets depends on fp64, so
the declared set is computed from the device, not fixed here.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from ember.backends import DTYPES_BY_NAME, DType

__all__ = [
    "BASE_DTYPES",
    "BF16_SRC",
    "F16_SRC",
    "FP16_PRAGMA",
    "FP64",
    "HALF_DTYPES",
    "ctype",
    "from_np",
    "half_helpers",
    "has_fp16",
    "kind",
    "load",
    "scalar_np",
    "store",
    "stype",
    "to_np",
    "utype",
]

_CTYPES = {
    "bool": "uchar",
    "uint8": "uchar",
    "int8": "char",
    "int16": "short",
    "int32": "int",
    "int64": "long",
    "float16": "float",
    "bfloat16": "float",
    "float32": "float",
    "float64": "double",
    "complex64": "float2",
    "complex128": "double2",
}
_STYPES = {"float16": "ushort", "bfloat16": "ushort"}
# Wrapping integer arithmetic (add, sub, mul, neg, pow) is done in an unsigned type at
# least as wide as int: signed overflow is undefined in C, and char/short operands are
# promoted to (signed) int, where 65535 * 65535 would overflow.
_UTYPES = {"uchar": "uint", "char": "uint", "short": "uint", "int": "uint", "long": "ulong"}

_BASE = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "complex64")
BASE_DTYPES: tuple[DType, ...] = tuple(DTYPES_BY_NAME[n] for n in _BASE)
FP64: tuple[DType, ...] = (DTYPES_BY_NAME["float64"], DTYPES_BY_NAME["complex128"])
HALF_DTYPES = (DTYPES_BY_NAME["float16"], DTYPES_BY_NAME["bfloat16"])

# float16 <-> float in integer arithmetic that vectorises (PoCL's vload_half/vstore_half_rte
# run element by element at a third of float32's bandwidth) and needs no float denormals:
# round to nearest even, overflow to inf, NaN to a quiet NaN of the same sign (NumPy's).
F16_SRC = """
static float ember_h2f(ushort h)
{
    uint em = h & 0x7FFFu, u = (em << 13) + 0x38000000u;
    if (em >= 0x7C00u) u += 0x38000000u;
    float f = em < 0x400u ? (float)em * 0x1p-24f : as_float(u);
    return as_float(as_uint(f) | ((uint)(h & 0x8000u) << 16));
}

static ushort ember_f2h(float x)
{
    uint f = as_uint(x), sign = (f >> 16) & 0x8000u, o;
    f &= 0x7FFFFFFFu;
    if (f >= 0x47800000u) {
        o = f > 0x7F800000u ? 0x7E00u : 0x7C00u;
    } else if (f < 0x38800000u) {
        o = as_uint(as_float(f) + 0.5f) - 0x3F000000u;
    } else {
        o = (f + 0xC8000FFFu + ((f >> 13) & 1u)) >> 13;
    }
    return (ushort)(o | sign);
}
"""

# float -> bfloat16 bits, round to nearest even; NaN becomes a quiet NaN of the same sign
# (ml_dtypes' rule, hence the CPU backend's). Kernels storing bfloat16 include it.
BF16_SRC = """
static ushort ember_f2bf(float f)
{
    uint u = as_uint(f);
    if (isnan(f)) return (ushort)(((u >> 16) & 0x8000u) | 0x7FC0u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}
"""


FP16_PRAGMA = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"


@lru_cache(maxsize=8)
def has_fp16(extensions: str) -> bool:
    """Whether a device with this extension list (space separated) has native ``half``."""
    return "cl_khr_fp16" in extensions.split()


def _native(d: DType, native: bool) -> bool:
    return native and d.name == "float16"


def _np_bf16() -> np.dtype:
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def half_helpers(*dts: DType) -> str:
    """The conversion functions that kernels touching ``dts`` need."""
    names = {d.name for d in dts}
    return (F16_SRC if "float16" in names else "") + (BF16_SRC if "bfloat16" in names else "")


def to_np(d: DType) -> np.dtype:
    return _np_bf16() if d.name == "bfloat16" else np.dtype(d.name)


def from_np(d: np.dtype) -> DType | None:
    """The ember dtype of a NumPy dtype, None when ember has none (uint32, ...)."""
    d = np.dtype(d)
    if d.name == "bfloat16":
        return DTYPES_BY_NAME["bfloat16"]
    return DTYPES_BY_NAME.get(d.name)


def scalar_np(d: DType) -> type:
    """The NumPy type of a scalar kernel argument of dtype ``d`` (half types compute in float)."""
    if d in HALF_DTYPES:
        return np.float32
    return np.dtype(d.name).type


def ctype(d: DType, native: bool = False) -> str:
    """The OpenCL C type kernels compute ``d`` in (``half`` for native float16)."""
    return "half" if _native(d, native) else _CTYPES[d.name]


def stype(d: DType, native: bool = False) -> str:
    """The OpenCL C type that stores ``d`` in memory."""
    if _native(d, native):
        return "half"
    return _STYPES.get(d.name) or _CTYPES[d.name]


def load(d: DType, ptr: str, idx: str, native: bool = False) -> str:
    """C expression reading element ``idx`` of ``ptr`` (of ``stype(d)``) as ``ctype(d)``."""
    if _native(d, native):
        return f"{ptr}[{idx}]"
    if d.name == "float16":
        return f"ember_h2f({ptr}[{idx}])"
    if d.name == "bfloat16":
        return f"as_float((uint){ptr}[{idx}] << 16)"
    return f"{ptr}[{idx}]"


def store(d: DType, ptr: str, idx: str, value: str, native: bool = False) -> str:
    """C statement writing ``value`` (a ``ctype(d)``) to element ``idx``, rounding half types."""
    if _native(d, native):  # a float value rounds to nearest even, as ember_f2h does
        return f"{ptr}[{idx}] = convert_half_rte({value})"
    if d.name == "float16":
        return f"{ptr}[{idx}] = ember_f2h((float)({value}))"
    if d.name == "bfloat16":
        return f"{ptr}[{idx}] = ember_f2bf((float)({value}))"
    return f"{ptr}[{idx}] = {value}"


def utype(d: DType) -> str:
    """The unsigned OpenCL C type used for wrapping integer arithmetic on ``d``."""
    c = _CTYPES[d.name]
    return _UTYPES.get(c, c)


def kind(d: DType) -> str:
    """'b' bool, 'i' integer, 'f' floating, 'c' complex: selects an op's expression family."""
    if d.name == "bool":
        return "b"
    if d.is_complex:
        return "c"
    return "f" if d.is_floating_point else "i"
