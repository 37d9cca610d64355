"""Comparison helpers shared by the test modules."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np


def assert_equal(t: ember.Tensor, expected: Any, dtype: Any = None) -> None:
    """Exact comparison of values, shape and (optionally) dtype."""
    if dtype is not None:
        assert t.dtype == dtype, (t.dtype, dtype)
    exp = np.asarray(expected)
    got = t.detach().cpu().numpy()
    assert got.shape == exp.shape, (got.shape, exp.shape)
    np.testing.assert_array_equal(got, exp)


def assert_close(t: ember.Tensor, expected: Any, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    exp = np.asarray(expected)
    got = t.detach().cpu().numpy()
    assert got.shape == exp.shape, (got.shape, exp.shape)
    np.testing.assert_allclose(
        got.astype(np.complex128 if got.dtype.kind == "c" else np.float64), exp, rtol=rtol, atol=atol
    )
