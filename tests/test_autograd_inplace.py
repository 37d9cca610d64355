"""Autograd through in-place writes: setitem, fill_, in-place ops on views (values from PyTorch 2.13)."""

from __future__ import annotations

import ember
import pytest


def _a(*v):
    return ember.tensor(list(v), requires_grad=True)


def test_setitem_with_a_value_that_requires_grad():
    y = ember.tensor(2.0, requires_grad=True)
    x = ember.zeros(3)
    x[1] = y * 3
    assert x.grad_fn.name() == "CopySlices" and x.requires_grad
    x.sum().backward()
    assert y.grad.item() == 3.0


def test_setitem_zeroes_the_overwritten_gradient():
    a = _a(1.0, 2.0, 3.0)
    b = a * 1
    b[0] = 5.0
    (b * b).sum().backward()
    assert a.grad.tolist() == [0.0, 4.0, 6.0]


def test_setitem_advanced_index_and_mask():
    a, w = _a(1.0, 2.0, 3.0, 4.0), _a(5.0, 6.0)
    b = a * 1
    b[[0, 2]] = w * w
    (b * ember.arange(1.0, 5.0)).sum().backward()
    assert a.grad.tolist() == [0.0, 2.0, 0.0, 4.0] and w.grad.tolist() == [10.0, 36.0]
    a = _a(1.0, 2.0, 3.0)
    h = a * a
    h[h > 3] = 0.0
    h.sum().backward()
    assert a.grad.tolist() == [2.0, 0.0, 0.0]


def test_rows_assigned_from_one_parameter():
    x = ember.zeros(2, 3)
    w = _a(1.0, 2.0, 3.0)
    x[0] = w
    x[1] = w * 2
    (x**2).sum().backward()
    assert w.grad.tolist() == [10.0, 20.0, 30.0]


def test_inplace_op_on_a_view_reaches_the_base():
    a = _a(1.0, 2.0, 3.0)
    b = a.clone()
    b[1:].mul_(2)
    assert b.grad_fn.name() == "CopySlices"
    (b * ember.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 20.0, 200.0]
    a = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = a.clone()
    b.t()[0].mul_(10)  # a strided view: column 0
    (b * b).sum().backward()
    assert a.grad.tolist() == [[200.0, 4.0], [600.0, 8.0]]


def test_fill_and_zero_cut_the_gradient():
    a = _a(1.0, 2.0, 3.0)
    b = a * 2
    b.zero_()
    (b + a).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 1.0]


def test_views_of_leaves_refuse_inplace_but_detach_and_data_do_not():
    p = ember.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="^a view of a leaf Variable that requires grad is being used in an in-place operation.$",
    ):
        p[0:2].add_(1)
    p.detach().add_(1)
    p.data.mul_(2)
    assert p.tolist() == [4.0, 4.0, 4.0] and p.grad_fn is None
    with ember.no_grad():
        p[0] = 0.0
    assert p.tolist() == [0.0, 4.0, 4.0]


def test_outputs_not_saved_by_their_node_may_change_in_place():
    # PyTorch saves only what each derivative reads, so these are legal (no version error).
    a = _a(1.0, 2.0, 3.0)
    y = a.sin()
    y.mul_(2)
    y.sum().backward()
    assert a.grad.tolist() == pytest.approx([1.0806046724, -0.8322936731, -1.9799849932], abs=1e-6)
    a = _a(1.0, 2.0, 3.0)
    y = -a
    y.add_(1)
    y.sum().backward()
    assert a.grad.tolist() == [-1.0, -1.0, -1.0]
    a = _a(1.0, 2.0, 3.0)
    y = a**2
    y[0] = 0.0
    y.sum().backward()
    assert a.grad.tolist() == [0.0, 4.0, 6.0]
    a, b = _a(1.0, 2.0), _a(4.0, 8.0)
    q = a / b
    q.mul_(3)
    q.sum().backward()
    assert a.grad.tolist() == [0.75, 0.375] and b.grad.tolist() == [-0.1875, -0.09375]


def test_view_dtype_reinterprets_bits_and_shares_storage():
    t = ember.ones(2)
    assert t.view(ember.float32)._base is not None
    bits = t.view(ember.int32)
    assert bits.tolist() == [0x3F800000, 0x3F800000]
    bits[0] = 0x40000000  # 2.0's bits, written through the view
    assert t.tolist() == [2.0, 1.0]
