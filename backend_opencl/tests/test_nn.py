"""The fused pooling and conv2d kernels against the CPU backend's (the oracle)."""

from __future__ import annotations

from typing import Any

import ember.backends as eb
import numpy as np
import pytest
from _ocl_helpers import values

POOLS = [  # shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 8, 9), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((1, 2, 7, 7), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ((1, 2, 9, 8), (2, 3), (1, 2), (1, 0), (2, 2), False),
    ((2, 3, 5, 6), (3, 2), (2, 3), (1, 1), (1, 2), True),
]
CONVS = [  # x shape, w shape, stride, padding, dilation, groups
    ((2, 3, 9, 8), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1),
    ((1, 4, 10, 7), (6, 2, 3, 2), (2, 1), (1, 2), (1, 1), 2),
    ((2, 2, 11, 11), (3, 2, 2, 3), (1, 2), (2, 1), (2, 3), 1),
    ((1, 3, 5, 5), (3, 1, 5, 5), (1, 1), (2, 2), (1, 1), 3),
]


def _dev(ocl: eb.LoadedBackend, v: np.ndarray, transposed: bool = False) -> Any:
    if not transposed:
        return ocl.backend.from_numpy(v, 0)
    perm = tuple(range(v.ndim - 2)) + (v.ndim - 1, v.ndim - 2)
    return ocl.k["permute"](ocl.backend.from_numpy(np.ascontiguousarray(v.transpose(perm)), 0), perm)


def _host(ocl: eb.LoadedBackend, a: Any) -> np.ndarray:
    return np.asarray(ocl.backend.to_numpy(a))


def _special(v: np.ndarray) -> np.ndarray:
    """NaN, -inf and ties: the cases where the choice of index matters."""
    v = v.copy()
    v.reshape(-1)[::7] = np.nan
    v.reshape(-1)[3::5] = -np.inf
    v.reshape(-1)[1::4] = 1.5
    return v


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("cfg", POOLS)
def test_max_pool2d_matches_cpu(ocl, cpu, cfg: tuple, special: bool, dtype: str) -> None:  # type: ignore[no-untyped-def]
    shape, *params = cfg
    x = values(np.random.default_rng(0), shape, dtype)
    x = _special(x) if special else x
    want_v, want_i = cpu.k["max_pool2d"](x, *params)
    got_v, got_i = ocl.k["max_pool2d"](_dev(ocl, x, special), *params)
    np.testing.assert_array_equal(_host(ocl, got_v), want_v)
    np.testing.assert_array_equal(_host(ocl, got_i), want_i)


