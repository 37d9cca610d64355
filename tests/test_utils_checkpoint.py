"""Activation checkpointing: the same gradients as the plain run, without its activations kept."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable

import ember
import ember.nn.functional as F
import pytest
from ember import nn
from ember.autograd.graph import Node
from ember.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential, detach_variable

BOTH = pytest.mark.parametrize("reentrant", [True, False])


def _model() -> nn.Module:
    ember.manual_seed(0)
    return nn.Sequential(
        nn.Linear(6, 8), nn.Tanh(), nn.Dropout(0.5), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3)
    )


def _grads(model: nn.Module, x: ember.Tensor, run: Callable) -> tuple:
    model.zero_grad()
    x.grad = None
    ember.manual_seed(7)
    out = run(x)
    (out * out).sum().backward()
    return (out.detach(), x.grad, *(p.grad for p in model.parameters()))


@BOTH
def test_gradients_equal_the_unchecked_run_exactly_with_dropout_inside(reentrant):
    model = _model()
    x = ember.randn(5, 6, requires_grad=True)
    plain = _grads(model, x, model)
    checked = _grads(model, x, lambda t: checkpoint(model, t, use_reentrant=reentrant))
    assert len(plain) == len(checked) == 8
    for a, b in zip(plain, checked):
        assert ember.equal(a, b)


@BOTH
def test_checkpoint_sequential_matches_the_plain_run(reentrant):
    model = _model()
    x = ember.randn(5, 6, requires_grad=True)
    plain = _grads(model, x, model)
    checked = _grads(model, x, lambda t: checkpoint_sequential(model, 3, t, use_reentrant=reentrant))
    for a, b in zip(plain, checked):
        assert ember.equal(a, b)


def test_without_rng_preservation_dropout_draws_a_new_mask():
    model = _model()
    x = ember.randn(5, 6, requires_grad=True)
    plain = _grads(model, x, model)
    run = lambda t: checkpoint(model, t, use_reentrant=False, preserve_rng_state=False)
    checked = _grads(model, x, run)
    assert ember.equal(plain[0], checked[0])  # same forward
    assert not ember.equal(plain[1], checked[1])  # backward reran with another mask


def _live(kind: type) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, kind))


@BOTH
def test_activations_are_not_kept_between_forward_and_backward(reentrant):
    x = ember.randn(64, requires_grad=True)

    def chain(t: ember.Tensor) -> ember.Tensor:
        for _ in range(20):
            t = t.tanh() * 1.5
        return t

    base_tensors, base_nodes = _live(ember.Tensor), _live(Node)
    y = chain(x)
    assert _live(Node) - base_nodes == 41  # 40 op nodes + x's AccumulateGrad
    assert _live(ember.Tensor) - base_tensors >= 20  # each tanh's output is saved
    del y
    base_tensors, base_nodes = _live(ember.Tensor), _live(Node)
    y = checkpoint(chain, x, use_reentrant=reentrant)
    assert _live(Node) - base_nodes == 1  # the checkpoint node only (x keeps its AccumulateGrad)
    # The output and the saved RNG state; x is the one saved input.
    assert _live(ember.Tensor) - base_tensors == 2
    y.sum().backward()
    assert ember.allclose(x.grad, _plain_grad(chain, x))


def _plain_grad(fn: Callable, x: ember.Tensor) -> ember.Tensor:
    (g,) = ember.autograd.grad(fn(x).sum(), x)
    return g


def test_non_reentrant_reaches_parameters_when_no_input_requires_grad():
    model = _model().eval()
    x = ember.randn(4, 6)
    out = checkpoint(model, x, use_reentrant=False)
    assert out.requires_grad
    got = ember.autograd.grad(out.sum(), list(model.parameters()))
    want = ember.autograd.grad(model(x).sum(), list(model.parameters()))
    for a, b in zip(got, want):
        assert ember.equal(a, b)


def test_reentrant_with_no_input_requiring_grad_warns_and_gives_no_graph():
    model = _model().eval()
    with pytest.warns(
        UserWarning, match="None of the inputs have requires_grad=True. Gradients will be None"
    ):
        out = checkpoint(model, ember.randn(4, 6), use_reentrant=True)
    assert not out.requires_grad


def test_use_reentrant_not_passed_warns_and_defaults_to_reentrant():
    x = ember.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly") as w:
        y = checkpoint(ember.sin, x)
    assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"
    assert len(w) == 1
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter"):
        checkpoint_sequential([ember.sin, ember.cos], 2, x)


def test_non_reentrant_keywords_double_backward_and_partial_inputs():
    x = ember.tensor([0.5, -1.0, 2.0], requires_grad=True)
    s = ember.tensor([3.0, 1.0, 0.5])

    def f(a: ember.Tensor, b: ember.Tensor, *, scale: float) -> ember.Tensor:
        return (a * b).sin() * scale

    y = checkpoint(f, x, s, scale=2.0, use_reentrant=False)
    (g,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    assert ember.allclose(g, 2.0 * s * (x * s).cos())
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert ember.allclose(gg, -2.0 * s * s * (x * s).sin())


def test_multiple_outputs_and_non_tensor_outputs():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    for reentrant in (True, False):
        a, b, tag = checkpoint(lambda t: (t * 2, t.exp(), "tag"), x, use_reentrant=reentrant)
        assert tag == "tag"
        x.grad = None
        (a.sum() + b.sum()).backward()
        assert ember.allclose(x.grad, 2 + x.detach().exp())
        with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
            b.sum().backward()
        a, b, tag = checkpoint(lambda t: (t * 2, t.exp(), "tag"), x, use_reentrant=reentrant)
        x.grad = None
        b.sum().backward()  # the unused output's gradient is zeros
        assert ember.allclose(x.grad, x.detach().exp())


def test_errors_as_pytorch():
    x = ember.randn(2, requires_grad=True)
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: a,b$"):
        checkpoint(ember.sin, x, use_reentrant=True, a=1, b=2)
    with pytest.raises(
        ValueError, match=r"^Passing `context_fn` or `debug` is only supported when use_reentrant=False.$"
    ):
        checkpoint(ember.sin, x, use_reentrant=True, debug=True)
    with pytest.raises(
        ValueError, match=r"^determinism_check should be one of \['default', 'none'\], but got x$"
    ):
        checkpoint(ember.sin, x, use_reentrant=False, determinism_check="x")
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: c$"):
        checkpoint_sequential([ember.sin], 1, x, use_reentrant=False, c=3)
    with pytest.raises(
        RuntimeError, match="^Only tuple of tensors is supported. Got Unsupported input type: list$"
    ):
        detach_variable([x])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = checkpoint(lambda t: t.detach() * 2, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="^none of output has requires_grad=True, this checkpoint"):
        y.sum().backward()


def test_recomputation_that_differs_raises_checkpoint_error():
    x = ember.randn(4, requires_grad=True)
    calls = []

    def f(t: ember.Tensor) -> ember.Tensor:
        calls.append(1)
        return t * 2 if len(calls) == 1 else t[:2] * 2

    y = checkpoint(f, x, use_reentrant=False)
    with pytest.raises(
        CheckpointError, match="Recomputed values for the following tensors have different metadata"
    ):
        y.sum().backward()


def test_context_fn_wraps_forward_and_recomputation():
    seen = []

    class Mark:
        def __init__(self, name: str) -> None:
            self.name = name

        def __enter__(self) -> None:
            seen.append(self.name)

        def __exit__(self, *exc: object) -> None:
            pass

    x = ember.randn(3, requires_grad=True)
    y = checkpoint(ember.sin, x, use_reentrant=False, context_fn=lambda: (Mark("fwd"), Mark("re")))
    assert seen == ["fwd"]
    y.sum().backward()
    assert seen == ["fwd", "re"]
    assert ember.allclose(x.grad, x.detach().cos())


def test_under_no_grad_it_only_runs_the_function():
    x = ember.randn(3, requires_grad=True)
    with ember.no_grad():
        y = checkpoint(ember.sin, x, use_reentrant=False)
    assert not y.requires_grad
    assert ember.equal(y, x.detach().sin())


def test_functional_dropout_inside_under_autocast_state_is_replayed():
    x = ember.randn(6, 6, requires_grad=True)

    def f(t: ember.Tensor) -> ember.Tensor:
        return F.dropout(t @ t, 0.3, training=True)

    ember.manual_seed(3)
    (g_plain,) = ember.autograd.grad(f(x).sum(), x)
    ember.manual_seed(3)
    (g_ck,) = ember.autograd.grad(checkpoint(f, x, use_reentrant=False).sum(), x)
    assert ember.equal(g_plain, g_ck)


def test_backcompat_switches_are_settable_bools_that_change_nothing():
    from ember.utils import backcompat

    for switch in (backcompat.broadcast_warning, backcompat.keepdim_warning):
        assert switch.enabled is False
        switch.enabled = True
        try:
            assert switch.enabled is True
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                assert ember.equal(ember.ones(4, 1) + ember.ones(4), ember.full((4, 4), 2.0))
                assert ember.ones(3, 4).sum(1).shape == (3,)
        finally:
            switch.enabled = False
    with pytest.raises(RuntimeError, match="^set_backcompat_keepdim_warn expects a bool, but got int$"):
        backcompat.keepdim_warning.enabled = 1
    with pytest.raises(
        RuntimeError, match="^set_backcompat_broadcast_warn expects a bool, but got NoneType$"
    ):
        backcompat.broadcast_warning.enabled = None


@BOTH
def test_a_parameter_hook_runs_once(reentrant):
    lin = nn.Linear(3, 2)
    calls = []

    def hook(g: ember.Tensor) -> ember.Tensor:
        calls.append(1)
        return g * 2

    lin.weight.register_hook(hook)
    x = ember.randn(4, 3, requires_grad=True)
    lin(x).sum().backward()
    want = lin.weight.grad.clone()
    lin.zero_grad()
    checkpoint(lin, x, use_reentrant=reentrant).sum().backward()
    assert ember.equal(lin.weight.grad, want)
    assert len(calls) == 2  # once per backward


def test_non_reentrant_closure_over_a_non_leaf_passes_its_gradient_on():
    a = ember.tensor([1.0, -2.0, 0.5], requires_grad=True)
    x = ember.tensor([3.0, 4.0, 5.0], requires_grad=True)
    c = a * 2  # not an argument: reached through the function's closure
    y = checkpoint(lambda t: (t * c).sin(), x, use_reentrant=False)
    (y.sum() + c.sum()).backward()
    xd, ad = x.detach(), a.detach()
    assert ember.allclose(a.grad, 2 * xd * (xd * 2 * ad).cos() + 2)
    assert ember.allclose(x.grad, 2 * ad * (xd * 2 * ad).cos())


@BOTH
def test_activations_are_freed_at_once_without_the_garbage_collector(reentrant):
    import weakref

    inside: list = []

    def f(t: ember.Tensor) -> ember.Tensor:
        h = t.exp()
        inside.append(weakref.ref(h))
        return (h * t).tanh().softmax(-1)

    x = ember.randn(2, 5, requires_grad=True)
    gc.disable()
    try:
        y = checkpoint(f, x, use_reentrant=reentrant)
        assert inside[0]() is None
    finally:
        gc.enable()
    y.sum().backward()
    (g,) = ember.autograd.grad(f(x).sum(), x)
    assert ember.allclose(x.grad, g)


def test_non_reentrant_keyword_tensors_and_in_place_input_ops():
    a = ember.tensor([1.0, -2.0, 0.5], requires_grad=True)
    scale = a * 3  # a non-leaf keyword argument

    def f(t: ember.Tensor, *, s: ember.Tensor) -> ember.Tensor:
        return t * s

    y = checkpoint(f, ember.tensor([3.0, -4.0, 5.0]), s=scale, use_reentrant=False)
    y.sum().backward()
    assert ember.equal(a.grad, ember.tensor([9.0, -12.0, 15.0]))
    # An input changed in place inside: the caller's tensor moved on, and the recomputation
    # would see other data, so backward refuses, as PyTorch's.
    x = ember.tensor([3.0, -4.0, 5.0])
    y = checkpoint(lambda t, *, s: t.relu_() * s, x, s=a * 3, use_reentrant=False)
    assert x._vc[0] == 1
    with pytest.raises(
        RuntimeError,
        match=r"modified by an inplace operation: \[ember.FloatTensor \[3\]\] is at version 1; expected version 0",
    ):
        y.sum().backward()
