"""A leaf keeps a fresh gradient without a copy only when nobody else holds it (PyTorch's
AccumulateGrad rule): a gradient shared with another leaf, the caller or a hook is copied,
so later accumulation into one ``.grad`` never changes another tensor."""

from __future__ import annotations

import ember


def test_two_leaves_of_one_add_get_separate_buffers() -> None:
    x = ember.ones(3, requires_grad=True)
    y = ember.ones(3, requires_grad=True)
    (x + y).sum().backward()
    x.grad.add_(1)
    assert y.grad.tolist() == [1.0, 1.0, 1.0]
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_callers_gradient_is_not_adopted() -> None:
    x = ember.ones(3, requires_grad=True)
    g = ember.ones(3)
    x.backward(g)
    x.backward(g)  # accumulates into x.grad: g itself must not change
    assert g.tolist() == [1.0, 1.0, 1.0]
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_gradient_kept_by_a_hook_is_not_adopted() -> None:
    x = ember.ones(3, requires_grad=True)
    kept = []
    x.register_hook(kept.append)
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert kept[0].tolist() == [2.0, 2.0, 2.0]
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


def test_fresh_gradient_accumulates_across_steps() -> None:
    w = ember.ones(4, 3, requires_grad=True)
    first = None
    for _ in range(3):
        (ember.ones(2, 4) @ w).sum().backward()
        first = first if first is not None else w.grad
    assert w.grad is first  # one buffer, accumulated in place (as PyTorch)
    assert w.grad.tolist() == [[6.0] * 3] * 4


def test_retained_intermediate_grad_is_not_shared_with_leaf() -> None:
    x = ember.ones(3, requires_grad=True)
    y = x * 1
    y.retain_grad()
    y.sum().backward()
    x.grad.add_(5)
    assert y.grad.tolist() == [1.0, 1.0, 1.0]
