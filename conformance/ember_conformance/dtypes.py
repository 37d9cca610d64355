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

# float64 special functions: (rtol, atol) no tighter than what established libraries achieve.
# Measured at this suite's float64 sample points (up to 1564 per op) against mpmath at 60
# digits, as the rtol each needs under err <= rtol * (|ref| + 0.1) (the default's atol/rtol):
#
#   op           SciPy 1.17   PyTorch 2.13   PyTorch vs SciPy (the suite's reference)
#   erfc         8.3e-16      2.0e-16        8.3e-16
#   erfinv       3.6e-16      1.5e-16        3.6e-16
#   erfcx        9.2e-16      9.2e-16        0
#   lgamma       2.7e-15      1.7e-16        2.7e-15
#   digamma      3.2e-16      5.3e-15        5.4e-15
#   polygamma n=0 0           2.8e-15        2.8e-15
#   polygamma n=1 5.3e-16     4.5e-10        4.5e-10
#   polygamma n=2 3.8e-16     3.8e-16        0
#   zeta         6.5e-16      6.5e-16        0
#   ndtri        4.9e-16      5.5e-16        4.0e-16
#   log_ndtr     4.8e-16      4.6e-16        6.0e-16
#   i0 / i0e     6.0e-16 / 5.1e-16  5.4e-16 / 3.3e-16  6.1e-16 / 5.5e-16
#   i1 / i1e     5.4e-16 / 4.4e-16  5.0e-16 / 3.5e-16  6.5e-16 / 4.4e-16
#   bessel_j0    9.0e-16      1.5e-11        1.5e-11
#   bessel_j1    4.6e-16      5.4e-12        5.4e-12
#
# The records' default (rtol 4e-12 = 1e-12 x tol_scale 4) covers both libraries everywhere
# except PyTorch's polygamma(1, x) and Bessel J0/J1; those get twice PyTorch's error against
# the SciPy reference, so a kernel as good as PyTorch's is certified rather than dropped.
_SPECIAL_F64: dict[str, tuple[float, float]] = {
    "polygamma": (1e-9, 1e-10),
    "bessel_j0": (4e-11, 4e-12),
    "bessel_j1": (2e-11, 2e-12),
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


def tolerance(dtype: str, scale: float = 1.0, op: str = "") -> tuple[float, float]:
    """(rtol, atol) for results of ``dtype`` from ``op``; exact (0, 0) for integers and bool."""
    if dtype == "float64" and op in _SPECIAL_F64:
        return _SPECIAL_F64[op]
    rtol, atol = _TOL[FAMILY.get(op, "default")].get(dtype, (0.0, 0.0))
    return rtol * scale, atol * scale


def is_exact(op: str) -> bool:
    """Whether ``op``'s floating results are compared bitwise (see the table above)."""
    return FAMILY.get(op) == "exact"