def test_max_pool2d_all_neg_inf_window_reports_an_in_bounds_cell(ocl, cpu) -> None:  # type: ignore[no-untyped-def]
    x = np.full((1, 1, 4, 4), -np.inf, np.float32)
    params = ((3, 3), (2, 2), (1, 1), (1, 1), True)
    want = cpu.k["max_pool2d"](x, *params)[1]
    np.testing.assert_array_equal(_host(ocl, ocl.k["max_pool2d"](_dev(ocl, x), *params)[1]), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("include_pad", [False, True])
@pytest.mark.parametrize("cfg", POOLS)
def test_avg_pool2d_matches_cpu(ocl, cpu, cfg: tuple, include_pad: bool, dtype: str) -> None:  # type: ignore[no-untyped-def]
    shape, kernel, stride, padding, _, ceil = cfg
    padding = (min(padding[0], kernel[0] // 2), min(padding[1], kernel[1] // 2))
    x = values(np.random.default_rng(1), shape, dtype)
    want = cpu.k["avg_pool2d"](x, kernel, stride, padding, ceil, include_pad)
    got = ocl.k["avg_pool2d"](_dev(ocl, x, True), kernel, stride, padding, ceil, include_pad)
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(_host(ocl, got), want, rtol=tol, atol=tol * np.abs(x).max())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("cfg", CONVS)
def test_conv2d_matches_cpu(ocl, cpu, cfg: tuple, transposed: bool, dtype: str) -> None:  # type: ignore[no-untyped-def]
    xs, ws, *params = cfg
    rng = np.random.default_rng(2)
    x, w = values(rng, xs, dtype), values(rng, ws, dtype)
    want = cpu.k["conv2d"](x, w, *params)
    got = ocl.k["conv2d"](_dev(ocl, x, transposed), _dev(ocl, w, transposed), *params)
    assert tuple(got.shape) == want.shape
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(_host(ocl, got), want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("cfg", CONVS)
def test_conv2d_grads_match_cpu(ocl, cpu, cfg: tuple) -> None:  # type: ignore[no-untyped-def]
    """Input grad (matmul + col2im) and weight grad (im2col + matmul) on strided inputs."""
    xs, ws, *params = cfg
    rng = np.random.default_rng(3)
    x, w = values(rng, xs, "float32"), values(rng, ws, "float32")
    g = values(rng, cpu.k["conv2d"](x, w, *params).shape, "float32")
    want_x = cpu.k["conv2d_input_grad"](g, w, xs[2:], *params)
    got_x = ocl.k["conv2d_input_grad"](_dev(ocl, g, True), _dev(ocl, w, True), xs[2:], *params)
    np.testing.assert_allclose(_host(ocl, got_x), want_x, rtol=1e-5, atol=1e-5 * np.abs(want_x).max())
    want_w = cpu.k["conv2d_weight_grad"](x, g, ws, *params)
    got_w = ocl.k["conv2d_weight_grad"](_dev(ocl, x, True), _dev(ocl, g, True), ws, *params)
    np.testing.assert_allclose(_host(ocl, got_w), want_w, rtol=1e-5, atol=1e-5 * np.abs(want_w).max())


def test_conv2d_weight_grad_split_batch_matches_cpu(ocl, cpu) -> None:  # type: ignore[no-untyped-def]
    """A large batch with one output tile: the product is split over batch chunks and summed."""
    rng = np.random.default_rng(4)
    x, w = values(rng, (16, 1, 20, 20), "float32"), values(rng, (4, 1, 3, 3), "float32")
    params = ((1, 1), (1, 1), (1, 1), 1)
    g = values(rng, cpu.k["conv2d"](x, w, *params).shape, "float32")
    want = cpu.k["conv2d_weight_grad"](x, g, w.shape, *params)
    got = _host(ocl, ocl.k["conv2d_weight_grad"](_dev(ocl, x), _dev(ocl, g), w.shape, *params))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_conv2d_input_grad_stride_one_dilated_padded_matches_cpu(ocl, cpu) -> None:  # type: ignore[no-untyped-def]
    """col2im's stride-1 path (a run of each column row per tap), with dilation, uneven padding
    and taps that fall outside the input on both sides."""
    rng = np.random.default_rng(6)
    x, w = values(rng, (2, 3, 7, 9), "float32"), values(rng, (4, 3, 3, 4), "float32")
    params = ((1, 1), (2, 3), (2, 1), 1)
    g = values(rng, cpu.k["conv2d"](x, w, *params).shape, "float32")
    want = cpu.k["conv2d_input_grad"](g, w, (7, 9), *params)
    got = _host(ocl, ocl.k["conv2d_input_grad"](_dev(ocl, g), _dev(ocl, w), (7, 9), *params))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("cfg", POOLS)
def test_pool_backwards_equal_cpu(ocl, cpu, cfg: tuple) -> None:  # type: ignore[no-untyped-def]
    """Exactly equal: the same additions in the same order (no atomics)."""
    shape, kernel, stride, padding, dilation, ceil = cfg
    rng = np.random.default_rng(5)
    x = values(rng, shape, "float32")
    vals, idx = cpu.k["max_pool2d"](x, kernel, stride, padding, dilation, ceil)
    g = values(rng, vals.shape, "float32")
    overlap = any(stride[i] < dilation[i] * (kernel[i] - 1) + 1 for i in range(2))
    for accumulate in {overlap, True}:
        want = cpu.k["max_pool2d_backward"](g, idx, shape[2:], accumulate)
        got = ocl.k["max_pool2d_backward"](_dev(ocl, g, True), _dev(ocl, idx), shape[2:], accumulate)
        np.testing.assert_array_equal(_host(ocl, got), want)
    padding = (min(padding[0], kernel[0] // 2), min(padding[1], kernel[1] // 2))
    ga = values(rng, cpu.k["avg_pool2d"](x, kernel, stride, padding, ceil, True).shape, "float32")
    want = cpu.k["avg_pool2d_backward"](ga, shape[2:], kernel, stride, padding)
    got = ocl.k["avg_pool2d_backward"](_dev(ocl, ga, True), shape[2:], kernel, stride, padding)
    np.testing.assert_array_equal(_host(ocl, got), want)
