"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode as contexts and decorators."""

from __future__ import annotations

import ember


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
