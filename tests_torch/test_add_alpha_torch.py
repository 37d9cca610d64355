"""``add``/``sub`` with ``alpha`` and the SGD step against PyTorch, bit for bit: PyTorch rounds
``x + alpha * y`` once (a fused multiply-add; float16/bfloat16 in float32 with alpha rounded to
their dtype), so a product rounded before the add differed in about a fifth of the elements."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X, Y = RNG.standard_normal((2, 64, 33))  # 2112 elements: vector body and tails
W = RNG.standard_normal((33, 64))
ALPHAS = [0.37, -2.5e-3, 3, -1 / 3]
DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _pair(lib: Any, dtype: str, y_shape: tuple[int, ...] = (64, 33)) -> tuple[Any, Any]:
    dt = getattr(lib, dtype)
    x = lib.tensor(X).to(dt)
    y = lib.tensor(Y[tuple(slice(0, s) for s in y_shape)]).to(dt)
    return x, y


def _same(e: Any, t: Any) -> None:
    assert e.dtype == getattr(ember, str(t.dtype).split(".")[1])
    np.testing.assert_array_equal(e.detach().float().numpy(), t.detach().float().numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("op", ["add", "sub", "add_", "sub_"])
def test_alpha_ops_round_once_as_pytorch(op: str, alpha: float, dtype: str) -> None:
    def run(lib: Any) -> Any:
        x, y = _pair(lib, dtype)
        return getattr(x, op)(y, alpha=alpha)

    _same(run(ember), run(torch))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_broadcast_mixed_dtype_and_transposed_operands(dtype: str) -> None:
    def run(lib: Any) -> list[Any]:
        x, y = _pair(lib, dtype, (1, 33))
        w = lib.tensor(W)  # float64: x promotes
        return [x.add(y, alpha=0.3), lib.sub(x, y, alpha=-7), x.add(w.t(), alpha=0.1), x.t().add(w, alpha=3)]

    for e, t in zip(run(ember), run(torch)):
        _same(e, t)


@pytest.mark.parametrize("alpha", [0.37, -2])
def test_gradients_and_grad_fn_as_pytorch(alpha: float) -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        x = lib.tensor(X[:, :1], requires_grad=True)
        y = lib.tensor(Y[:1], requires_grad=True)
        z = x.sub(y, alpha=alpha)
        z.backward(lib.tensor(X))
        return z, x.grad, y.grad, type(z.grad_fn).__name__

    e, t = run(ember), run(torch)
    for a, b in zip(e[:3], t[:3]):
        _same(a, b)
    assert e[3] == t[3] == "SubBackward0"


def test_hand_written_sgd_step_on_data() -> None:
    """The word-LM example's update, ``p.data.add_(p.grad, alpha=-lr)``, over several steps."""

    def run(lib: Any) -> Any:
        p = lib.nn.Parameter(lib.tensor(X.astype(np.float32)))
        for k in range(4):
            p.grad = lib.tensor(np.cos(X * (k + 1)).astype(np.float32))
            p.data.add_(p.grad, alpha=-20.0)
        return p

    _same(run(ember), run(torch))


@pytest.mark.parametrize(
    "kw",
    [
        {"lr": 0.1},
        {"lr": 0.1, "momentum": 0.9},
        {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
        {"lr": 0.1, "momentum": 0.8, "dampening": 0.1, "maximize": True},
        {"lr": 0.1, "momentum": 0.9, "foreach": True},
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sgd_optimizer_steps_as_pytorch(kw: dict[str, Any], dtype: str) -> None:
    def run(lib: Any) -> list[Any]:
        dt = getattr(lib, dtype)
        starts = [X, Y[0]]
        ps = [lib.nn.Parameter(lib.tensor(v).to(dt)) for v in starts]
        opt = lib.optim.SGD(ps, **kw)
        for k in range(5):
            for i, (p, v) in enumerate(zip(ps, starts)):
                p.grad = lib.tensor(np.sin(v * (k + i + 1))).to(dt)
            opt.step()
        return ps

    for e, t in zip(run(ember), run(torch)):
        _same(e, t)
