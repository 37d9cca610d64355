"""Numerical gradient checks (float64) for ops with their own derivative rules, incl. second order."""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember.autograd import gradcheck


def _r(*shape: int) -> ember.Tensor:
    return ember.randn(*shape, dtype=ember.float64, requires_grad=True)


@pytest.fixture(autouse=True)
def _seed() -> None:
    ember.manual_seed(0)


CASES = {
    "conv2d": (
        lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2)),
        [(1, 2, 5, 6), (3, 2, 2, 3)],
    ),
    "conv2d_groups": (lambda x, w: F.conv2d(x, w, groups=2), [(1, 4, 4, 4), (4, 2, 2, 2)]),
    "conv_transpose2d": (
        lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1),
        [(1, 2, 3, 3), (2, 3, 3, 3)],
    ),
    "max_pool2d": (lambda x: F.max_pool2d(x, 3, 2, 1), [(1, 2, 5, 5)]),
    "avg_pool2d": (
        lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        [(1, 2, 6, 6)],
    ),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [(1, 1, 5, 7)]),
    "max_pool2d_sq": (lambda x: F.max_pool2d(x, 2, 1) ** 2, [(1, 2, 4, 4)]),
    "avg_pool2d_sq": (lambda x: F.avg_pool2d(x, 3, 2, 1) ** 2, [(1, 2, 5, 5)]),
    "softmax": (lambda x: F.softmax(x, 1), [(3, 4)]),
    "log_softmax": (lambda x: F.log_softmax(x, 0), [(3, 4)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    "group_norm": (lambda x: F.group_norm(x, 2), [(2, 4, 3)]),
    "pad_reflect": (lambda x: F.pad(x, (1, 2), mode="reflect"), [(2, 4)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, ember.tensor([0, 2, 1]), label_smoothing=0.1), [(3, 4)]),
    "nll_loss": (lambda x: F.nll_loss(x, ember.tensor([0, 2, 1]), reduction="sum"), [(3, 4)]),
    "mse_loss": (lambda x, y: F.mse_loss(x, y), [(3, 4), (3, 4)]),
    "smooth_l1_loss": (lambda x, y: F.smooth_l1_loss(x, y, beta=0.5), [(3, 4), (3, 4)]),
    "bce_with_logits": (lambda x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid()), [(3, 4), (3, 4)]),
    "kl_div": (
        lambda x, y: F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1), reduction="batchmean"),
        [(3, 4), (3, 4)],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name: str) -> None:
    fn, shapes = CASES[name]
    assert gradcheck(fn, tuple(_r(*s) for s in shapes))


@pytest.mark.cpu_only  # perturbs the input through its NumPy view
@pytest.mark.parametrize(
    "name",
    [
        "conv2d",
        "conv2d_groups",
        "conv_transpose2d",
        "max_pool2d_sq",
        "avg_pool2d_sq",
        "softmax",
        "log_softmax",
        "layer_norm",
    ],
)
def test_second_order(name: str) -> None:
    """d/dx <grad f(x), v> by autograd (create_graph) against central differences of it."""
    fn, shapes = CASES[name]
    xs = [_r(*s) for s in shapes]
    u = ember.randn(*fn(*xs).shape, dtype=ember.float64)
    vs = [ember.randn(*s, dtype=ember.float64) for s in shapes]

    def s_of(inputs: list) -> ember.Tensor:
        gs = ember.autograd.grad((fn(*inputs) * u).sum(), inputs, create_graph=True)
        return sum((g * v).sum() for g, v in zip(gs, vs))

    analytic = ember.autograd.grad(s_of(xs), xs, allow_unused=True)
    eps = 1e-6
    for x, a in zip(xs, analytic):
        flat = x.detach().numpy().reshape(-1)  # perturbs x through this view
        num = np.zeros(flat.size)
        for e in range(flat.size):
            old = flat[e]
            flat[e] = old + eps
            hi = s_of(xs).item()
            flat[e] = old - eps
            lo = s_of(xs).item()
            flat[e] = old
            num[e] = (hi - lo) / (2 * eps)
        got = np.zeros(flat.size) if a is None else a.cpu().numpy().reshape(-1)
        np.testing.assert_allclose(got, num, rtol=1e-4, atol=1e-6)
