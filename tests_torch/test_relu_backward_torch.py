"""relu's gradient (one ``relu_backward`` call on the CPU, the recorded decomposition under
create_graph) against PyTorch's threshold_backward: exact values, including inf/NaN gradients
under a zero output (0, not NaN) and NaN inputs (the gradient passes), and double backward."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

DTYPES = ("float64", "float32", "float16", "bfloat16")
X = [np.nan, -1.0, 2.0, 0.0, -0.0, 3.0, -np.inf, np.inf, 0.5, -2.0]
G = [2.0, np.inf, 3.0, np.nan, 5.0, -np.inf, np.nan, -np.inf, np.inf, -np.nan]


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().float().numpy())


def _grads(x: Any, g: Any, dtype: str, shape: tuple = (), transpose: bool = False) -> tuple:
    out = []
    for lib in (ember, torch):
        a = lib.tensor(np.asarray(x), dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.relu(a.t() if transpose else a)
        y.backward(
            lib.tensor(np.asarray(g), dtype=getattr(lib, dtype)).expand(*shape)
            if shape
            else lib.tensor(np.asarray(g), dtype=getattr(lib, dtype))
        )
        out.append((type(y.grad_fn).__name__, a.grad.dtype, _np(a.grad)))
    return out[0], out[1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_edge_values_match_pytorch_exactly(dtype: str) -> None:
    (ename, edt, eg), (tname, _, tg) = _grads(X, G, dtype)
    assert ename == tname == "ReluBackward0"
    assert edt == getattr(ember, dtype)
    np.testing.assert_array_equal(eg, tg)  # NaN where PyTorch has NaN, 0 where it has 0
    assert eg[1] == 0.0 and eg[0] == 2.0  # inf under a zero output; NaN input passes g


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_transposed_matches_pytorch(dtype: str) -> None:
    rng = np.random.default_rng(1)
    x, g = rng.normal(0, 1, (6, 5)), rng.normal(0, 1, (5, 6))
    (_, _, eg), (_, _, tg) = _grads(x, g, dtype, transpose=True)
    np.testing.assert_array_equal(eg, tg)


def test_broadcast_gradient_from_sum() -> None:
    x = np.random.default_rng(2).normal(0, 1, (4, 7))
    e, t = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ember.relu(e).sum().backward()
    torch.relu(t).sum().backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


def test_double_backward_matches_pytorch() -> None:
    rng = np.random.default_rng(5)
    x, g = rng.normal(0, 1, (3, 6)), rng.normal(0, 1, (3, 6))
    res = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        gg = lib.tensor(g, requires_grad=True)
        (ga,) = lib.autograd.grad(lib.relu(a), a, gg, create_graph=True)
        (ga * ga).sum().backward()
        res.append((_np(ga), _np(gg.grad), a.grad))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert res[0][2] is None or not res[0][2].numpy().any()
    assert res[1][2] is None or not res[1][2].numpy().any()
