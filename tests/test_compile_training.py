"""ember.compile of whole training steps (forward, ``backward()``, optimizer and scheduler steps
inside the function): losses, parameters, gradients, optimizer state, running statistics and
learning rates after each replayed step are exactly eager's.

Each test builds the same model twice (same seed), steps one eagerly and one compiled on the
same fresh batches, and compares everything after every step with ``np.array_equal``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember import nn


@pytest.fixture(autouse=True)
def _capture_on_the_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests count captures from a signature's first call; the warm-up call that
    ember.compile makes by default is tested on its own (test_compile.py)."""
    monkeypatch.setattr(ember.compiler.config, "warmup", 0)


STEPS = 5


def _mlp(dropout: float = 0.0, bn: bool = False) -> Any:
    ember.manual_seed(0)
    layers: list[Any] = [nn.Linear(4, 8)]
    if bn:
        layers.append(nn.BatchNorm1d(8))
    layers += [nn.ReLU(), nn.Dropout(dropout), nn.Linear(8, 3)]
    return nn.Sequential(*layers)


def _batch(i: int, n: int = 6) -> tuple[Any, Any]:
    rng = np.random.default_rng(i)
    x = ember.tensor(rng.standard_normal((n, 4)).astype(np.float32))
    return x, ember.tensor(rng.integers(0, 3, n))


def _state(model: Any, opt: Any = None) -> list[Any]:
    """Everything a step changes: parameters, gradients, buffers, optimizer state and lr."""
    out: list[Any] = []
    for p in model.parameters():
        out.append(p.detach().cpu().numpy().copy())
        out.append(None if p.grad is None else p.grad.cpu().numpy().copy())
    out += [b.cpu().numpy().copy() for b in model.buffers()]
    if opt is not None:
        out.append([g["lr"] for g in opt.param_groups])
        for p in model.parameters():
            for k, v in sorted(opt.state.get(p, {}).items()):
                out.append((k, v.cpu().numpy().copy() if isinstance(v, ember.Tensor) else v))
    return out


