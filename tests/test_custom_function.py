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


class Square(ember.autograd.Function):
    """PyTorch 2 style: ``forward`` without ctx, ``setup_context`` saves."""

    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


def test_setup_context_style():
    x = ember.tensor([1.0, -3.0], requires_grad=True)
    y = Square.apply(x)
    y.sum().backward()
    assert y.tolist() == [1.0, 9.0] and x.grad.tolist() == [2.0, -6.0]
    assert y.grad_fn.name() == "SquareBackward"


def test_saved_tensors_are_freed_by_backward():
    x = ember.tensor([2.0], requires_grad=True)
    y = Square.apply(x)
    y.sum().backward(retain_graph=True)
    assert y.grad_fn.saved_tensors[0] is x
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors  # noqa: B018
    assert x.grad.tolist() == [8.0]


def test_save_for_backward_takes_only_tensors():
    class Bad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 1.5)
            return x * 2

    with pytest.raises(TypeError, match="argument 1 is of type float"):
        Bad.apply(ember.ones(1, requires_grad=True))


class DoubleInPlace(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_mark_dirty_rebases_the_input():
    a = ember.tensor([1.0, 3.0], requires_grad=True)
    b = a * 1
    y = DoubleInPlace.apply(b)
    assert y is b and b._version == 2 and b.grad_fn.name() == "DoubleInPlaceBackward"
    (b * b).sum().backward()
    assert b.tolist() == [2.0, 6.0] and a.grad.tolist() == [8.0, 24.0]  # d(4a^2)/da
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used"):
        DoubleInPlace.apply(ember.ones(1, requires_grad=True))


def test_one_backward_call_for_two_outputs_without_materialized_grads():
    calls = []

    class Two(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            calls.append((g1 is None, g2 is None))
            return (g1 * 2 if g1 is not None else 0) + (g2 * 3 if g2 is not None else 0)

    x = ember.tensor([1.0], requires_grad=True)
    y1, y2 = Two.apply(x)
    (y1 + y2).sum().backward()
    y1, _ = Two.apply(x)
    y1.sum().backward()
    assert calls == [(False, False), (False, True)] and x.grad.tolist() == [7.0]


def test_once_differentiable_refuses_a_second_derivative():
    class Once(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @ember.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    x = ember.tensor([3.0], requires_grad=True)
    (g,) = ember.autograd.grad(Once.apply(x), x, ember.ones(1, requires_grad=True), create_graph=True)
    assert g.tolist() == [6.0] and g.requires_grad
    with pytest.raises(RuntimeError, match="trying to differentiate twice"):
        g.sum().backward()
