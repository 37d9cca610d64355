"""The rename table between ember dtypes, CuPy (NumPy) dtypes and CUDA C type names.

Every ember dtype is declared: CuPy 14 stores bfloat16 arrays as ``ml_dtypes.bfloat16``
with its own ``bfloat16`` device type (cupy/bfloat16.cuh), so no uint16 emulation is needed.
The C names are CuPy's own (``float16``, ``complex<float>``, ...), so raw kernels and
CuPy-generated kernels agree on the types; raw kernels include CuPy's headers for them.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from ember.backends import ALL_DTYPES, DTYPES_BY_NAME, DType, UnsupportedDTypeError

__all__ = [
    "ATOMIC_ADD",
    "CUDA_HEADERS",
    "DECLARED",
    "FLOATS",
    "HALF",
    "INTS",
    "check",
    "ctype",
    "from_np",
    "to_np",
]

# What a raw kernel includes to name every dtype (CuPy's carray.cuh only declares the half
# types; their definitions live in float16.cuh and bfloat16.cuh).
CUDA_HEADERS = (
    "#include <cupy/complex.cuh>\n#include <cupy/carray.cuh>\n"
    "#include <cupy/float16.cuh>\n#include <cupy/bfloat16.cuh>\n"
)

DECLARED: frozenset[DType] = frozenset(ALL_DTYPES)

_TO_NP: dict[DType, np.dtype] = {
    d: np.dtype(ml_dtypes.bfloat16 if d.name == "bfloat16" else d.name) for d in ALL_DTYPES
}
_FROM_NP: dict[np.dtype, DType] = {v: k for k, v in _TO_NP.items()}
_CTYPES = {
    "bool": "bool",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float32": "float",
    "float64": "double",
    "complex64": "complex<float>",
    "complex128": "complex<double>",
}

FLOATS = tuple(DTYPES_BY_NAME[n] for n in ("float16", "bfloat16", "float32", "float64"))
INTS = tuple(DTYPES_BY_NAME[n] for n in ("uint8", "int8", "int16", "int32", "int64"))
HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
# dtypes with a hardware (or CuPy-provided CAS) atomicAdd: scatter's fast path.
ATOMIC_ADD = tuple(DTYPES_BY_NAME[n] for n in ("float16", "bfloat16", "float32", "float64", "int32", "int64"))


def check(dtype: DType) -> DType:
    """Raise UnsupportedDTypeError unless the backend declares ``dtype``."""
    if dtype not in DECLARED:
        supported = ", ".join(d.name for d in ALL_DTYPES if d in DECLARED)
        name = getattr(dtype, "name", str(dtype))
        raise UnsupportedDTypeError(
            f"backend 'cuda' has no {name} support (supported: {supported}); use .to('cpu')"
        )
    return dtype


def to_np(d: DType) -> np.dtype:
    return _TO_NP[check(d)]


def from_np(d: np.dtype) -> DType:
    """The ember dtype of a CuPy array's dtype; UnsupportedDTypeError for others (uint32...)."""
    got = _FROM_NP.get(np.dtype(d))
    if got is None:
        raise UnsupportedDTypeError(f"backend 'cuda' has no dtype for NumPy's {np.dtype(d)}")
    return got


def ctype(d: DType | np.dtype) -> str:
    """The CUDA C type name CuPy uses for ``d``."""
    name = d.name if isinstance(d, DType) else _FROM_NP[np.dtype(d)].name
    return _CTYPES[name]
