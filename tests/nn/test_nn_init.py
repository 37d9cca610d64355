"""nn.init and default layer initialisation: PyTorch's bounds and moments."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from ember import nn
from ember.nn import init


@pytest.fixture(autouse=True)
def _seed() -> None:
    ember.manual_seed(0)


def _vals(t: ember.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float64).ravel()


def test_linear_default_init_bounds() -> None:
    m = nn.Linear(100, 400)
    bound = 1 / math.sqrt(100)  # kaiming_uniform_(a=√5) gives U(-1/√fan_in, 1/√fan_in)
    w, b = _vals(m.weight), _vals(m.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound


def test_conv_default_init_bounds() -> None:
    m = nn.Conv2d(8, 16, 3)
    bound = 1 / math.sqrt(8 * 9)
    assert np.abs(_vals(m.weight)).max() <= bound
    assert np.abs(_vals(m.bias)).max() <= bound
    assert abs(_vals(m.weight).std() - bound / math.sqrt(3)) < 0.1 * bound


def test_other_defaults() -> None:
    assert abs(_vals(nn.Embedding(200, 50).weight).std() - 1) < 0.05
    bn = nn.BatchNorm2d(3)
    assert bn.weight.tolist() == [1.0] * 3 and bn.bias.tolist() == [0.0] * 3
    ln = nn.LayerNorm(4)
    assert ln.weight.tolist() == [1.0] * 4
    e = nn.Embedding(5, 3, padding_idx=1)
    assert e.weight[1].tolist() == [0.0, 0.0, 0.0]


def test_gains_and_fans() -> None:
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("tanh") == 5 / 3
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert init.calculate_gain("selu") == 0.75
    assert init._calculate_fan_in_and_fan_out(ember.empty(16, 8, 3, 3)) == (72, 144)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init.xavier_uniform_(ember.empty(3))


def test_xavier_and_kaiming() -> None:
    t = ember.empty(300, 200)
    init.xavier_uniform_(t, gain=2.0)
    a = 2.0 * math.sqrt(6 / 500)
    assert np.abs(_vals(t)).max() <= a and np.abs(_vals(t)).max() > 0.99 * a
    init.xavier_normal_(t)
    assert abs(_vals(t).std() - math.sqrt(2 / 500)) < 0.002
    init.kaiming_uniform_(t, nonlinearity="relu")
    bound = math.sqrt(2) * math.sqrt(3 / 200)
    assert np.abs(_vals(t)).max() <= bound
    init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert abs(_vals(t).std() - math.sqrt(2 / 300)) < 0.002


def test_simple_fills() -> None:
    t = ember.empty(2, 3)
    assert init.constant_(t, 0.5).tolist() == [[0.5] * 3] * 2
    assert init.ones_(t).sum().item() == 6
    assert init.zeros_(t).sum().item() == 0
    assert init.eye_(t).tolist() == [[1, 0, 0], [0, 1, 0]]
    init.uniform_(t, -2, -1)
    assert _vals(t).max() < -1 and _vals(t).min() >= -2
    big = ember.empty(10000)
    init.trunc_normal_(big, std=2.0, a=-1.0, b=1.5)
    assert _vals(big).min() >= -1.0 and _vals(big).max() <= 1.5
    init.normal_(big, 3.0, 0.5)
    assert abs(_vals(big).mean() - 3) < 0.02


def test_orthogonal_and_dirac() -> None:
    t = ember.empty(4, 6)
    init.orthogonal_(t)
    q = t.cpu().numpy().astype(np.float64)
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-5)
    w = ember.empty(2, 2, 3, 3)
    init.dirac_(w)
    x = ember.randn(1, 2, 5, 5)
    np.testing.assert_allclose(
        nn.functional.conv2d(x, w, padding=1).cpu().numpy(), x.cpu().numpy(), atol=1e-6
    )


def test_init_keeps_requires_grad_and_no_graph() -> None:
    p = nn.Parameter(ember.empty(3, 3))
    init.kaiming_uniform_(p)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
