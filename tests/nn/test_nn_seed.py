"""The module examples of the EffectivePyTorch seed, run with ``import ember as torch``."""

from __future__ import annotations

import ember as torch
import numpy as np


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Parameter(torch.rand(1))
        self.b = torch.nn.Parameter(torch.rand(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        yhat = self.a * x + self.b
        return yhat


class LinearNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        yhat = self.linear(x.unsqueeze(1)).squeeze(1)
        return yhat


class Merge(torch.nn.Module):
    def __init__(
        self, in_features1: int, in_features2: int, out_features: int, activation: object = None
    ) -> None:
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.activation = activation

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        pa = self.linear1(a)
        pb = self.linear2(b)
        c = pa + pb
        if self.activation is not None:
            c = self.activation(c)
        return c


def _fit(net: torch.nn.Module, steps: int) -> tuple[float, float]:
    torch.manual_seed(0)
    x = torch.arange(100, dtype=torch.float32) / 100
    y = 5 * x + 3 + torch.rand(100) * 0.3
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    first = criterion(net(x), y).item()
    for _ in range(steps):
        net.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        optimizer.step()
    return first, loss.item()


def test_net_with_parameters_trains() -> None:
    net = Net()
    x = torch.arange(100, dtype=torch.float32)
    assert net(x).shape == (100,)
    assert len(list(net.parameters())) == 2
    first, last = _fit(net, 1500)
    assert last < 0.02 < first
    assert abs(net.a.item() - 5) < 0.3 and abs(net.b.item() - 3.15) < 0.2


def test_linear_net_trains() -> None:
    net = LinearNet()
    assert [tuple(p.shape) for p in net.parameters()] == [(1, 1), (1,)]
    first, last = _fit(net, 1500)
    assert last < 0.02 < first


def test_sequential_mlp() -> None:
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 10),
    )
    assert model(torch.rand(7, 64)).shape == (7, 10)
    assert len(list(model.parameters())) == 4


def test_broadcast_merge_matches_concat() -> None:
    a = torch.rand([5, 3, 5])
    b = torch.rand([5, 1, 6])
    linear = torch.nn.Linear(11, 10)
    tiled_b = b.repeat([1, 3, 1])
    c = torch.cat([a, tiled_b], 2)
    d = torch.nn.functional.relu(linear(c))
    assert d.shape == torch.Size([5, 3, 10])
    merge = Merge(5, 6, 10, torch.nn.functional.relu)
    with torch.no_grad():
        merge.linear1.weight.copy_(linear.weight[:, :5])
        merge.linear2.weight.copy_(linear.weight[:, 5:])
        merge.linear1.bias.copy_(linear.bias)
        merge.linear2.bias.zero_()
    e = merge(a, b)
    assert e.shape == torch.Size([5, 3, 10])
    np.testing.assert_allclose(e.detach().cpu().numpy(), d.detach().cpu().numpy(), rtol=1e-5, atol=1e-6)


def test_stable_softmax_and_cross_entropy() -> None:
    def unstable_softmax(logits: torch.Tensor) -> torch.Tensor:
        exp = torch.exp(logits)
        return exp / torch.sum(exp)

    with np.errstate(all="ignore"):
        assert np.isnan(unstable_softmax(torch.tensor([1000.0, 0.0])).cpu().numpy()[0])
    assert torch.nn.functional.softmax(torch.tensor([1000.0, 0.0]), 0).tolist() == [1.0, 0.0]

    def softmax_cross_entropy(labels: torch.Tensor, logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
        scaled_logits = logits - torch.max(logits)
        normalized_logits = scaled_logits - torch.logsumexp(scaled_logits, dim)
        return -torch.sum(labels * normalized_logits)

    labels = torch.tensor([0.5, 0.5])
    logits = torch.tensor([1000.0, 0.0])
    assert softmax_cross_entropy(labels, logits).cpu().numpy() == 500.0
    logits.requires_grad_(True)
    xe = softmax_cross_entropy(labels, logits)
    g = torch.autograd.grad(xe, logits)[0]
    assert g.cpu().numpy().tolist() == [0.5, -0.5]
    # the library's cross_entropy with probability targets agrees, and is stable too
    ce = torch.nn.functional.cross_entropy(logits.unsqueeze(0), labels.unsqueeze(0))
    assert ce.item() == 500.0
    assert torch.autograd.grad(ce, logits)[0].tolist() == [0.5, -0.5]


def test_polynomial_fit_with_mse_loss() -> None:
    torch.manual_seed(0)
    w = torch.tensor(torch.randn([3, 1]), requires_grad=True)
    opt = torch.optim.Adam([w], 0.1)

    def model(x: torch.Tensor) -> torch.Tensor:
        f = torch.stack([x * x, x, torch.ones_like(x)], 1)
        return torch.squeeze(f @ w, 1)

    for _ in range(400):
        x = torch.rand(100) * 20 - 10
        y = 5 * x * x + 3
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert abs(w[0].item() - 5) < 0.2
