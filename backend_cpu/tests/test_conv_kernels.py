"""Convolution kernels against a tap-by-tap reference: the padded-row input gradient
(zero columns through the GEMM), the weight gradient and forward by blocks of samples."""

from __future__ import annotations

import numpy as np
import pytest
from ember_cpu.grad_kernels import conv2d_input_grad, conv2d_weight_grad
from ember_cpu.nn_kernels import conv2d

Pair = tuple[int, int]


def _geometry(hw: Pair, k: Pair, s: Pair, p: Pair, d: Pair) -> Pair:
    return tuple((hw[a] + 2 * p[a] - d[a] * (k[a] - 1) - 1) // s[a] + 1 for a in (0, 1))  # type: ignore[return-value]


def _tap(a: np.ndarray, i: int, j: int, oh: int, ow: int, s: Pair, d: Pair) -> np.ndarray:
    return a[
        ...,
        i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0],
        j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1],
    ]


def _reference(x: np.ndarray, w: np.ndarray, g: np.ndarray, s: Pair, p: Pair, d: Pair, groups: int):
    """Forward, input gradient and weight gradient in float64, one einsum per tap and group."""
    x, w, g = x.astype(np.float64), w.astype(np.float64), g.astype(np.float64)
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    og, (oh, ow) = o // groups, g.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    out, dxp, dw = np.zeros((n, o, oh, ow)), np.zeros_like(xp), np.zeros(w.shape)
    for grp in range(groups):
        ci, oi = slice(grp * cg, (grp + 1) * cg), slice(grp * og, (grp + 1) * og)
        for i in range(kh):
            for j in range(kw):
                win = _tap(xp[:, ci], i, j, oh, ow, s, d)
                out[:, oi] += np.einsum("nchw,oc->nohw", win, w[oi, :, i, j])
                _tap(dxp[:, ci], i, j, oh, ow, s, d)[...] += np.einsum(
                    "nohw,oc->nchw", g[:, oi], w[oi, :, i, j]
                )
                dw[oi, :, i, j] = np.einsum("nohw,nchw->oc", g[:, oi], win)
    return out, dxp[:, :, p[0] : p[0] + h, p[1] : p[1] + wd], dw


CASES = [  # (N, C, H, W, O, kh, kw, stride, padding, dilation, groups): C/groups·kh·kw >= 64 takes the padded-row path
    (4, 16, 13, 13, 8, 3, 3, (1, 1), (0, 0), (1, 1), 1),
    (3, 16, 9, 11, 6, 3, 3, (1, 1), (1, 2), (1, 1), 1),
    (2, 16, 12, 10, 4, 3, 2, (1, 1), (1, 0), (2, 3), 1),
    (2, 32, 7, 9, 8, 3, 3, (1, 1), (1, 1), (1, 1), 2),
    (2, 16, 9, 9, 8, 3, 3, (2, 2), (1, 1), (1, 1), 1),
    (5, 1, 12, 12, 8, 3, 3, (1, 1), (0, 0), (1, 1), 1),
    (1, 64, 4, 4, 8, 1, 1, (1, 1), (0, 0), (1, 1), 1),
    # 576 x 100 columns per sample: blocks of 4 samples (1 MB) and a last block of 1
    (9, 64, 12, 12, 8, 3, 3, (1, 1), (0, 0), (1, 1), 1),
    (9, 64, 10, 10, 8, 3, 3, (1, 1), (1, 1), (1, 1), 2),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_kernels_match_the_tap_reference(case: tuple, dtype: type) -> None:
    n, c, h, wd, o, kh, kw, s, p, d, groups = case
    rng = np.random.default_rng(7)
    oh, ow = _geometry((h, wd), (kh, kw), s, p, d)
    x = rng.standard_normal((n, c, h, wd)).astype(dtype)
    w = rng.standard_normal((o, c // groups, kh, kw)).astype(dtype)
    g = rng.standard_normal((n, o, oh, ow)).astype(dtype)
    out, dx, dw = _reference(x, w, g, s, p, d, groups)
    tol = {"rtol": 1e-5, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}
    for got, want in (
        (conv2d(x, w, s, p, d, groups), out),
        (conv2d_input_grad(g, w, (h, wd), s, p, d, groups), dx),
        (conv2d_weight_grad(x, g, w.shape, s, p, d, groups), dw),
    ):
        assert got.dtype == dtype and got.shape == want.shape and got.flags.c_contiguous
        np.testing.assert_allclose(got, want, **tol)


def test_input_grad_with_an_infinite_weight_touches_only_that_taps_cells() -> None:
    # The padded-row GEMM multiplies the weights by zero columns; inf·0 would be NaN there,
    # so non-finite weights take the exact path: cell (0, 0) sees only tap (0, 0), stays 64.
    g = np.ones((2, 64, 11, 11), np.float32)
    w = np.ones((64, 32, 3, 3), np.float32)
    w[0, 0, 2, 2] = np.inf
    dx = conv2d_input_grad(g, w, (13, 13), (1, 1), (0, 0), (1, 1), 1)
    assert dx[0, 0, 0, 0] == 64.0 and dx[1, 0, 12, 0] == 64.0
    assert np.isposinf(dx[:, 0, 2:, 2:]).all() and np.isfinite(dx[:, 1:]).all()


def test_half_gradients_come_back_contiguous_in_their_dtype() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 16, 9, 10)).astype(np.float16)
    g = rng.standard_normal((2, 8, 7, 8)).astype(np.float16)
    w = rng.standard_normal((8, 16, 3, 3)).astype(np.float16)
    _, dx, dw = _reference(x, w, g, (1, 1), (0, 0), (1, 1), 1)
    got_dw = conv2d_weight_grad(x, g, w.shape, (1, 1), (0, 0), (1, 1), 1)
    got_dx = conv2d_input_grad(g, w, (9, 10), (1, 1), (0, 0), (1, 1), 1)
    for got, want in ((got_dw, dw), (got_dx, dx)):
        assert got.dtype == np.float16 and got.flags.c_contiguous
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-2, atol=5e-2)
