"""Through the frontend: autograd, nn and a training run on the backend, against the CPU's.

Every differentiable op's gradients are computed on the backend's device and on ``cpu``
from the same float32 inputs; so are a second-order case, the version counter's refusal,
the forward and backward of Linear, Conv2d, BatchNorm2d, LayerNorm and LSTM, and a small
MLP training run that must reach a target loss. They run in the pytest process: the
kernel-level tests before them have already proven each kernel in isolation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from .state import State
from .test_frontend import _dev, _ember

RTOL, ATOL = 2e-4, 2e-5

# name -> (input shapes, function of the inputs and the ember module)
GRAD_CASES: dict[str, tuple[list[tuple[int, ...]], Callable[..., Any]]] = {
    "add": ([(3, 4), (4,)], lambda e, a, b: a + b),
    "sub": ([(3, 4), (3, 1)], lambda e, a, b: a - b),
    "mul": ([(3, 4), (3, 4)], lambda e, a, b: a * b),
    "div": ([(3, 4), (3, 4)], lambda e, a, b: a / (b.abs() + 1)),
    "pow": ([(3, 4)], lambda e, a: (a.abs() + 0.5) ** 2.5),
    "exp": ([(3, 4)], lambda e, a: a.exp()),
    "log": ([(3, 4)], lambda e, a: (a.abs() + 0.1).log()),
    "sqrt": ([(3, 4)], lambda e, a: (a.abs() + 0.1).sqrt()),
    "sin_cos": ([(3, 4)], lambda e, a: a.sin() * a.cos()),
    "tanh": ([(3, 4)], lambda e, a: a.tanh()),
    "sigmoid": ([(3, 4)], lambda e, a: a.sigmoid()),
    "erf": ([(3, 4)], lambda e, a: a.erf()),
    "abs": ([(3, 4)], lambda e, a: a.abs()),
    "maximum": ([(3, 4), (3, 4)], lambda e, a, b: e.maximum(a, b)),
    "clamp": ([(3, 4)], lambda e, a: a.clamp(-0.5, 0.5)),
    "where": ([(3, 4), (3, 4)], lambda e, a, b: e.where(a > 0, a, b)),
    "sum_dim": ([(3, 4, 5)], lambda e, a: a.sum((0, 2))),
    "mean": ([(3, 4)], lambda e, a: a.mean(1, keepdim=True)),
    "prod": ([(3, 4)], lambda e, a: (a + 2).prod(1)),
    "amax": ([(3, 4)], lambda e, a: a.amax(1)),
    "max_dim": ([(3, 4)], lambda e, a: a.max(0).values),
    "var": ([(3, 4)], lambda e, a: a.var(1)),
    "cumsum": ([(3, 4)], lambda e, a: a.cumsum(1)),
    "matmul_2d": ([(3, 4), (4, 5)], lambda e, a, b: a @ b),
    "matmul_batched": ([(2, 3, 4), (2, 4, 2)], lambda e, a, b: a @ b),
    "matmul_nd_2d": ([(2, 3, 4), (4, 2)], lambda e, a, b: a @ b),  # the frontend folds it into one mm
    "matmul_vec": ([(4,), (4, 3)], lambda e, a, b: a @ b),
    "views": ([(2, 3, 4)], lambda e, a: a.permute(2, 0, 1).reshape(4, 6)[1:, ::2].t()),
    "expand": ([(3, 1)], lambda e, a: a.expand(3, 4) * 2),
    "index": ([(5, 4)], lambda e, a: a[e.tensor([0, 2, 2], device=a.device), 1:]),
    "gather": ([(3, 4)], lambda e, a: a.gather(1, e.tensor([[0, 3], [1, 1], [2, 0]], device=a.device))),
    "cat": ([(2, 3), (1, 3)], lambda e, a, b: e.cat([a, b * 2], 0)),
    "sort": ([(3, 4)], lambda e, a: a.sort(1).values * e.arange(4, device=a.device)),
    "softmax": ([(3, 4)], lambda e, a: e.softmax(a, 1)),
    "log_softmax": ([(3, 4)], lambda e, a: e.log_softmax(a, 1)),
    "conv2d": ([(2, 3, 6, 6), (4, 3, 3, 3)], lambda e, a, b: e.nn.functional.conv2d(a, b, padding=1)),
    "max_pool2d": ([(2, 3, 6, 6)], lambda e, a: e.nn.functional.max_pool2d(a, 2)),
    "avg_pool2d": ([(2, 3, 6, 6)], lambda e, a: e.nn.functional.avg_pool2d(a, 2)),
}


def _inputs(ember: Any, shapes: list[tuple[int, ...]], dev: str, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    return [
        ember.tensor(rng.standard_normal(s).astype(np.float32), device=dev, requires_grad=True)
        for s in shapes
    ]


def _grads(ember: Any, fn: Callable[..., Any], shapes: list[tuple[int, ...]], dev: str) -> list[np.ndarray]:
    xs = _inputs(ember, shapes, dev, seed=7)
    out = fn(ember, *xs)
    weights = ember.tensor(
        np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(tuple(out.shape)), device=dev
    )
    (out * weights).sum().backward()
    return [out.detach().cpu().numpy()] + [x.grad.cpu().numpy() for x in xs]


def _float32(st: State) -> None:
    if "float32" not in st.dtypes:
        pytest.skip("frontend pending: the backend does not declare float32, which these checks use")


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradient_matches_cpu(case: str, ember_state: State) -> None:
    """Output and every input gradient equal the CPU backend's for the same inputs."""
    ember = _ember("tensor", "softmax", "nn")
    _float32(ember_state)
    shapes, fn = GRAD_CASES[case]
    here = _grads(ember, fn, shapes, _dev(ember_state))
    ref = _grads(ember, fn, shapes, "cpu")
    for i, (h, r) in enumerate(zip(here, ref)):
        what = "output" if i == 0 else f"gradient of input {i - 1}"
        np.testing.assert_allclose(h, r, rtol=RTOL, atol=ATOL, err_msg=f"{case}: {what}")


