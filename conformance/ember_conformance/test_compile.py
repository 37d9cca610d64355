"""ember.compile on the backend: replayed calls give what eager calls give on the same device.

Each case runs a function eagerly and through ``ember.compile`` on the backend's device for a
few calls with fresh inputs; the compiled body must run once (capture), the rest replay. A
backend without ``compile_graph`` replays its own kernels in eager's order, so results must be
equal bit for bit; one with the hook may fuse, so float32 results must agree to rtol 1e-5.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from .state import State
from .test_frontend import _dev, _ember
from .test_through_frontend import _float32

CALLS = 4


def _eager_runs() -> int:
    """Times a compiled body runs for one signature: its warm-up calls, then the capture."""
    from ember.compiler import config

    return config.warmup + 1


def _compare(st: State, got: list[Any], want: list[Any], what: str) -> None:
    fused = getattr(st.lb.backend, "compile_graph", None) is not None
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, (
            f"{what}[{i}]: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        )
        if fused and g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"{what}[{i}] (fused replay)")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{what}[{i}]: replay differs from eager")


def _host(xs: Any) -> list[Any]:
    xs = xs if isinstance(xs, (tuple, list)) else (xs,)
    return [x.detach().cpu().numpy() for x in xs]


def _run(
    ember: Any, st: State, fn: Callable[..., Any], args: Callable[[int], tuple]
) -> tuple[list[list[Any]], list[list[Any]], int]:
    body = [0]

    def counted(*a: Any) -> Any:
        body[0] += 1
        return fn(*a)

    cf = ember.compile(counted)
    compiled = [_host(cf(*args(i))) for i in range(CALLS)]
    eager = [_host(fn(*args(i))) for i in range(CALLS)]
    return compiled, eager, body[0]


def _tensors(ember: Any, st: State, seed: int, *shapes: tuple[int, ...]) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    return tuple(ember.tensor(rng.standard_normal(s).astype(np.float32), device=_dev(st)) for s in shapes)


def test_compile_elementwise_chain(ember_state: State, request: pytest.FixtureRequest) -> None:
    """A chain of unary and binary elementwise ops with broadcasting and a where."""
    ember = _ember("compile", "tensor", "where")
    _float32(ember_state)

    def fn(a: Any, b: Any) -> Any:
        c = (a * b + 0.5).exp() - a.sin() / (b.abs() + 0.25)
        return c.tanh() * 3 - a.sigmoid(), ember.where(a > b, a, b * 2)

    got, want, body = _run(ember, ember_state, fn, lambda i: _tensors(ember, ember_state, i, (8, 16), (16,)))
    for i, (g, w) in enumerate(zip(got, want)):
        _compare(ember_state, g, w, f"call {i}")
    runs = _eager_runs()
    assert body == runs, (
        f"the compiled function's body ran {body} times in {CALLS} calls (expected {runs}: replay)"
    )


def test_compile_reduction(ember_state: State, request: pytest.FixtureRequest) -> None:
    """Sums, means, maxima and a softmax over different dims of one input."""
    ember = _ember("compile", "tensor", "softmax")
    _float32(ember_state)

    def fn(a: Any) -> Any:
        return a.sum(), a.mean(1, keepdim=True), a.amax(0), ember.softmax(a, 1), (a * a).sum((0, 2))

    got, want, body = _run(ember, ember_state, fn, lambda i: _tensors(ember, ember_state, i, (4, 6, 5)))
    for i, (g, w) in enumerate(zip(got, want)):
        _compare(ember_state, g, w, f"call {i}")
    runs = _eager_runs()
    assert body == runs, (
        f"the compiled function's body ran {body} times in {CALLS} calls (expected {runs}: replay)"
    )


def _trainer(ember: Any, st: State, compiled: bool) -> tuple[Callable[..., Any], Any, list[int]]:
    nn, F = ember.nn, ember.nn.functional
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)).to(_dev(st))
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    body = [0]

    def step(x: Any, y: Any) -> Any:
        body[0] += 1
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return (ember.compile(step) if compiled else step), model, body


def test_compile_mlp_training_step(ember_state: State, request: pytest.FixtureRequest) -> None:
    """Forward, backward and an SGD-with-momentum update, replayed: losses, parameters and
    gradients after each step equal eager's."""
    ember = _ember("compile", "nn", "optim", "manual_seed")
    _float32(ember_state)

    results, bodies = [], []
    for compiled in (True, False):
        step, model, body = _trainer(ember, ember_state, compiled)
        seen = []
        for i in range(CALLS):
            x, y = _tensors(ember, ember_state, i, (5, 6), (5, 3))
            loss = step(x, y)
            seen.append(
                _host(loss)
                + _host(list(model.parameters()))
                + [p.grad.cpu().numpy() for p in model.parameters()]
            )
        results.append(seen)
        bodies.append(body[0])
    for i, (g, w) in enumerate(zip(*results)):
        _compare(ember_state, g, w, f"step {i} (loss, parameters, gradients)")
    runs = _eager_runs()
    assert bodies[0] == runs, (
        f"the compiled step's body ran {bodies[0]} times in {CALLS} steps (expected {runs})"
    )


def test_compile_module_forward_backward_outside(ember_state: State) -> None:
    """``ember.compile(model)``: a replayed forward is one autograd node; ``backward()`` outside
    gives the input and parameter gradients eager gives."""
    ember = _ember("compile", "nn", "manual_seed")
    _float32(ember_state)
    results = []
    for compiled in (True, False):
        ember.manual_seed(0)
        model = ember.nn.Sequential(ember.nn.Linear(6, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))
        model = model.to(_dev(ember_state))
        fn = ember.compile(model) if compiled else model
        seen = []
        for i in range(CALLS):
            model.zero_grad()
            (x,) = _tensors(ember, ember_state, i, (4, 6))
            x.requires_grad_(True)
            out = fn(x)
            (out * out).sum().backward()
            seen.append(
                _host(out) + [x.grad.cpu().numpy()] + [p.grad.cpu().numpy() for p in model.parameters()]
            )
        results.append(seen)
    for i, (g, w) in enumerate(zip(*results)):
        _compare(ember_state, g, w, f"call {i} (output, input gradient, parameter gradients)")


@pytest.fixture(autouse=True)
def _fresh_captures() -> Any:
    """Captures hold the backend's arrays: forgotten after each case."""
    yield
    import ember.compiler

    ember.compiler.reset()
