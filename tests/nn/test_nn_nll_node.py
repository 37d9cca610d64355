"""Unweighted NLL / cross-entropy on (N, C) is one graph node, as in PyTorch, and gives the
same numbers as the general weighted formula."""

from __future__ import annotations

import ember
import ember.nn.functional as F
import pytest


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_one_node_with_the_weighted_formula_s_values_and_gradients(reduction):
    ember.manual_seed(0)
    x = ember.randn(6, 5, requires_grad=True)
    y = ember.tensor([0, 4, 1, 2, 3, 3])
    fast = F.cross_entropy(x, y, reduction=reduction)
    (g_fast,) = ember.autograd.grad(fast.sum(), x)
    general = F.cross_entropy(x, y, weight=ember.ones(5), reduction=reduction)  # the general path
    (g_general,) = ember.autograd.grad(general.sum(), x)
    assert ember.equal(fast, general) and ember.equal(g_fast, g_general)
    assert fast.grad_fn.name() == "NllLossBackward0"
    assert fast.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_first_and_second_derivatives(reduction):
    x = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    y = ember.tensor([2, 0, 1, 2])
    fn = lambda t: F.nll_loss(F.log_softmax(t, 1), y, reduction=reduction)
    assert ember.autograd.gradcheck(fn, (x,)) and ember.autograd.gradgradcheck(fn, (x,))


def test_ignored_targets_and_bad_targets_keep_their_behaviour():
    x = ember.tensor([[0.0, 1.0], [2.0, 0.0]], requires_grad=True)
    loss = F.nll_loss(x, ember.tensor([1, -100]))  # only the first sample counts
    assert loss.item() == -1.0
    loss.backward()
    assert x.grad.tolist() == [[0.0, -1.0], [0.0, 0.0]]
    with pytest.raises(IndexError, match="^Target 2 is out of bounds.$"):
        F.nll_loss(x, ember.tensor([2, 0]))
    with pytest.raises(IndexError, match="^Target -1 is out of bounds.$"):
        F.nll_loss(x, ember.tensor([-1, 0]))
