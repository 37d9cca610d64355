"""LSTM with ``proj_size``: parameter names and shapes, outputs and gradients against PyTorch."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import nn


def run(lib, batch_first=False, bidirectional=False, num_layers=2, hx=False, unbatched=False):  # type: ignore[no-untyped-def]
    """repr, parameter names and shapes, output shapes, weighted sums of outputs and gradients."""
    m = lib.nn.LSTM(
        3, 5, num_layers=num_layers, proj_size=2, batch_first=batch_first, bidirectional=bidirectional
    ).double()
    names = [n for n, _ in m.named_parameters()]
    shapes = [list(p.shape) for p in m.parameters()]
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(np.sin(np.arange(p.numel()) * 0.37 + i).reshape(tuple(p.shape)) * 0.5))
    dirs = 2 if bidirectional else 1
    xs = (4, 3) if unbatched else ((2, 4, 3) if batch_first else (4, 2, 3))
    x = lib.tensor(np.cos(np.arange(int(np.prod(xs)))).reshape(xs), requires_grad=True)
    args: tuple = ()
    if hx:
        hs = (num_layers * dirs, 2) if unbatched else (num_layers * dirs, 2, 2)
        cs = (num_layers * dirs, 5) if unbatched else (num_layers * dirs, 2, 5)
        h0 = lib.tensor(np.sin(np.arange(int(np.prod(hs)))).reshape(hs))
        c0 = lib.tensor(np.cos(np.arange(int(np.prod(cs)))).reshape(cs))
        args = ((h0, c0),)
    out, (h, c) = m(x, *args)
    (out.sum() + (h * h).sum() + c.sum()).backward()

    def f(t):  # type: ignore[no-untyped-def]
        return float((t.detach().cpu().numpy() * np.sin(np.arange(t.numel())).reshape(tuple(t.shape))).sum())

    grads = sum(f(p.grad) for p in m.parameters())
    return [
        repr(m),
        names,
        shapes,
        list(out.shape),
        list(h.shape),
        list(c.shape),
        f(out),
        f(h),
        f(c),
        f(x.grad),
        grads,
    ]


KWARGS = [
    {},
    {"bidirectional": True},
    {"batch_first": True, "hx": True, "num_layers": 1},
    {"unbatched": True, "hx": True, "bidirectional": True},
]

# PyTorch 2.x results of run(torch, **kwargs)
EXPECTED = [
    [
        "LSTM(3, 5, proj_size=2, num_layers=2)",
        [
            "weight_ih_l0",
            "weight_hh_l0",
            "bias_ih_l0",
            "bias_hh_l0",
            "weight_hr_l0",
            "weight_ih_l1",
            "weight_hh_l1",
            "bias_ih_l1",
            "bias_hh_l1",
            "weight_hr_l1",
        ],
        [[20, 3], [20, 2], [20], [20], [2, 5], [20, 2], [20, 2], [20], [20], [2, 5]],
        [4, 2, 2],
        [2, 2, 2],
        [2, 2, 5],
        0.534634161648943,
        -0.23611704787169396,
        2.1341002695078988,
        0.3215644311658033,
        -12.120428759718198,
    ],
    [
        "LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=True)",
        [
            "weight_ih_l0",
            "weight_hh_l0",
            "bias_ih_l0",
            "bias_hh_l0",
            "weight_hr_l0",
            "weight_ih_l0_reverse",
            "weight_hh_l0_reverse",
            "bias_ih_l0_reverse",
            "bias_hh_l0_reverse",
            "weight_hr_l0_reverse",
            "weight_ih_l1",
            "weight_hh_l1",
            "bias_ih_l1",
            "bias_hh_l1",
            "weight_hr_l1",
            "weight_ih_l1_reverse",
            "weight_hh_l1_reverse",
            "bias_ih_l1_reverse",
            "bias_hh_l1_reverse",
            "weight_hr_l1_reverse",
        ],
        [
            [20, 3],
            [20, 2],
            [20],
            [20],
            [2, 5],
            [20, 3],
            [20, 2],
            [20],
            [20],
            [2, 5],
            [20, 4],
            [20, 2],
            [20],
            [20],
            [2, 5],
            [20, 4],
            [20, 2],
            [20],
            [20],
            [2, 5],
        ],
        [4, 2, 4],
        [4, 2, 2],
        [4, 2, 5],
        -0.1431164801203587,
        -0.7050535645929197,
        -0.06066931721991198,
        1.8345850716789387,
        -27.707078311297476,
    ],
    [
        "LSTM(3, 5, proj_size=2, batch_first=True)",
        ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"],
        [[20, 3], [20, 2], [20], [20], [2, 5]],
        [2, 4, 2],
        [1, 2, 2],
        [1, 2, 5],
        -0.29348510173200354,
        -0.09702269591855658,
        -0.10359393294159847,
        -0.2391195702291248,
        4.852222734023153,
    ],
    [
        "LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=True)",
        [
            "weight_ih_l0",
            "weight_hh_l0",
            "bias_ih_l0",
            "bias_hh_l0",
            "weight_hr_l0",
            "weight_ih_l0_reverse",
            "weight_hh_l0_reverse",
            "bias_ih_l0_reverse",
            "bias_hh_l0_reverse",
            "weight_hr_l0_reverse",
            "weight_ih_l1",
            "weight_hh_l1",
            "bias_ih_l1",
            "bias_hh_l1",
            "weight_hr_l1",
            "weight_ih_l1_reverse",
            "weight_hh_l1_reverse",
            "bias_ih_l1_reverse",
            "bias_hh_l1_reverse",
            "weight_hr_l1_reverse",
        ],
        [
            [20, 3],
            [20, 2],
            [20],
            [20],
            [2, 5],
            [20, 3],
            [20, 2],
            [20],
            [20],
            [2, 5],
            [20, 4],
            [20, 2],
            [20],
            [20],
            [2, 5],
            [20, 4],
            [20, 2],
            [20],
            [20],
            [2, 5],
        ],
        [4, 4],
        [4, 2],
        [4, 5],
        0.2545600409814875,
        -0.09549351611120978,
        0.61353496683205,
        0.08070266649341462,
        -10.1492961788863,
    ],
]


@pytest.mark.parametrize("i", range(len(KWARGS)))
def test_matches_pytorch(i: int) -> None:
    got, want = run(ember, **KWARGS[i]), EXPECTED[i]
    assert got[:6] == want[:6]
    np.testing.assert_allclose(got[6:], want[6:], rtol=1e-10, atol=1e-12)


def test_proj_size_errors() -> None:
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not RNN or GRU"):
        nn.GRU(3, 5, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 5, proj_size=5)
    with pytest.raises(ValueError, match="proj_size should be a positive integer or zero"):
        nn.LSTM(3, 5, proj_size=-1)
    m = nn.LSTM(3, 5, proj_size=2)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 2\), got \[1, 2, 5\]"):
        m(ember.zeros(4, 2, 3), (ember.zeros(1, 2, 5), ember.zeros(1, 2, 5)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 5\), got \[1, 2, 2\]"):
        m(ember.zeros(4, 2, 3), (ember.zeros(1, 2, 2), ember.zeros(1, 2, 2)))


def test_state_dict_and_all_weights() -> None:
    m = nn.LSTM(3, 5, proj_size=2, bias=False)
    assert list(m.state_dict()) == ["weight_ih_l0", "weight_hh_l0", "weight_hr_l0"]
    assert [list(p.shape) for p in m.all_weights[0]] == [[20, 3], [20, 2], [2, 5]]