def _equal(a: Any, b: Any, what: str) -> None:
    if isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b)):
            _equal(x, y, f"{what}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, what
        assert np.array_equal(a, b), f"{what}: replay differs from eager"
    else:
        assert a == b, f"{what}: {a!r} != {b!r}"


Setup = Callable[[], tuple[Any, Any, Callable[..., Any]]]


@pytest.fixture
def restore_patches() -> Any:
    """Puts back what a capture patches (so a test showing a failed restore breaks no other)."""
    from ember import _random
    from ember._tensor import Tensor
    from ember.nn.modules.module import Module

    saved = (_random.Generator.take, Module.__call__, Tensor.__dict__["_data"], Tensor.__dict__["_grad"])
    yield
    _random.Generator.take, Module.__call__ = saved[0], saved[1]  # type: ignore[method-assign]
    Tensor._data, Tensor._grad = saved[2], saved[3]  # type: ignore[misc]


def _compare(setup: Setup, batches: Callable[[int], tuple], steps: int = STEPS, seed: int = 7) -> int:
    """Runs ``setup()``'s step function eagerly and compiled; returns how many times the
    compiled function's body ran (captures and eager fallbacks)."""
    runs = []
    body = [0]
    for compiled in (False, True):
        model, opt, step = setup()
        if compiled:
            inner = step

            def step(*a: Any, _inner: Any = inner) -> Any:
                body[0] += 1
                return _inner(*a)

            step = ember.compile(step)
        ember.manual_seed(seed)
        seen = []
        for i in range(steps):
            loss = step(*batches(i))
            loss = loss if isinstance(loss, float) else loss.detach().cpu().numpy().copy()
            seen.append((loss, _state(model, opt)))
        runs.append(seen)
    for i, (e, c) in enumerate(zip(*runs)):
        _equal(c[0], e[0], f"loss at step {i}")
        _equal(c[1], e[1], f"state after step {i}")
    return body[0]


def _trainer(opt_cls: Any, model: Any = None, **kw: Any) -> Setup:
    def setup() -> tuple[Any, Any, Callable[..., Any]]:
        m = model() if model else _mlp()
        opt = opt_cls(m.parameters(), **kw)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss

        return m, opt, step

    return setup


@pytest.mark.parametrize(
    ("opt_cls", "kw"),
    [
        (ember.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
        (ember.optim.SGD, {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
        (ember.optim.Adam, {"lr": 0.01}),
        (ember.optim.AdamW, {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ],
)
def test_mlp_training_step_replays_bit_identical(opt_cls: Any, kw: dict[str, Any]) -> None:
    assert _compare(_trainer(opt_cls, **kw), _batch) == 1


def test_dropout_in_a_training_step_uses_the_same_random_stream() -> None:
    assert _compare(_trainer(ember.optim.SGD, lambda: _mlp(dropout=0.3), lr=0.1), _batch) == 1


def _mse_trainer(model: Callable[[], Any]) -> Setup:
    def setup() -> tuple[Any, Any, Callable[..., Any]]:
        m = model()
        opt = ember.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = F.mse_loss(m(x), y)
            loss.backward()
            opt.step()
            return loss

        return m, opt, step

    return setup


def _regression_batch(i: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(100 + i)
    return _batch(i)[0], ember.tensor(rng.standard_normal((6, 3)).astype(np.float32))


def test_batchnorm_training_step_updates_running_stats_as_eager() -> None:
    assert (
        _compare(_mse_trainer(lambda: _mlp(bn=True)), _regression_batch) == 1
    )  # _state has the running stats


def test_batchnorm_with_cross_entropy_training_step_replays() -> None:
    setup = _trainer(ember.optim.SGD, lambda: _mlp(bn=True), lr=0.1, momentum=0.5)
    assert _compare(setup, _batch) == 1


def test_batchnorm_eval_mode_is_a_new_plan() -> None:
    """The ``training`` flag is guarded: the same signature after ``eval()`` captures again
    (running statistics used, not updated), and ``train()`` goes back to the first plan."""
    runs, body = [], [0]
    for compiled in (False, True):
        m, opt, step = _mse_trainer(lambda: _mlp(bn=True))()
        if compiled:
            inner = step

            def step(x: Any, y: Any, _inner: Any = inner) -> Any:
                body[0] += 1
                return _inner(x, y)

            step = ember.compile(step)
        seen = []
        for i in range(9):
            m.train(i < 3 or i >= 6)
            seen.append((step(*_regression_batch(i)).detach().cpu().numpy().copy(), _state(m, opt)))
        runs.append(seen)
    _equal(runs[1], runs[0], "train, eval, train steps")
    assert body == [2]  # one plan per mode


def test_lr_scheduler_stepped_inside_changes_lr_as_eager() -> None:
    def setup() -> tuple[Any, Any, Callable[..., Any]]:
        m = _mlp()
        opt = ember.optim.SGD(m.parameters(), lr=0.2, momentum=0.9)
        sched = ember.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            sched.step()
            return loss

        return m, opt, step

    assert _compare(setup, _batch, steps=6) == 1


def test_gradient_accumulation_guards_on_grad_being_set() -> None:
    """No ``zero_grad``: the first call finds ``.grad`` None, later ones add to it (two plans)."""

    def setup() -> tuple[Any, Any, Callable[..., Any]]:
        m = _mlp()

        def step(x: Any, y: Any) -> Any:
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            return loss

        return m, None, step

    assert _compare(setup, _batch) == 2


def test_accumulate_then_step_every_other_call() -> None:
    def setup() -> tuple[Any, Any, Callable[..., Any]]:
        m = _mlp()
        opt = ember.optim.Adam(m.parameters(), lr=0.01)

        def step(x: Any, y: Any, update: bool) -> Any:
            loss = F.cross_entropy(m(x), y) / 2
            loss.backward()
            if update:
                opt.step()
                opt.zero_grad()
            return loss

        return m, opt, step

    _compare(setup, lambda i: (*_batch(i), i % 2 == 1), steps=8)


def test_new_batch_size_captures_a_new_plan() -> None:
    n = _compare(_trainer(ember.optim.SGD, lr=0.1), lambda i: _batch(i, 4 if i < 3 else 6), steps=6)
    assert n == 2


def test_grads_held_from_an_earlier_step_keep_their_values() -> None:
    """A ``.grad`` tensor kept by the user after a step is eager's tensor of that step: the next
    replayed step gives the parameter a new gradient, it does not overwrite the old one."""
    held: list[list[Any]] = []
    for compiled in (False, True):
        m, _, step = _trainer(ember.optim.SGD, lr=0.1)()
        fn = ember.compile(step) if compiled else step
        grads = []
        for i in range(4):
            fn(*_batch(i))
            grads.append([p.grad for p in m.parameters()])
        held.append([[g.cpu().numpy().copy() for g in gs] for gs in grads])
    _equal(held[1], held[0], "held gradients")


def test_out_of_range_target_at_replay_raises_like_eager() -> None:
    m, _, step = _trainer(ember.optim.SGD, lr=0.1)()
    fn = ember.compile(step)
    for i in range(2):
        fn(*_batch(i))
    before = [p.detach().cpu().numpy().copy() for p in m.parameters()]
    x, _ = _batch(5)
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        fn(x, ember.tensor([0, 1, 7, 2, 0, 1]))
    _equal([p.detach().cpu().numpy() for p in m.parameters()], before, "parameters after the refused step")
    fn(*_batch(6))  # and the plan still replays


def test_training_step_replays_under_kernel_checks() -> None:
    from ember._kernel_check import kernel_checks_enabled, set_kernel_checks

    was = kernel_checks_enabled()
    set_kernel_checks(True)
    try:
        assert _compare(_trainer(ember.optim.SGD, lr=0.1, momentum=0.9), _batch) == 1
    finally:
        set_kernel_checks(was)


def test_freezing_a_layer_after_capture_stops_its_updates() -> None:
    seen = []
    for compiled in (False, True):
        m, opt, step = _mse_trainer(_mlp)()
        fn = ember.compile(step) if compiled else step
        for i in range(4):
            if i == 2:
                for p in m[0].parameters():
                    p.requires_grad_(False)
            fn(*_regression_batch(i))
        seen.append(_state(m, opt))
    _equal(seen[1], seen[0], "state after freezing the first layer")


def test_compiled_module_inside_a_compiled_step(restore_patches: None) -> None:
    seen = []
    for compiled in (False, True):
        m = _mlp(dropout=0.2)
        opt = ember.optim.SGD(m.parameters(), lr=0.1)
        fwd = ember.compile(m) if compiled else m

        def step(x: Any, y: Any, fwd: Any = fwd, opt: Any = opt) -> Any:
            opt.zero_grad()
            loss = F.cross_entropy(fwd(x), y)
            loss.backward()
            opt.step()
            return loss

        fn = ember.compile(step) if compiled else step
        ember.manual_seed(3)
        losses = [fn(*_batch(i)).detach().cpu().numpy() for i in range(4)]
        seen.append(
            (losses, _state(m, opt), m(_batch(9)[0]).detach().cpu().numpy(), ember.rand(3).cpu().numpy())
        )
    _equal(seen[1], seen[0], "nested compile")


def test_compiled_module_with_batchnorm_and_dropout_backward_outside() -> None:
    """``ember.compile(model)`` in train mode: the replayed forward draws dropout's numbers and
    updates BatchNorm's running stats; ``backward()`` outside gives eager's gradients."""
    runs = []
    for compiled in (True, False):
        m = _mlp(dropout=0.3, bn=True)
        fwd = ember.compile(m) if compiled else m
        ember.manual_seed(5)
        seen = []
        for i in range(STEPS):
            m.zero_grad()
            x = _batch(i)[0].requires_grad_(True)
            y = fwd(x)
            (y * y).sum().backward()
            seen.append((y.detach().cpu().numpy(), x.grad.cpu().numpy().copy(), _state(m)))
        runs.append(seen)
    _equal(runs[0], runs[1], "compiled module forward")


def test_optimized_module_state_dict_and_parameters_are_the_models() -> None:
    m = _mlp()
    om = ember.compile(m)
    assert list(om.state_dict()) == [f"_orig_mod.{k}" for k in m.state_dict()]
    assert all(p is q for p, q in zip(om.parameters(), m.parameters()))
    om.eval()
    assert not m.training and not om.training


@pytest.mark.parametrize("variant", ["clip_grad_norm_", "clip_grad_value_", "return_item"])
def test_step_with_gradient_clipping_or_returned_item_replays(variant: str) -> None:
    def setup() -> tuple[Any, Any, Callable[..., Any]]:
        m = _mlp()
        opt = ember.optim.Adam(m.parameters(), lr=0.01)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            if variant == "clip_grad_norm_":
                nn.utils.clip_grad_norm_(m.parameters(), 0.5)
            elif variant == "clip_grad_value_":
                nn.utils.clip_grad_value_(m.parameters(), 0.01)
            opt.step()
            return loss.item() if variant == "return_item" else loss

        return m, opt, step

    assert _compare(setup, _batch) == 1


def _scaled_trainer(warm: bool, report_scale: bool = False) -> Setup:
    def setup() -> tuple[Any, Any, Callable[..., Any]]:
        m = _mlp()
        opt = ember.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        scaler = ember.amp.GradScaler("cpu", init_scale=2.0**4, growth_interval=2)
        if warm:
            scaler.scale(ember.ones(1))  # makes the scale tensor before any capture

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            return loss * 0 + scaler.get_scale() if report_scale else loss

        return m, opt, step

    return setup


def test_grad_scaler_step_replays_with_the_scale_it_grows() -> None:
    assert _compare(_scaled_trainer(warm=True), _batch, steps=6) == 1


def test_host_read_after_an_eager_only_update_sees_the_new_value() -> None:
    _compare(_scaled_trainer(warm=True, report_scale=True), _batch, steps=6)


def test_grad_scaler_first_used_inside_the_compiled_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ember.compiler.config, "warmup", 1)  # the default: the warm-up call makes it
    assert _compare(_scaled_trainer(warm=False), _batch, steps=6) == 2  # the warm-up and the capture
