"""The seed programs (EffectivePyTorch): fits that ordinary PyTorch code runs under ``import ember as torch``."""

from __future__ import annotations

import ember as torch
import numpy as np


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Parameter(torch.rand(1))
        self.b = torch.nn.Parameter(torch.rand(1))

    def forward(self, x):
        yhat = self.a * x + self.b
        return yhat


class LinearNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(1, 1)

    def forward(self, x):
        yhat = self.linear(x.unsqueeze(1)).squeeze(1)
        return yhat


def _fit(net: torch.nn.Module, steps: int) -> None:
    x = torch.arange(100, dtype=torch.float32) / 100
    y = 5 * x + 3 + torch.rand(100) * 0.3
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(steps):
        net.zero_grad()
        yhat = net(x)
        loss = criterion(yhat, y)
        loss.backward()
        optimizer.step()


def test_net_fit_with_sgd() -> None:
    torch.manual_seed(0)
    net = Net()
    _fit(net, 10000)
    assert abs(net.a.item() - 5) < 0.1 and abs(net.b.item() - 3.15) < 0.1  # noise adds 0.15 on average


def test_linear_net_fit_with_sgd() -> None:
    torch.manual_seed(0)
    net = LinearNet()
    _fit(net, 2500)
    assert [p.shape for p in net.parameters()] == [(1, 1), (1,)]
    assert abs(net.linear.weight.item() - 5) < 0.5 and abs(net.linear.bias.item() - 3.15) < 0.3


def test_polynomial_fit_with_adam() -> None:
    torch.manual_seed(0)
    w = torch.tensor(torch.randn([3, 1]), requires_grad=True)
    opt = torch.optim.Adam([w], 0.1)

    def model(x):
        f = torch.stack([x * x, x, torch.ones_like(x)], 1)
        yhat = torch.squeeze(f @ w, 1)
        return yhat

    def compute_loss(y, yhat):
        loss = torch.nn.functional.mse_loss(yhat, y)
        return loss

    def generate_data():
        x = torch.rand(100) * 20 - 10
        y = 5 * x * x + 3
        return x, y

    def train_step():
        x, y = generate_data()
        yhat = model(x)
        loss = compute_loss(y, yhat)
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(1000):
        train_step()
    got = w.detach().cpu().numpy().ravel()
    # the seed prints [4.9924135, 0.00040895029, 3.4504161]; PyTorch 2.13 gives [5.00, 0.0006, 2.86]
    # with seed 0: the intercept is still converging after 1000 steps, so it depends on the draw
    np.testing.assert_allclose(got[:2], [5.0, 0.0], atol=0.05)
    assert 2.0 < got[2] < 3.6
