"""Transposed convolutions: output_padding, groups, dilation and output_size against PyTorch."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck, gradgradcheck

CONVT_CASES = [
    ("2d", (2, 4, 5, 4), (4, 3, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    (
        "2d",
        (1, 4, 4, 5),
        (4, 1, 2, 3),
        {"stride": (2, 3), "padding": (0, 2), "output_padding": (1, 2), "groups": 4, "dilation": (2, 1)},
    ),
    ("2d", (1, 2, 3, 3), (2, 3, 3, 3), {"stride": 3, "padding": 2, "output_padding": 2, "dilation": 2}),
    (
        "2d",
        (2, 3, 3),
        (2, 3, 3, 2),
        {"stride": (1, 2), "padding": (1, 0), "output_padding": (1, 1), "dilation": (2, 1)},
    ),
    (
        "1d",
        (2, 6, 7),
        (6, 2, 3),
        {"stride": 3, "padding": 1, "output_padding": 2, "groups": 3, "dilation": 2},
    ),
    ("1d", (1, 2, 5), (2, 4, 4), {"stride": 1, "padding": 3}),
    ("1d", (4, 6), (4, 2, 2), {"stride": 2, "output_padding": 1, "groups": 2}),
]


def run_case(lib, case):
    """Output shape, sum(y * g) and the same weighted sums of the three gradients."""
    kind, xs, ws, kw = case
    rng = np.random.default_rng(len(xs) * 100 + ws[-1])
    groups = kw.get("groups", 1)
    x = lib.tensor(rng.standard_normal(xs), requires_grad=True)
    w = lib.tensor(rng.standard_normal(ws), requires_grad=True)
    b = lib.tensor(rng.standard_normal(ws[1] * groups), requires_grad=True)
    f = lib.nn.functional.conv_transpose2d if kind == "2d" else lib.nn.functional.conv_transpose1d
    y = f(x, w, b, **kw)
    g = lib.tensor(np.cos(np.arange(int(np.prod(tuple(y.shape))))).reshape(tuple(y.shape)))
    (y * g).sum().backward()

    def wsum(t):
        a = t.detach().cpu().numpy()
        return float((a * np.sin(np.arange(a.size)).reshape(a.shape)).sum())

    return (list(y.shape), wsum(y), wsum(x.grad), wsum(w.grad), wsum(b.grad))


# PyTorch 2.x: (output shape, sum(y * sin), same of x.grad, w.grad, b.grad) for g = cos
EXPECTED = [
    ([2, 6, 10, 7], -51.69432601493551, -2.001060699850508, 3.0749834457079466, 3.924458643447747),
    ([1, 4, 10, 13], 19.494713577143763, -1.131987782491045, -3.2178167448635713, 0.315023528412112),
    ([1, 3, 9, 9], 0.23166882189397686, -0.003285872892119679, 3.008468937964521, 0.346232861610695),
    ([3, 6, 7], -7.612914589919045, 1.0283502440856418, 2.984670972055442, 0.31444225053709984),
    ([2, 6, 23], 16.13857275055542, -4.310435182184538, 22.102851094720258, 0.8453923549238707),
    ([1, 4, 2], -0.6175293668602122, -1.922967487163794, -4.5155838512660065, -1.2777586858234387),
    ([4, 13], -2.149807868417111, 0.5609091237640316, 3.9519874384423965, 0.7469375998872088),
]


@pytest.mark.parametrize("i", range(len(CONVT_CASES)))
def test_matches_pytorch(i: int) -> None:
    got = run_case(ember, CONVT_CASES[i])
    want = EXPECTED[i]
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-10, atol=1e-12)


def test_output_padding_past_stride_second_order() -> None:
    # output_padding 1 with stride 1 is allowed because dilation is 2
    ember.manual_seed(0)
    x = ember.randn(1, 2, 3, 3, dtype=ember.float64, requires_grad=True)
    w = ember.randn(2, 3, 3, 2, dtype=ember.float64, requires_grad=True)

    def f(x: ember.Tensor, w: ember.Tensor) -> ember.Tensor:
        return ember.nn.functional.conv_transpose2d(
            x, w, padding=(1, 0), output_padding=(1, 0), dilation=(2, 1)
        )

    assert gradcheck(f, (x, w))
    assert gradgradcheck(f, (x, w))


def _module(cls: type, *args: int, **kw: int) -> nn.Module:
    return cls(*args, **kw).double()


def test_output_size() -> None:
    m = _module(nn.ConvTranspose2d, 2, 3, (3, 2), stride=2)
    x = ember.zeros(2, 5, 4, dtype=ember.float64)
    assert tuple(m(x).shape) == (3, 11, 8)
    assert tuple(m(x, output_size=(12, 9)).shape) == (3, 12, 9)
    assert tuple(m(x.unsqueeze(0), output_size=[1, 3, 12, 9]).shape) == (1, 3, 12, 9)
    m1 = _module(nn.ConvTranspose1d, 5, 3, 2, stride=2)
    assert tuple(m1(ember.zeros(5, 4, dtype=ember.float64), output_size=[9]).shape) == (3, 9)
    m3 = _module(nn.ConvTranspose1d, 6, 6, 3, stride=3, padding=1, dilation=2, output_padding=2, groups=3)
    assert tuple(m3(ember.zeros(2, 6, 7, dtype=ember.float64), output_size=[21]).shape) == (2, 6, 21)


def test_output_size_errors() -> None:
    m = _module(nn.ConvTranspose2d, 4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2)
    x = ember.zeros(2, 4, 5, 4, dtype=ember.float64)
    msg = r"requested an output size of \[11, 8\], but valid sizes range from \[9, 6\] to \[10, 7\]"
    with pytest.raises(ValueError, match=msg):
        m(x, output_size=[11, 8])
    with pytest.raises(
        ValueError, match="ConvTranspose2D: for 4D input, output_size must have 2 or 4 elements"
    ):
        m(x, output_size=[11])


def test_output_padding_error() -> None:
    x = ember.zeros(1, 2, 5, 4)
    w = ember.zeros(2, 3, 3, 2)
    msg = (
        "output padding must be smaller than either stride or dilation, but got output_padding_height: 2 "
        "output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1"
    )
    with pytest.raises(RuntimeError, match=msg):
        ember.nn.functional.conv_transpose2d(x, w, stride=2, output_padding=2)
    with pytest.raises(RuntimeError, match="output_padding_height: 0 output_padding_width: 2"):
        ember.nn.functional.conv_transpose1d(
            ember.zeros(1, 2, 5), ember.zeros(2, 3, 3), stride=2, output_padding=2
        )
