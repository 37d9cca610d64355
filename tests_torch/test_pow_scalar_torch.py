"""``x ** e`` against PyTorch, bit for bit, for the exponents its CPU kernels compute without a
power function (3, -2, -0.5, and 2, -1) in every float dtype, with the first-order gradient."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

_X = np.random.default_rng(0).uniform(0.1, 5, 4001).astype(np.float32)
X = np.concatenate([_X, -_X, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 1e30]]).astype(np.float32)
CASES = [
    (dt, e)
    for dt in ("float32", "float64", "float16", "bfloat16")
    for e in (2, 3, -1, -2, -0.5, 3.0)
    if not (e == -0.5 and dt in ("float16", "bfloat16"))  # PyTorch's half rsqrt: its own rounding
]


def _same(e: object, t: object) -> None:
    ev, tv = e.double().numpy(), t.double().numpy()  # type: ignore[attr-defined]
    np.testing.assert_array_equal(ev, tv)


@pytest.mark.parametrize("dtype,e", CASES)
def test_special_exponents(dtype: str, e: float) -> None:
    _same(ember.tensor(X).to(getattr(ember, dtype)) ** e, torch.tensor(X).to(getattr(torch, dtype)) ** e)


@pytest.mark.parametrize("e", [3, -2])
def test_special_exponent_gradient(e: int) -> None:
    a = ember.tensor(_X[:64], requires_grad=True)
    t = torch.tensor(_X[:64], requires_grad=True)
    (a**e).sum().backward()
    (t**e).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=2e-7, atol=0)
    assert (a**e).grad_fn.name() == (t**e).grad_fn.name()
