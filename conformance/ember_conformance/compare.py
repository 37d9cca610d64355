"""Compare a kernel's result with the float64 reference: dtype, shape, then values.

Integers and bool compare exactly (after wrapping the reference to the dtype, as C and
PyTorch integer arithmetic wrap). Floating and complex results of ops whose result is exact
(``dtypes.FAMILY``) compare bitwise with the reference rounded to the dtype (to nearest
even, by NumPy / ml_dtypes); the others within ``atol + rtol * magnitude`` from the
tolerance table in ``dtypes.py``. NaN must meet NaN, infinities must match exactly, and a
zero must carry the reference's sign where ``dtypes.SIGNED_ZERO`` names the op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import COMPLEX, FLOATS, SIGNED_ZERO, is_exact, name_of, np_dtype, tolerance

__all__ = ["compare", "compare_close"]


def _verdict(ok: bool, message: str = "", **worst: Any) -> dict[str, Any]:
    return {"status": "ok" if ok else "fail", "message": message, **worst}


def compare(
    got: np.ndarray, want: Any, dtype: str, tol_scale: float = 1.0, magnitude: Any = None, op: str = ""
) -> dict[str, Any]:
    """A verdict dict: ``status`` ok/fail, ``message``, and the worst error where values differ;
    ``op`` picks the tolerance family and whether the sign of zero counts."""
    got_name = name_of(got.dtype)
    if got_name != dtype:
        return _verdict(False, f"returned dtype {got_name}, expected {dtype}")
    want = np.asarray(want)
    if got.shape != want.shape:
        return _verdict(False, f"returned shape {got.shape}, expected {want.shape}")
    if (dtype in FLOATS or dtype in COMPLEX) and not is_exact(op):
        verdict = _compare_float(got, want, dtype, tol_scale, magnitude, op)
    else:
        with np.errstate(all="ignore"):
            verdict = _compare_exact(got, want.astype(np_dtype(dtype)))
    if verdict["status"] == "ok" and op in SIGNED_ZERO and dtype in FLOATS:
        return _compare_zero_signs(got, want)
    return verdict


def _compare_zero_signs(got: np.ndarray, want: np.ndarray) -> dict[str, Any]:
    """Where the reference is a zero and the result is too, their signs must agree."""
    w = want.astype(np.float64)
    g = got.astype(np.float64)
    bad = (w == 0) & (g == 0) & (np.signbit(w) != np.signbit(g))
    if not bad.any():
        return _verdict(True)
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return _verdict(
        False,
        f"{int(bad.sum())} of {bad.size} zeros have the wrong sign; first at {where}: got "
        f"{g[where]!r}, expected {w[where]!r}",
        max_abs=0.0,
        max_rel=None,
        where=list(where),
    )


def _compare_exact(got: np.ndarray, want: np.ndarray) -> dict[str, Any]:
    bad = got != want
    if got.dtype.kind in "fcV":  # NaN meets NaN (any payload); bfloat16 is kind V
        bad &= ~(_isnan(got) & _isnan(want))
    if not bad.any():
        return _verdict(True)
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    with np.errstate(all="ignore"):
        diff = np.nan_to_num(np.abs(got.astype(wide) - want.astype(wide)), nan=np.inf)
    return _verdict(
        False,
        f"{int(bad.sum())} of {bad.size} elements differ; first at {where}: got {got[where]!r}, "
        f"expected {want[where]!r}",
        max_abs=float(diff.max()),
        max_rel=None,
        where=list(where),
    )


def _isnan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))


def _compare_float(
    got: np.ndarray, want: np.ndarray, dtype: str, scale: float, magnitude: Any, op: str = ""
) -> dict[str, Any]:
    g = got.astype(np.complex128 if dtype in COMPLEX else np.float64)
    with np.errstate(all="ignore"):  # the reference rounded to the dtype: overflow gives inf
        w = want.astype(np_dtype(dtype)).astype(g.dtype)
    rtol, atol = tolerance(dtype, scale, op)
    g_nan, w_nan = np.isnan(g), np.isnan(w)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(g - w)
    err = np.where((g == w) | (g_nan & w_nan), 0.0, err)
    err = np.where(g_nan ^ w_nan, np.inf, err)
    err = np.where(np.isnan(err), np.inf, err)  # mismatched infinities
    mag = np.abs(w) if magnitude is None else np.abs(np.asarray(magnitude, dtype=g.dtype))
    bound = atol + rtol * np.nan_to_num(mag, nan=0.0, posinf=0.0)
    bad = err > bound
    if not bad.any():
        return _verdict(True, max_abs=float(err.max()) if err.size else 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bad, err / np.maximum(bound, 1e-300), 0.0)
    where = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.ndim else ()
    where = tuple(int(i) for i in where)
    rel = float(err[where] / abs(w[where])) if abs(w[where]) > 0 else None
    return _verdict(
        False,
        f"{int(bad.sum())} of {bad.size} elements outside rtol={rtol:g} atol={atol:g}; worst at {where}: "
        f"got {got[where]!r}, expected {w[where]!r}",
        max_abs=float(err.max()),
        max_rel=rel,
        where=list(where),
    )


def compare_close(got: np.ndarray, want: np.ndarray, tol_dtype: str, scale: float = 1.0) -> dict[str, Any]:
    """Values only, with ``tol_dtype``'s tolerance (for canonical forms of factorisations)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return _verdict(False, f"shape {got.shape}, expected {want.shape}")
    if np.iscomplexobj(got) or np.iscomplexobj(want):  # same tolerances, complex arithmetic
        tol_dtype = {"float32": "complex64", "float64": "complex128"}.get(tol_dtype, tol_dtype)
    return _compare_float(got, want, tol_dtype, scale, None)
