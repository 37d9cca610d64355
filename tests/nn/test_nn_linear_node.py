"""``F.linear`` on a (N, in) batch is one graph node (PyTorch's ``AddmmBackward0`` /
``MmBackward0``) with the values and gradients of ``x @ w.t() + b``."""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest


@pytest.mark.parametrize("with_bias", [True, False])
def test_values_and_gradients_match_the_composed_formula(with_bias):
    ember.manual_seed(1)
    x = ember.randn(5, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    b = ember.randn(3, dtype=ember.float64, requires_grad=True) if with_bias else None
    y = F.linear(x, w, b)
    assert y.grad_fn.name() == ("AddmmBackward0" if with_bias else "MmBackward0")
    g = ember.randn(5, 3, dtype=ember.float64)
    got = ember.autograd.grad(y, [x, w] + ([b] if with_bias else []), g)
    ref = x @ w.t() + b if with_bias else x @ w.t()
    want = ember.autograd.grad(ref, [x, w] + ([b] if with_bias else []), g)
    np.testing.assert_allclose(y.detach().cpu().numpy(), ref.detach().cpu().numpy(), rtol=1e-14)
    for a, e in zip(got, want):
        np.testing.assert_allclose(a.cpu().numpy(), e.cpu().numpy(), rtol=1e-13)
    fn = (lambda t, u, c: F.linear(t, u, c)) if with_bias else (lambda t, u: F.linear(t, u))
    args = (x, w, b) if with_bias else (x, w)
    assert ember.autograd.gradcheck(fn, args) and ember.autograd.gradgradcheck(fn, args)


def test_only_the_inputs_that_require_grad_get_one():
    x = ember.randn(2, 3)
    lin = ember.nn.Linear(3, 4)
    lin(x).sum().backward()
    assert lin.weight.grad.shape == (4, 3) and lin.bias.grad.tolist() == [2.0, 2.0, 2.0, 2.0]
    assert x.grad is None


def test_other_shapes_and_bad_inputs_take_the_general_path():
    w = ember.randn(3, 4)
    assert F.linear(ember.randn(2, 5, 4), w).shape == (2, 5, 3)  # batched input
    assert F.linear(ember.randn(4), w).shape == (3,)  # a single vector
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x5 and 4x3\)"):
        F.linear(ember.randn(2, 5), w)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        F.linear(ember.randn(2, 4, dtype=ember.float64), w)
