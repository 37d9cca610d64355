"""In-place arithmetic (``add_``, ``+=`` ...): values, aliasing, errors, and the direct path
that lets the kernel write into ``self`` without a temporary and a copy."""

from __future__ import annotations

import ember
import ember.backends as eb
import numpy as np
import pytest


def test_add_mul_sub_div_in_place_return_self_with_numpy_s_values():
    x_np = np.array([[1.5, -2.0, 3.0], [4.0, 5.0, -6.5]], np.float32)
    y_np = np.array([[0.5, 2.0, -1.0], [3.0, -4.0, 2.0]], np.float32)
    x, y = ember.tensor(x_np.tolist()), ember.tensor(y_np.tolist())
    v0 = x._version
    assert x.add_(y) is x
    x -= y * 3
    x.mul_(2.5)
    x /= y
    want = (x_np + y_np - y_np * 3) * np.float32(2.5) / y_np
    np.testing.assert_array_equal(x.cpu().numpy(), want)
    assert x._version == v0 + 4


def test_writes_through_a_view_reach_the_base():
    base = ember.zeros(2, 3)
    row = base[1]
    row += ember.tensor([1.0, 2.0, 3.0])
    col = base.t()[0]  # a strided view
    col.mul_(10)
    assert base.tolist() == [[0.0, 0.0, 0.0], [10.0, 2.0, 3.0]]
    assert base._version == row._version == 2


def test_integer_in_place_ops_wrap_and_refuse_float_results():
    x = ember.tensor([100, -100], dtype=ember.int8)
    x += 100
    assert x.tolist() == [-56, 0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Char"):
        x += 1.5
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Char"):
        x /= 2
    assert x.tolist() == [-56, 0]


def test_alpha_and_broadcasting_operands():
    x = ember.ones(2, 3)
    x.add_(ember.tensor([1.0, 2.0, 3.0]), alpha=2)
    assert x.tolist() == [[3.0, 5.0, 7.0], [3.0, 5.0, 7.0]]
    row = ember.ones(3)
    with pytest.raises(
        RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"
    ):
        row.add_(x)


def test_an_expanded_destination_is_refused():
    e = ember.ones(1).expand(3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e += 1


def test_partial_overlap_is_refused_like_pytorch_and_full_aliasing_is_fine():
    x = ember.arange(6.0)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor"):
        x[1:] += x[:-1]
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor"):
        x[1:].pow_(x[:-1])
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    x += x
    assert x.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    x[:3] += x[3:]  # disjoint halves of one storage
    assert x.tolist() == [6.0, 10.0, 14.0, 6.0, 8.0, 10.0]


def test_bool_operands_keep_pytorch_s_errors():
    i = ember.arange(3)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
        i.sub_(ember.tensor([True, False, True]))


def test_the_tutorial_update_under_no_grad_keeps_a_trainable_leaf():
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with ember.no_grad():
        w -= 0.5 * w.grad
    assert w.tolist() == [0.0, 0.0] and w.is_leaf and w.requires_grad
    w.grad = None
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w.add_(1)


def test_an_in_place_op_in_a_graph_is_recorded():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.mul_(x)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]  # d(2x^2)/dx


def _spy_assign(monkeypatch):
    lb = eb.get("cpu")
    calls = []
    real = lb.k["assign"]

    def spy(dst, src):
        calls.append(dst.shape)
        return real(dst, src)

    monkeypatch.setitem(lb.k, "assign", spy)
    return calls


def test_the_kernel_writes_into_self_without_a_copy(monkeypatch):
    x, y = ember.ones(1000), ember.full((1000,), 2.0)
    calls = _spy_assign(monkeypatch)
    x += y
    x.mul_(3)
    x[::2].sub_(1)
    assert calls == []
    assert x[:4].tolist() == [8.0, 9.0, 8.0, 9.0]


@pytest.mark.cpu_only
def test_a_kernel_without_writes_out_gets_the_copy_path(monkeypatch):
    lb = eb.get("cpu")
    real = lb.k["add"]
    monkeypatch.setitem(lb.k, "add", lambda a, b: real(a, b))  # no ``out`` keyword
    calls = _spy_assign(monkeypatch)
    x = ember.ones(4)
    x += ember.ones(4)
    assert x.tolist() == [2.0, 2.0, 2.0, 2.0] and calls == [(4,)]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "complex64", "int16"])
def test_every_dtype_matches_the_out_of_place_result(dtype):
    dt = getattr(ember, dtype)
    a = (ember.arange(12).reshape(3, 4) - 5).to(dt)
    b = (ember.arange(4) + 1).to(dt)
    for name in ("add", "sub", "mul"):
        x = a.clone()
        getattr(x, name + "_")(b)
        assert ember.equal(x, getattr(ember, name)(a, b)), (dtype, name)
