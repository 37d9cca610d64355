"""``ember.testing.assert_close``: compare tensors with dtype-aware tolerances."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dispatch import to_host

__all__ = ["assert_close"]

_TOL = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def _host(x: Any) -> np.ndarray:
    if hasattr(x, "_be"):
        return np.asarray(to_host(x._be, x._data))
    return np.asarray(x)


def assert_close(
    actual: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_dtype: bool = True,
    msg: str | None = None,
) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` match within tolerance."""
    both = hasattr(actual, "_be") and hasattr(expected, "_be")
    if check_dtype and both and actual.dtype is not expected.dtype:
        raise AssertionError(
            f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}."
        )
    a, e = _host(actual), _host(expected)
    if a.shape != e.shape:
        raise AssertionError(f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.")
    name = getattr(getattr(actual, "dtype", None), "name", "float64")
    r, t = _TOL.get(name, (0.0, 0.0))
    r = r if rtol is None else rtol
    t = t if atol is None else atol
    a64 = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    e64 = e.astype(np.complex128 if e.dtype.kind == "c" else np.float64)
    if not np.allclose(a64, e64, rtol=r, atol=t, equal_nan=equal_nan):
        diff = np.abs(a64 - e64)
        raise AssertionError(
            msg
            or f"Tensor-likes are not close! Greatest absolute difference: {np.nanmax(diff) if diff.size else 0}"
        )
