"""dtype names, their NumPy types, reference upcasts and tolerances.

The suite names dtypes by string (``"float32"``) everywhere so results travel as JSON
between the worker and pytest; ``ember.backends.DTYPES_BY_NAME`` turns a name into the
contract's DType only at the kernel call.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ALL",
    "BOOL",
    "COMPLEX",
    "FLOATS",
    "INTS",
    "NUMERIC",
    "REAL",
    "SIGNED",
    "UNSIGNED",
    "name_of",
    "np_dtype",
    "tolerance",
    "upcast",
]

BOOL = ("bool",)
UNSIGNED = ("uint8",)
SIGNED = ("int8", "int16", "int32", "int64")
INTS = UNSIGNED + SIGNED
FLOATS = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
REAL = INTS + FLOATS
NUMERIC = REAL + COMPLEX
ALL = BOOL + NUMERIC

# (rtol, atol) per result dtype. Half types get a few ulps of their 11/8-bit mantissas;
# float32 allows ~100 ulps for libm differences between devices; float64 ~5000 ulps.
_TOL = {
    "float16": (2e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-13),
    "complex64": (1e-5, 1e-6),
    "complex128": (1e-12, 1e-13),
}


def np_dtype(name: str) -> np.dtype:
    """The NumPy dtype for an ember dtype name (bfloat16 comes from ml_dtypes)."""
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def name_of(dt: np.dtype) -> str:
    """The ember dtype name of a NumPy dtype (``bfloat16`` for ml_dtypes' type)."""
    return "bool" if dt == np.bool_ else dt.name


def upcast(x: np.ndarray) -> np.ndarray:
    """The float64/complex128/int64 copy the NumPy reference computes on."""
    name = name_of(x.dtype)
    if name in FLOATS:
        return x.astype(np.float64)
    if name in COMPLEX:
        return x.astype(np.complex128)
    if name in INTS:
        return x.astype(np.int64)
    return x.copy()


def tolerance(dtype: str, scale: float = 1.0) -> tuple[float, float]:
    """(rtol, atol) for results of ``dtype``; exact (0, 0) for integers and bool."""
    rtol, atol = _TOL.get(dtype, (0.0, 0.0))
    return rtol * scale, atol * scale
