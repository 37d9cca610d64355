"""``add_scaled``: ``x + alpha * y`` rounded once, checked against exact rational arithmetic,
through NumPy's OpenBLAS axpy and through the fallback used where that library is absent."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from ember_cpu import fma

RNG = np.random.default_rng(3)


def _exact(x: np.ndarray, y: np.ndarray, alpha: float) -> np.ndarray:
    """Each element of x + alpha * y computed exactly, then rounded once to x's dtype."""
    a = Fraction(float(x.dtype.type(alpha)))
    flat = [float(Fraction(float(u)) + a * Fraction(float(v))) for u, v in zip(x.ravel(), y.ravel())]
    # float() rounds the rational to float64 once; float32 results need one rounding from the
    # rational too: the float64 value is exact here (x and y float32: 24 + 24 bits < 53)
    return np.array(flat).astype(x.dtype).reshape(x.shape)


def _operands(dtype: str, n: int = 257) -> tuple[np.ndarray, np.ndarray]:
    x = RNG.standard_normal(n).astype(dtype)
    y = RNG.standard_normal(n).astype(dtype)
    return x, y


@pytest.mark.skipif(not fma._AXPY, reason="NumPy's bundled OpenBLAS was not found")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("alpha", [0.37, -3.0, 1 / 3])
def test_blas_axpy_rounds_once(dtype: str, alpha: float) -> None:
    x, y = _operands(dtype)
    np.testing.assert_array_equal(fma.add_scaled(x, y, alpha), _exact(x, y, alpha))
    assert np.count_nonzero(x + x.dtype.type(alpha) * y != _exact(x, y, alpha))  # the data can tell


def test_float32_fallback_rounds_once_without_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fma, "_AXPY", {})
    x, y = _operands("float32")
    np.testing.assert_array_equal(fma.add_scaled(x, y, 0.37), _exact(x, y, 0.37))


def test_float64_fallback_rounds_the_product_first_without_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off by at most the product's rounding plus the sum's (the fused result differs)."""
    monkeypatch.setattr(fma, "_AXPY", {})
    x, y = _operands("float64")
    got, want = fma.add_scaled(x, y, 0.37), _exact(x, y, 0.37)
    assert np.all(np.abs(got - want) <= np.spacing(np.abs(want)) + np.spacing(np.abs(0.37 * y)))
    np.testing.assert_array_equal(got, x + 0.37 * y)


def test_out_may_be_x_strided_or_fresh_and_read_only_refuses() -> None:
    x, y = (RNG.standard_normal((4, 6)).astype(np.float32) for _ in range(2))
    want = _exact(x, y, -0.5)
    inplace = x.copy()
    assert fma.add_scaled(inplace, y, -0.5, out=inplace) is inplace
    np.testing.assert_array_equal(inplace, want)
    base = np.zeros((6, 8), np.float32)
    view = base[:, ::2].T  # (4, 6), strided
    fma.add_scaled(x.T.copy().T, np.broadcast_to(y[:1], (4, 6)), -0.5, out=view)
    np.testing.assert_array_equal(view, _exact(x, np.broadcast_to(y[:1], (4, 6)), -0.5))
    assert not base[:, 1::2].any()  # nothing else written
    with pytest.raises(ValueError):
        fma.add_scaled(x, y, 2.0, out=np.broadcast_to(x[:1], (4, 6)))
    with pytest.raises(TypeError):
        fma.add_scaled(x.astype(np.float16), y.astype(np.float16), 2.0)
    assert fma.add_scaled(x[:0], y[:0], 2.0).shape == (0, 6)
