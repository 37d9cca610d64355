"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode as contexts and decorators."""

from __future__ import annotations

import ember
import pytest


def _x():
    return ember.tensor([1.0, 2.0], requires_grad=True)


def test_no_grad_context_and_decorators():
    x = _x()
    with ember.no_grad():
        y = x * 2
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None

    @ember.no_grad()
    def f(t):
        return t * 2

    @ember.no_grad
    def g(t):
        return t * 3

    assert not f(x).requires_grad and not g(x).requires_grad
    assert f.__name__ == "f" and ember.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = _x()
    with ember.no_grad():
        with ember.enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and y.grad_fn.name() == "MulBackward0" and not z.requires_grad

    @ember.enable_grad
    def h(t):
        return t * 2

    with ember.no_grad():
        assert h(x).requires_grad


def test_set_grad_enabled_as_function_context_and_decorator():
    x = _x()
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ember.is_grad_enabled()
    ember.set_grad_enabled(False)
    try:
        assert not ember.is_grad_enabled() and not (x * 2).requires_grad
    finally:
        ember.set_grad_enabled(True)
    assert ember.is_grad_enabled()

    @ember.set_grad_enabled(False)
    def f(t):
        return t * 2

    assert ember.is_grad_enabled() and not f(x).requires_grad and ember.is_grad_enabled()


def test_inference_mode():
    x = _x()
    with ember.inference_mode():
        y = x * 2
        assert ember.autograd.is_inference_mode_enabled() and not ember.is_grad_enabled()
    assert not y.requires_grad and not ember.autograd.is_inference_mode_enabled()
    with ember.inference_mode(False):
        assert (x * 2).requires_grad

    @ember.inference_mode()
    def f(t):
        return t * 2

    @ember.inference_mode
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad and ember.is_grad_enabled()


def test_modes_restore_state_after_exceptions():
    try:
        with ember.no_grad():
            raise ValueError("boom")
    except ValueError:
        pass
    assert ember.is_grad_enabled()
    try:
        with ember.inference_mode():
            raise ValueError("boom")
    except ValueError:
        pass
    assert ember.is_grad_enabled() and not ember.autograd.is_inference_mode_enabled()


def test_results_are_the_same_with_and_without_grad():
    x = _x()
    with ember.no_grad():
        a = (x * x).sum()
    b = (x * x).sum()
    assert a.item() == b.item() == 5.0


_SAVED = "Inference tensors cannot be saved for backward"
_INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed"


def test_tensors_made_in_inference_mode_are_inference_tensors():
    x = ember.ones(3, requires_grad=True)
    n = ember.ones(3)
    with ember.inference_mode():
        y, z, v = x * 2, ember.zeros(2), n[1:]
        n.add_(1)  # a normal tensor may change in place inside the mode
        w = z.view(2, 1)
        assert ember.is_inference_mode_enabled()
        with ember.inference_mode(False):
            plain = ember.ones(1)
    assert [y.is_inference(), z.is_inference(), w.is_inference()] == [True, True, True]
    assert [v.is_inference(), n.is_inference(), plain.is_inference()] == [False, False, False]
    assert n.tolist() == [2.0, 2.0, 2.0] and n._version == 1 and not y.requires_grad
    assert y.detach().is_inference() and y[0].is_inference() and not y.clone().is_inference()


def test_inference_tensors_are_read_only_outside_the_mode():
    with ember.inference_mode():
        y = ember.ones(3)
    for write in (
        lambda: y.add_(1),
        lambda: y.__imul__(2),
        lambda: y[0].fill_(3),
        lambda: y.__setitem__(0, 3.0),
        lambda: y.copy_(ember.zeros(3)),
        lambda: y.exp_(),
    ):
        with pytest.raises(RuntimeError, match=_INPLACE):
            write()
    with ember.no_grad(), pytest.raises(RuntimeError, match=_INPLACE):
        y.zero_()
    assert y.tolist() == [1.0, 1.0, 1.0]
    with ember.inference_mode():
        y.add_(1)  # inside the mode it may change
    assert y.tolist() == [2.0, 2.0, 2.0]
    c = y.clone()
    c.add_(1)
    assert c.tolist() == [3.0, 3.0, 3.0]


def test_inference_tensors_cannot_be_saved_for_backward():
    x = ember.ones(3, requires_grad=True)
    with ember.inference_mode():
        y = x * 2
    with pytest.raises(RuntimeError, match=_SAVED):
        x * y  # mul saves both inputs
    s = y + x  # add saves nothing: allowed, as in PyTorch
    assert not s.is_inference() and s.requires_grad
    s.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(
        RuntimeError, match="Setting requires_grad=True on inference tensor outside InferenceMode"
    ):
        y.requires_grad_()
    lin = ember.nn.Linear(2, 2)
    with ember.inference_mode():
        out = lin(ember.ones(1, 2))
    assert out.is_inference() and not out.requires_grad
    with pytest.raises(RuntimeError, match=_SAVED):
        lin(out)
    lin(out.clone()).sum().backward()  # the documented way out
    assert lin.weight.grad is not None


def test_inference_mode_in_another_thread_marks_nothing_here():
    import threading

    inside, release = threading.Event(), threading.Event()

    def other():
        with ember.inference_mode():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=other)
    t.start()
    assert inside.wait(10)
    try:
        assert not ember.ones(2).is_inference() and ember.is_grad_enabled()
    finally:
        release.set()
        t.join()
