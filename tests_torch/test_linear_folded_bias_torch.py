"""linear with a large output from few input features (a vocabulary decoder) folds its bias
into the product as one more input column, so the output is written once; against PyTorch:
outputs and the gradients of input, weight and bias on both sides of that threshold."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest
from ember.backends import registry

torch = pytest.importorskip("torch")


def _run(lib: Any, arrays: list[np.ndarray], g: np.ndarray, dtype: str) -> list[np.ndarray]:
    ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]
    y = lib.nn.functional.linear(*ts)
    assert type(y.grad_fn).__name__ == "AddmmBackward0"
    y.backward(lib.tensor(g, dtype=getattr(lib, dtype)))
    return [y.detach().numpy()] + [t.grad.numpy() for t in ts]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("rows", "out", "inp", "folded"),
    [(200, 10000, 32, True), (64, 2000, 8, True), (300, 300, 64, False), (5, 3, 4, False)],
)
def test_linear_matches_pytorch(
    rows: int, out: int, inp: int, folded: bool, dtype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(rows + out)
    arrays = [rng.standard_normal((rows, inp)), rng.standard_normal((out, inp)), rng.standard_normal(out)]
    g = rng.standard_normal((rows, out))
    table = registry.get("cpu").k
    joins: list[int] = []
    cat = table["cat"]

    def spy(*args: Any) -> Any:
        joins.append(1)
        return cat(*args)

    monkeypatch.setitem(table, "cat", spy)
    got = _run(ember, arrays, g, dtype)
    assert len(joins) == (2 if folded else 0)  # [x, 1] and [w, b]
    want = _run(torch, arrays, g, dtype)
    tol = 1e-12 if dtype == "float64" else 2e-5
    for a, c in zip(got, want):
        np.testing.assert_allclose(a, c, rtol=tol, atol=tol * np.abs(c).max())