def test_second_order_matches_cpu(ember_state: State) -> None:
    """``create_graph=True`` differentiates a gradient: d2/dx2 sum(tanh(x) * x**3)."""
    ember = _ember("tensor", "autograd")
    _float32(ember_state)
    results = []
    for dev in (_dev(ember_state), "cpu"):
        (x,) = _inputs(ember, [(5,)], dev, seed=3)
        (g,) = ember.autograd.grad((x.tanh() * x**3).sum(), x, create_graph=True)
        g.sum().backward()
        results.append((g.detach().cpu().numpy(), x.grad.cpu().numpy()))
    for h, r in zip(results[0], results[1]):
        np.testing.assert_allclose(h, r, rtol=RTOL, atol=ATOL)


def test_version_counter_refuses_stale_backward(ember_state: State) -> None:
    """Modifying a saved tensor in place makes backward raise, as in PyTorch."""
    ember = _ember("tensor")
    _float32(ember_state)
    (x,) = _inputs(ember, [(4,)], _dev(ember_state), seed=1)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def _module_cases(nn: Any) -> dict[str, tuple[Callable[[], Any], tuple[int, ...]]]:
    return {
        "Linear": (lambda: nn.Linear(6, 3), (4, 6)),
        "Conv2d": (lambda: nn.Conv2d(3, 4, 3, padding=1, stride=2), (2, 3, 7, 7)),
        "BatchNorm2d": (lambda: nn.BatchNorm2d(3), (4, 3, 5, 5)),
        "LayerNorm": (lambda: nn.LayerNorm(6), (4, 6)),
        "LSTM": (lambda: nn.LSTM(5, 4, batch_first=True), (2, 3, 5)),
    }


@pytest.mark.parametrize("layer", ["Linear", "Conv2d", "BatchNorm2d", "LayerNorm", "LSTM"])
def test_nn_layer_matches_cpu(layer: str, ember_state: State) -> None:
    """Forward output, input gradient and parameter gradients of a layer equal the CPU's."""
    ember = _ember("nn", "manual_seed")
    _float32(ember_state)
    make, shape = _module_cases(ember.nn)[layer]
    ember.manual_seed(0)
    ref_mod = make()
    results = []
    for dev in ("cpu", _dev(ember_state)):
        mod = make().to(dev)
        mod.load_state_dict(ref_mod.state_dict())
        (x,) = _inputs(ember, [shape], dev, seed=5)
        out = mod(x)
        out = out[0] if isinstance(out, tuple) else out
        (out * out).sum().backward()
        grads = {n: p.grad.cpu().numpy() for n, p in mod.named_parameters()}
        results.append((out.detach().cpu().numpy(), x.grad.cpu().numpy(), grads))
    (o_ref, gx_ref, gp_ref), (o, gx, gp) = results
    np.testing.assert_allclose(o, o_ref, rtol=RTOL, atol=ATOL, err_msg=f"{layer}: output")
    np.testing.assert_allclose(gx, gx_ref, rtol=RTOL, atol=ATOL, err_msg=f"{layer}: input gradient")
    for name in gp_ref:
        np.testing.assert_allclose(gp[name], gp_ref[name], rtol=1e-3, atol=1e-4, err_msg=f"{layer}.{name}")


def _train(ember: Any, dev: str) -> float:
    """An MLP fitting y = sin(3 x0) + x1**2 on 128 fixed points; returns the final loss."""
    rng = np.random.default_rng(0)
    xs = rng.uniform(-1, 1, (128, 2)).astype(np.float32)
    ys = (np.sin(3 * xs[:, :1]) + xs[:, 1:] ** 2).astype(np.float32)
    nn = ember.nn
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1)).to(dev)
    opt = ember.optim.Adam(model.parameters(), lr=0.02)
    x, y = ember.tensor(xs, device=dev), ember.tensor(ys, device=dev)
    for _ in range(200):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return float(loss.item())


def test_training_run_converges(ember_state: State) -> None:
    """200 Adam steps on a fixed task reach a loss below 0.02, close to the CPU's."""
    ember = _ember("nn", "optim", "manual_seed")
    _float32(ember_state)
    here = _train(ember, _dev(ember_state))
    ref = _train(ember, "cpu")
    assert here < 0.02, f"training on the backend stalled at loss {here:.4f} (CPU reaches {ref:.4f})"
    assert abs(here - ref) <= 0.05 * ref + 1e-4, f"loss {here:.6f} on the backend vs {ref:.6f} on the CPU"
