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
    "FAMILY",
    "FLOATS",
    "INTS",
    "NUMERIC",
    "REAL",
    "SIGNED",
    "SIGNED_ZERO",
    "UNSIGNED",
    "is_exact",
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

# The tolerance table: (rtol, atol) per op family and result dtype; integers and bool are
# always exact. The error bound is ``atol + rtol * magnitude`` (``compare.py``).
#
# - ``default``: half types get a few ulps of their 11/8-bit mantissas; float32 ~100 ulps
#   for libm differences between devices; float64 ~5000 ulps.
# - ``exact``: results that are exactly representable (casts rounded to nearest even, copies,
#   views, indexing, sorting, comparisons, where, min/max, neg/abs, rounding functions):
#   bitwise, NaN meets NaN; the sign of zero is checked where ``SIGNED_ZERO`` names the op.
# - ``normalized``: softmax-like results in (0, 1] (and log-softmax), tiny for long rows: the
#   half-type atol of ``default`` (1e-3) would accept any softmax of a row of 1024; relative
#   error only (float16 subnormals start at 6e-5, so atol sits below them).
# - per-op float64 entries (special functions): see ``_SPECIAL_F64``.
_DEFAULT = {
    "float16": (2e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-13),
    "complex64": (1e-5, 1e-6),
    "complex128": (1e-12, 1e-13),
}
_TOL = {
    "default": _DEFAULT,
    "exact": dict.fromkeys(_DEFAULT, (0.0, 0.0)),
    "normalized": {
        "float16": (2e-3, 1e-7),
        "bfloat16": (1.6e-2, 1e-7),
        "float32": (1e-5, 1e-12),
        "float64": (1e-12, 1e-30),
    },
}
_EXACT_OPS = (
    "full cast assign reshape permute expand slice as_strided clone cat gather index nonzero "
    "neg floor ceil trunc round sign maximum minimum eq lt le where amax amin argmax argmin "
    "sort cummax cummin real imag complex max_pool2d"
)
FAMILY: dict[str, str] = {
    **dict.fromkeys(_EXACT_OPS.split(), "exact"),
    **dict.fromkeys(("softmax", "log_softmax"), "normalized"),
}
# Ops whose sign of a zero result IEEE 754 and PyTorch both define (abs(-0.0) is +0.0,
# neg(0.0) is -0.0, sqrt(-0.0) is -0.0, copies keep it). Not sums (PyTorch's sum of [-0.0]
# is +0.0, NumPy's -0.0), not min/max (which zero wins a tie is unspecified).
_SIGNED_ZERO_OPS = (
    "full cast assign reshape permute expand slice as_strided clone cat gather index where sort "
    "neg abs floor ceil trunc round sqrt sin tanh erf expm1 log1p atan asin add sub mul div "
    "real imag complex"
)
SIGNED_ZERO = frozenset(_SIGNED_ZERO_OPS.split())

# float64 special functions: (rtol, atol) set from measurements (see the comment above it).
_SPECIAL_F64: dict[str, tuple[float, float]] = {}


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


def tolerance(dtype: str, scale: float = 1.0, op: str = "") -> tuple[float, float]:
    """(rtol, atol) for results of ``dtype`` from ``op``; exact (0, 0) for integers and bool."""
    if dtype == "float64" and op in _SPECIAL_F64:
        return _SPECIAL_F64[op]
    rtol, atol = _TOL[FAMILY.get(op, "default")].get(dtype, (0.0, 0.0))
    return rtol * scale, atol * scale


def is_exact(op: str) -> bool:
    """Whether ``op``'s floating results are compared bitwise (see the table above)."""
    return FAMILY.get(op) == "exact"
