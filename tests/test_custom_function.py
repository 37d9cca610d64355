"""Custom ``ember.autograd.Function``: ctx, save_for_backward, needs_input_grad, higher order."""

from __future__ import annotations

from typing import ClassVar

import ember
import pytest
from ember.autograd import gradcheck, gradgradcheck


class Cube(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x  # written in ember ops: differentiable again


class ScaleAdd(ember.autograd.Function):
    seen: ClassVar[list] = []

    @staticmethod
    def forward(ctx, x, y, alpha):
        ctx.alpha = alpha
        ScaleAdd.seen.append(ctx.needs_input_grad)
        return x * alpha + y

    @staticmethod
    def backward(ctx, g):
        gx = g * ctx.alpha if ctx.needs_input_grad[0] else None
        gy = g if ctx.needs_input_grad[1] else None
        return gx, gy, None


def test_forward_backward_and_node_name():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    assert y.tolist() == [1.0, 8.0] and y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_needs_input_grad_and_non_tensor_arguments():
    ScaleAdd.seen.clear()
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = ember.tensor([5.0, 5.0])
    out = ScaleAdd.apply(x, y, 3.0)
    assert ScaleAdd.seen == [(True, False, False)]
    assert out.tolist() == [8.0, 11.0]
    out.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and y.grad is None


def test_no_graph_without_inputs_requiring_grad():
    out = Cube.apply(ember.tensor([2.0]))
    assert out.grad_fn is None and not out.requires_grad
    with ember.no_grad():
        assert Cube.apply(ember.tensor([2.0], requires_grad=True)).grad_fn is None


def test_twice_differentiable():
    x = ember.tensor([1.5, -0.5], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert g.tolist() == [6.75, 0.75] and gg.tolist() == [9.0, -3.0]  # 3x^2, 6x
    assert gradcheck(Cube.apply, (x,)) and gradgradcheck(Cube.apply, (x,))


def test_saved_tensor_modified_in_place_is_caught():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = Cube.apply(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_wrong_number_of_gradients_raises():
    class TooMany(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = ember.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        TooMany.apply(x).sum().backward()
