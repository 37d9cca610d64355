"""ember.compile: replay gives exactly what eager gives (same kernels, same order, bit for bit
on the CPU), and captures anew exactly where eager would take another path.

Each test runs a function eagerly and compiled on the same fresh inputs for several calls and
compares every result with ``np.array_equal``. A Python counter in the function proves replay
really happened: the function's body runs only when a signature is captured (or falls back).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ember
import ember.compiler
import numpy as np
import pytest
from ember import nn


@pytest.fixture(autouse=True)
def _capture_on_the_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests count captures from a signature's first call; the warm-up call that
    ember.compile makes by default is tested on its own (test_compile.py)."""
    monkeypatch.setattr(ember.compiler.config, "warmup", 0)


STEPS = 5


def _t(rng: np.random.Generator, *shape: int, grad: bool = False) -> Any:
    return ember.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=grad)


def _np(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    return x.detach().cpu().numpy().copy() if isinstance(x, ember.Tensor) else x


def _same(a: Any, b: Any, what: str) -> None:
    if isinstance(a, list):
        assert len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{what}[{i}]")
        return
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, what
        assert np.array_equal(a, b, equal_nan=True), f"{what}: replay differs from eager"
    else:
        assert a == b, what


def _counted(fn: Callable[..., Any]) -> tuple[Callable[..., Any], list[int]]:
    n = [0]

    def run(*args: Any, **kw: Any) -> Any:
        n[0] += 1
        return fn(*args, **kw)

    return run, n


def _both(
    fn: Callable[..., Any], make_args: Callable[[int], tuple], steps: int = STEPS, **opts: Any
) -> list[int]:
    """Results of ``fn`` eager and compiled on the same arguments, compared call by call;
    returns how often the compiled function's body ran."""
    counted, n = _counted(fn)
    cf = ember.compile(counted, **opts)
    for i in range(steps):
        _same(_np(cf(*make_args(i))), _np(fn(*make_args(i))), f"call {i}")
    return n


# -- pure functions ---------------------------------------------------------------------------
def test_elementwise_chain_replays_bit_identical() -> None:
    def fn(a: Any, b: Any) -> Any:
        c = (a * b + 1.5).exp() - a.sin() / (b.abs() + 0.25)
        return c.tanh().clamp(-0.5, 0.75) * 3, ember.where(a > b, a, b.sqrt())

    n = _both(fn, lambda i: (_t(np.random.default_rng(i), 6, 7), _t(np.random.default_rng(99 + i), 7)))
    assert n == [1]


def test_reductions_replay_bit_identical() -> None:
    def fn(a: Any) -> Any:
        return (
            a.sum(),
            a.mean(1, keepdim=True),
            a.amax(0),
            a.var(1),
            ember.softmax(a, 1),
            ember.logsumexp(a, 0),
            a.cumsum(1).prod(0),
            a.argmax(1),
        )

    assert _both(fn, lambda i: (_t(np.random.default_rng(i), 5, 9),)) == [1]


def test_new_shape_is_captured_anew_and_results_stay_right() -> None:
    n = _both(lambda a: (a * 2).sum(0), lambda i: (_t(np.random.default_rng(i), 2 + i % 2, 3),), steps=6)
    assert n == [2]


def test_more_than_cache_limit_signatures_warn_and_run_eagerly() -> None:
    counted, n = _counted(lambda a: a * 2 + 1)
    cf = ember.compile(counted)
    for k in range(8):
        cf(ember.ones(k + 1))
    assert n == [8]
    with pytest.warns(UserWarning, match="cache limit"):
        out = cf(ember.ones(9))
    np.testing.assert_array_equal(out.cpu().numpy(), np.full(9, 3, np.float32))
    assert cf(ember.ones(9)).cpu().numpy().tolist() == [3.0] * 9
    assert n == [10]  # eager each time past the limit
    np.testing.assert_array_equal(cf(ember.ones(3)).cpu().numpy(), np.full(3, 3, np.float32))
    assert n == [10]  # earlier signatures still replay


def test_item_inside_falls_back_to_eager_when_the_value_changes() -> None:
    def fn(a: Any) -> Any:
        s = a.sum().item()
        return a * 2 if s > 0 else a - 1, s

    def args(i: int) -> tuple:
        return (ember.tensor([1.0, float(i % 3) - 1.5, 0.5 * i]),)

    _both(fn, args, steps=6)


def test_trailing_item_is_replayed() -> None:
    def fn(a: Any) -> Any:
        return (a * a).sum().item()

    assert _both(fn, lambda i: (_t(np.random.default_rng(i), 4),)) == [1]


def test_fullgraph_raises_unsupported_for_a_host_read_after_a_state_change() -> None:
    w = ember.zeros(3)

    def fn(a: Any) -> Any:
        w.add_(a)
        s = w.sum().item()
        return w * s

    with pytest.raises(ember.compiler.Unsupported):
        ember.compile(fn, fullgraph=True)(ember.ones(3))
    w.zero_()  # the refused call ran once, eagerly, to find out
    w2 = ember.zeros(3)
    cf = ember.compile(fn)
    ref = []
    for i in range(3):
        out = cf(ember.full((3,), float(i)))
        w2.add_(ember.full((3,), float(i)))
        ref.append((w2 * w2.sum().item()).cpu().numpy())
        np.testing.assert_array_equal(out.cpu().numpy(), ref[-1])
    assert cf.explain() and "host" in cf.explain()[0]


def test_reset_forgets_every_capture() -> None:
    counted, n = _counted(lambda a: a + 1)
    cf = ember.compile(counted)
    cf(ember.ones(2))
    cf(ember.ones(2))
    assert n == [1]
    ember.compiler.reset()
    assert cf(ember.ones(2)).cpu().numpy().tolist() == [2.0, 2.0]
    cf(ember.ones(2))
    assert n == [2]


def test_disable_runs_the_marked_function_on_every_call() -> None:
    seen: list[int] = []

    @ember.compiler.disable
    def log(k: int) -> None:
        seen.append(k)

    def fn(a: Any) -> Any:
        log(1)
        return a * 3

    n = _both(fn, lambda i: (ember.full((2,), float(i)),), steps=4)
    assert n == [1] and seen == [1] * 8  # 4 compiled calls (1 capture, 3 replays), 4 eager


def test_is_compiling_is_true_only_while_capturing() -> None:
    seen: list[bool] = []

    def fn(a: Any) -> Any:
        seen.append(ember.compiler.is_compiling())
        return a + 1

    assert not ember.compiler.is_compiling()
    ember.compile(fn)(ember.ones(1))
    assert seen == [True] and not ember.compiler.is_compiling()


def test_eager_backend_runs_the_function_every_time() -> None:
    n = _both(lambda a: a.exp(), lambda i: (ember.full((2,), float(i)),), steps=3, backend="eager")
    assert n == [3]
    assert "eager" in ember.compiler.list_backends()


def test_invalid_backend_or_mode_raises_as_pytorch() -> None:
    with pytest.raises(RuntimeError, match=r"^Invalid backend: 'no-such-backend', see "):
        ember.compile(lambda a: a, backend="no-such-backend")
    with pytest.raises(RuntimeError, match=r"^Unrecognized mode=fast, should be one of: default, "):
        ember.compile(lambda a: a, mode="fast")


# -- modules: compile(model), train/eval, no_grad ---------------------------------------------
def _mlp(seed: int = 0, dropout: float = 0.0, bn: bool = False) -> Any:
    ember.manual_seed(seed)
    layers = [nn.Linear(4, 8)]
    if bn:
        layers.append(nn.BatchNorm1d(8))
    layers += [nn.ReLU(), nn.Dropout(dropout), nn.Linear(8, 3)]
    return nn.Sequential(*layers)


def _params(m: Any) -> list[Any]:
    return [p.detach().cpu().numpy().copy() for p in m.parameters()]


def _grads(m: Any) -> list[Any]:
    return [None if p.grad is None else p.grad.cpu().numpy().copy() for p in m.parameters()]


def test_compiled_module_forward_then_backward_outside_matches_eager() -> None:
    eager, model = _mlp(), _mlp()
    om = ember.compile(model)
    assert om._orig_mod is model
    for i in range(STEPS):
        rng = np.random.default_rng(i)
        x_np = rng.standard_normal((5, 4)).astype(np.float32)
        outs = []
        for m in (om, eager):
            m.zero_grad()
            x = ember.tensor(x_np, requires_grad=True)
            y = m(x)
            assert y.requires_grad and y.grad_fn is not None
            (y * y).sum().backward()
            outs.append(
                (y.detach().cpu().numpy(), x.grad.cpu().numpy(), _grads(m._orig_mod if m is om else m))
            )
        _same(_np(list(outs[0])), _np(list(outs[1])), f"call {i}")


def test_compiled_module_under_no_grad_matches_eager() -> None:
    eager, model = _mlp(), _mlp()
    om = ember.compile(model)
    for i in range(4):
        x = _t(np.random.default_rng(i), 3, 4)
        with ember.no_grad():
            y = om(x)
        assert not y.requires_grad
        with ember.no_grad():
            _same(y.cpu().numpy(), eager(x).cpu().numpy(), f"call {i}")
    # the grad-mode call after no_grad ones is a new signature, differentiable again
    assert om(_t(np.random.default_rng(9), 3, 4)).requires_grad


def _replayed_forward() -> tuple[Any, Any]:
    om = ember.compile(_mlp())
    for _ in range(2):  # the first call captures (eager); the second replays
        x = _t(np.random.default_rng(0), 2, 4, grad=True)
        y = om(x)
    return x, y


def test_double_backward_through_a_replayed_forward_raises() -> None:
    x, y = _replayed_forward()
    with pytest.raises(RuntimeError):
        (g,) = ember.autograd.grad(y.tanh().sum(), x, create_graph=True)
        g.sum().backward()


def test_create_graph_gives_first_order_grad_and_only_double_backward_raises() -> None:
    x, y = _replayed_forward()
    (g,) = ember.autograd.grad(y.tanh().sum(), x, create_graph=True)
    (ref,) = ember.autograd.grad(y.tanh().sum(), x)
    np.testing.assert_array_equal(g.detach().cpu().numpy(), ref.cpu().numpy())
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        g.sum().backward()


def test_dropout_draws_the_same_numbers_as_eager() -> None:
    def run(compiled: bool) -> list[Any]:
        model = _mlp(dropout=0.5)
        fn = ember.compile(model) if compiled else model
        ember.manual_seed(123)
        outs = []
        for i in range(STEPS):
            x = _t(np.random.default_rng(i), 6, 4)
            outs.append(fn(x).detach().cpu().numpy())
        return outs

    a, b = run(True), run(False)
    _same(a, b, "dropout outputs")
    assert not np.array_equal(a[1], a[2])  # new draws each call, not one baked mask


def test_replay_under_kernel_checks() -> None:
    """Kernel-result checks (EMBER_CHECK_KERNELS=1, every conformance run) read each result's
    shape and dtype, not its values: replay guards on those and still replays new inputs."""
    from ember._kernel_check import kernel_checks_enabled, set_kernel_checks

    was = kernel_checks_enabled()
    set_kernel_checks(True)
    try:
        n = _both(lambda a: a.exp() + 1, lambda i: (ember.full((3,), float(i)),), steps=3)
    finally:
        set_kernel_checks(was)
    assert n == [1]


MINIMAL = Path(__file__).resolve().parent.parent / "examples" / "minimal_backend"


@pytest.fixture
def minimal() -> Iterator[str]:
    """The example third-party backend, whose arrays are opaque (no ``shape``/``dtype``):
    installed, or registered in this process from examples/minimal_backend."""
    if "minimal" in ember.backends.available():
        yield "minimal"
        return
    sys.path.insert(0, str(MINIMAL))
    try:
        import ember_minimal.plugin

        ember.backends.register("minimal", ember_minimal.plugin)
        yield "minimal"
    finally:
        ember.backends.unregister("minimal")
        sys.path.remove(str(MINIMAL))


def test_replay_on_a_backend_with_opaque_arrays(minimal: str) -> None:
    def fn(a: Any, b: Any) -> Any:
        return (a * b + 1).exp().sum(1), (a - b).abs()

    def args(i: int) -> tuple:
        rng = np.random.default_rng(i)
        return tuple(
            ember.tensor(rng.standard_normal(s).astype(np.float32), device=minimal) for s in ((3, 4), (4,))
        )

    assert _both(fn, args) == [1]


def test_decorator_forms_keep_the_function_name() -> None:
    @ember.compile
    def twice(a: Any) -> Any:
        return a * 2

    @ember.compile(fullgraph=True, dynamic=False, mode="reduce-overhead")
    def thrice(a: Any) -> Any:
        return a * 3

    for i in range(3):
        a = ember.full((2,), float(i))
        _same(_np([twice(a), thrice(a)]), _np([a * 2, a * 3]), f"call {i}")
    assert twice.__name__ == "twice" and thrice.__name__ == "thrice"
    assert "def replay" in twice.code and not twice.explain()
