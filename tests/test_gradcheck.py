"""gradcheck / gradgradcheck in float64 over the differentiable ops (finite differences).

Inputs are small and kept away from kinks (|x| > 0.1, no ties) so that central differences
are meaningful; every case checks first and second derivatives.
"""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(1234)


def _t(*shape, low=-2.0, high=2.0, positive=False):
    a = RNG.uniform(0.2, 1.5, shape) if positive else RNG.uniform(low, high, shape)
    a = np.where(np.abs(a) < 0.2, np.sign(a + 1e-9) * 0.3, a)  # away from 0 (abs, sign kinks)
    return ember.tensor(a, dtype=ember.float64, requires_grad=True)


def _idx(values):
    return ember.tensor(values, dtype=ember.int64)


# (id, function, input factory)
CASES = [
    ("add", lambda a, b: a + b, lambda: (_t(2, 3), _t(2, 3))),
    ("add_broadcast", lambda a, b: a + b, lambda: (_t(2, 3), _t(3))),
    ("add_alpha", lambda a, b: ember.add(a, b, alpha=2.5), lambda: (_t(3), _t(3))),
    ("sub_broadcast", lambda a, b: a - b, lambda: (_t(2, 1), _t(1, 3))),
    ("rsub_scalar", lambda a: 2.0 - a, lambda: (_t(4),)),
    ("mul", lambda a, b: a * b, lambda: (_t(2, 3), _t(2, 3))),
    ("mul_broadcast_0d", lambda a, b: a * b, lambda: (_t(2, 3), _t())),
    ("div", lambda a, b: a / b, lambda: (_t(2, 3), _t(2, 3, positive=True))),
    ("rdiv_scalar", lambda a: 3.0 / a, lambda: (_t(4, positive=True),)),
    ("pow_scalar", lambda a: a**3, lambda: (_t(4),)),
    ("pow_frac", lambda a: a**2.5, lambda: (_t(4, positive=True),)),
    ("pow_tensor", lambda a, b: a**b, lambda: (_t(4, positive=True), _t(4))),
    ("rpow", lambda b: 2.0**b, lambda: (_t(4),)),
    ("exp", lambda a: a.exp(), lambda: (_t(2, 2),)),
    ("log", lambda a: a.log(), lambda: (_t(2, 2, positive=True),)),
    ("sqrt", lambda a: a.sqrt(), lambda: (_t(2, 2, positive=True),)),
    ("sin", lambda a: a.sin(), lambda: (_t(2, 2),)),
    ("cos", lambda a: a.cos(), lambda: (_t(2, 2),)),
    ("tanh", lambda a: a.tanh(), lambda: (_t(2, 2),)),
    ("erf", lambda a: a.erf(), lambda: (_t(2, 2),)),
    ("sigmoid", lambda a: a.sigmoid(), lambda: (_t(2, 2),)),
    ("abs", lambda a: a.abs(), lambda: (_t(5),)),
    ("neg", lambda a: -a, lambda: (_t(3),)),
    ("maximum", lambda a, b: ember.maximum(a, b), lambda: (_t(5), _t(5))),
    ("minimum", lambda a, b: ember.minimum(a, b), lambda: (_t(5), _t(5))),
    (
        "clamp",
        lambda a: a.clamp(-0.5, 0.7) * a,
        lambda: (ember.tensor([-1.3, -0.2, 0.1, 0.4, 1.1], dtype=ember.float64, requires_grad=True),),
    ),
    (
        "clamp_min",
        lambda a: a.clamp(min=0.05) * a,
        lambda: (ember.tensor([-1.0, 0.5, 2.0], dtype=ember.float64, requires_grad=True),),
    ),
    (
        "clamp_tensor_bounds",
        lambda a, lo, hi: a.clamp(lo, hi),
        lambda: tuple(
            ember.tensor(v, dtype=ember.float64, requires_grad=True)
            for v in ([-1.3, 0.2, 0.9, 1.6], [-0.5, -0.4, 0.5, 1.0], [0.6, 0.7, 1.2, 0.8])
        ),
    ),
    ("where", lambda a, b: ember.where(a > 0, a * a, b), lambda: (_t(2, 3), _t(3))),
    ("sum", lambda a: a.sum(), lambda: (_t(2, 3),)),
    ("sum_dim", lambda a: a.sum(1), lambda: (_t(2, 3),)),
    ("sum_dims_keepdim", lambda a: a.sum((0, 2), keepdim=True), lambda: (_t(2, 3, 2),)),
    ("mean", lambda a: a.mean(0), lambda: (_t(2, 3),)),
    ("prod", lambda a: a.prod(), lambda: (_t(4),)),
    ("prod_dim", lambda a: a.prod(1), lambda: (_t(2, 3),)),
    ("amax", lambda a: a.amax(1), lambda: (_t(2, 3),)),
    ("amin_all", lambda a: a.amin(), lambda: (_t(2, 3),)),
    ("max_dim", lambda a: a.max(1).values, lambda: (_t(3, 4),)),
    ("min_dim_keepdim", lambda a: a.min(0, keepdim=True).values, lambda: (_t(3, 4),)),
    ("max_all", lambda a: a.max(), lambda: (_t(3, 2),)),
    ("var", lambda a: a.var(1), lambda: (_t(2, 4),)),
    ("var_correction0", lambda a: a.var(correction=0), lambda: (_t(5),)),
    ("std", lambda a: a.std(0), lambda: (_t(3, 2),)),
    ("cumsum", lambda a: a.cumsum(1), lambda: (_t(2, 4),)),
    ("sort_values", lambda a: a.sort(1).values, lambda: (_t(2, 4),)),
    ("sort_desc", lambda a: a.sort(0, descending=True).values, lambda: (_t(4, 2),)),
    ("matmul_1d_1d", lambda a, b: a @ b, lambda: (_t(3), _t(3))),
    ("matmul_2d_1d", lambda a, b: a @ b, lambda: (_t(2, 3), _t(3))),
    ("matmul_1d_2d", lambda a, b: a @ b, lambda: (_t(3), _t(3, 2))),
    ("matmul_2d_2d", lambda a, b: a @ b, lambda: (_t(2, 3), _t(3, 2))),
    ("matmul_batched", lambda a, b: a @ b, lambda: (_t(2, 2, 3), _t(2, 3, 2))),
    ("matmul_broadcast", lambda a, b: a @ b, lambda: (_t(2, 1, 2, 3), _t(3, 3, 1))),
    ("mm", lambda a, b: ember.mm(a, b), lambda: (_t(2, 2), _t(2, 3))),
    ("bmm", lambda a, b: ember.bmm(a, b), lambda: (_t(2, 1, 2), _t(2, 2, 2))),
    ("view_reshape", lambda a: (a.view(3, 2) * a.reshape(3, 2)).sum(0), lambda: (_t(2, 3),)),
    ("permute_transpose_t", lambda a: a.permute(1, 0, 2).transpose(0, 2) * 2, lambda: (_t(2, 2, 2),)),
    ("t", lambda a: a.t() @ a, lambda: (_t(2, 3),)),
    (
        "expand",
        lambda a: a.expand(3, 2, 2) * ember.arange(3.0, dtype=ember.float64).reshape(3, 1, 1),
        lambda: (_t(2, 1),),
    ),
    ("squeeze_unsqueeze", lambda a: a.squeeze(1).unsqueeze(0) ** 2, lambda: (_t(2, 1, 2),)),
    ("flatten_narrow", lambda a: a.flatten().narrow(0, 1, 3) ** 2, lambda: (_t(2, 2),)),
    ("select", lambda a: a.select(1, 2) * a[0, 0], lambda: (_t(2, 3),)),
    ("slicing", lambda a: a[1:, ::2] ** 2, lambda: (_t(3, 4),)),
    ("int_index", lambda a: a[1] * a[-1], lambda: (_t(3, 2),)),
    ("none_ellipsis", lambda a: a[None, ..., 1] ** 2, lambda: (_t(2, 3),)),
    ("advanced_index", lambda a: a[[0, 2, 0]] ** 2, lambda: (_t(3, 2),)),
    ("advanced_index_2d", lambda a: a[[0, 1, 1], [2, 0, 2]] ** 2, lambda: (_t(2, 3),)),
    ("advanced_index_nonadjacent", lambda a: a[[0, 1], :, [1, 0]] ** 2, lambda: (_t(2, 2, 2),)),
    ("mask_index", lambda a: a[a > 0] ** 2, lambda: (_t(2, 3),)),
    (
        "unbind_split_chunk",
        lambda a: a.unbind(0)[1] * a.split(1, 1)[0].squeeze(1) + a.chunk(2, 0)[0].sum(),
        lambda: (_t(2, 2),),
    ),
    ("gather", lambda a: a.gather(1, _idx([[0, 0], [2, 1]])) ** 2, lambda: (_t(2, 3),)),
    ("scatter_src", lambda a, s: a.scatter(1, _idx([[2], [0]]), s) ** 2, lambda: (_t(2, 3), _t(2, 1))),
    (
        "scatter_add",
        lambda a, s: a.scatter_add(0, _idx([[0, 1], [0, 0]]), s) ** 2,
        lambda: (_t(2, 2), _t(2, 2)),
    ),
    ("index_select", lambda a: a.index_select(0, _idx([1, 1, 0])) ** 2, lambda: (_t(2, 2),)),
    ("cat", lambda a, b: ember.cat([a, b, a], 1) ** 2, lambda: (_t(2, 1), _t(2, 2))),
    ("stack", lambda a, b: ember.stack([a, b], 0) * ember.stack([b, a], 1).sum(), lambda: (_t(3), _t(3))),
    ("to_float32_roundtrip", lambda a: a.to(ember.float64) * a, lambda: (_t(3),)),
    ("clone", lambda a: a.clone() * a, lambda: (_t(3),)),
    ("softmax_chain", lambda a: (a.exp() / a.exp().sum(1, keepdim=True)).log(), lambda: (_t(2, 3),)),
]


@pytest.mark.parametrize("fn, make", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradcheck_and_gradgradcheck(fn, make):
    inputs = make()
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)


def test_gradcheck_detects_a_wrong_gradient():
    class WrongSquare(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # should be 2 * g * x

    x = _t(3)
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(WrongSquare.apply, (x,))
