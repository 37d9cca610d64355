"""xlogy's value and gradients at its special points (x == 0, y <= 0, NaN) are PyTorch's."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = [0.0, 0.0, 0.0, 1.0, 0.0, 2.0, -1.5]
Y = [0.5, 0.0, -1.0, 2.0, float("nan"), -3.0, 4.0]


@pytest.mark.parametrize("lib_dtype", ["float32", "float64"])
def test_xlogy_value_and_gradients(lib_dtype: str) -> None:
    def run(lib):
        dt = getattr(lib, lib_dtype)
        x = lib.tensor(X, dtype=dt, requires_grad=True)
        y = lib.tensor(Y, dtype=dt, requires_grad=True)
        out = lib.xlogy(x, y)
        out.backward(lib.arange(1.0, 8.0, dtype=dt))
        return [t.detach().numpy() for t in (out, x.grad, y.grad)]

    for got, want in zip(run(ember), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


def test_xlogy_with_a_number() -> None:
    got = ember.xlogy(2, ember.tensor([3.0, 0.0]))
    want = torch.xlogy(2, torch.tensor([3.0, 0.0]))
    np.testing.assert_allclose(got.numpy(), want.numpy())
