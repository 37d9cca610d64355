"""Derivatives at non-differentiable points against PyTorch's: each case runs the same function with
``lib = torch`` and ``lib = ember`` in float64 at its kinks and a few ordinary points, and the values,
first derivatives and (where cheap) second derivatives must be exactly equal. PyTorch picks one
subgradient at each kink (``relu'(0) = 0``, ``hardtanh`` passes the gradient at its bounds,
``abs'(0) = 0``, max ties split the gradient evenly); code ported from PyTorch relies on those picks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import ember.nn.functional as ef
import numpy as np
import pytest
import torch
import torch.nn.functional as tf

_F = {torch: tf, ember: ef}

_KINKS = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, -2.0, 2.0, 6.0, -6.0, 0.25]


def _np(t: Any) -> np.ndarray | None:
    if t is None:
        return None
    if getattr(t, "_is_zerotensor", lambda: False)():
        return np.zeros(tuple(t.shape))
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _run(lib: Any, fn: Callable, inputs: list, second: bool) -> list:
    xs = [lib.tensor(np.asarray(a, dtype=np.float64), dtype=lib.float64, requires_grad=True) for a in inputs]
    out = fn(lib, _F[lib], *xs)
    grads = lib.autograd.grad(out.sum(), xs, create_graph=second, allow_unused=True)
    result = [_np(out)] + [_np(g) for g in grads]
    if second:
        result += _second(lib, xs, grads)
    return result


def _second(lib: Any, xs: list, grads: tuple) -> list:
    """The gradient of ``sum(first gradients)``; a first gradient that does not depend on the
    inputs (ember may not record one whose derivative is zero) reads as zeros."""
    live = [g.sum() for g in grads if g is not None and g.requires_grad]
    if not live:
        return [np.zeros(tuple(x.shape)) for x in xs]
    seconds = lib.autograd.grad(sum(live), xs, allow_unused=True)
    return [np.zeros(tuple(x.shape)) if g is None else _np(g) for x, g in zip(xs, seconds, strict=True)]


def _check(fn: Callable, inputs: list, second: bool = True, rtol: float = 1e-9) -> None:
    expected = _run(torch, fn, inputs, second)
    actual = _run(ember, fn, inputs, second)
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        assert (a is None) == (e is None), (i, a, e)
        if e is not None:
            # atol 0: a zero (or a kink's exact 0.5, 1) must be exact; smooth points may differ by ulps
            np.testing.assert_allclose(a, e, rtol=rtol, atol=0, err_msg=f"output {i} (0: value, grads, 2nd)")


_UNARY: dict[str, Callable] = {
    "relu": lambda lib, F, x: F.relu(x),
    "relu6": lambda lib, F, x: F.relu6(x),
    "hardtanh": lambda lib, F, x: F.hardtanh(x),
    "hardtanh_-2_1": lambda lib, F, x: F.hardtanh(x, -2.0, 1.0),
    "hardsigmoid": lambda lib, F, x: F.hardsigmoid(x),
    "hardswish": lambda lib, F, x: F.hardswish(x),
    "hardshrink": lambda lib, F, x: F.hardshrink(x, 0.5),
    "softshrink": lambda lib, F, x: F.softshrink(x, 0.5),
    "softplus": lambda lib, F, x: F.softplus(x),
    "softplus_beta_threshold": lambda lib, F, x: F.softplus(x, beta=2.0, threshold=1.0),
    "logsigmoid": lambda lib, F, x: F.logsigmoid(x),
    "leaky_relu": lambda lib, F, x: F.leaky_relu(x, 0.1),
    "elu": lambda lib, F, x: F.elu(x),
    "elu_alpha": lambda lib, F, x: F.elu(x, alpha=0.5),
    "celu": lambda lib, F, x: F.celu(x, alpha=2.0),
    "selu": lambda lib, F, x: F.selu(x),
    "gelu": lambda lib, F, x: F.gelu(x),
    "gelu_tanh": lambda lib, F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda lib, F, x: F.silu(x),
    "mish": lambda lib, F, x: F.mish(x),
    "threshold": lambda lib, F, x: F.threshold(x, 0.5, -1.0),
    "abs": lambda lib, F, x: lib.abs(x),
    "sign": lambda lib, F, x: lib.sign(x),
    "sqrt": lambda lib, F, x: lib.sqrt(lib.abs(x)),
    "clamp": lambda lib, F, x: lib.clamp(x, -1.0, 1.0),
    "clamp_min": lambda lib, F, x: lib.clamp(x, min=0.5),
    "clamp_max": lambda lib, F, x: lib.clamp(x, max=0.5),
    "clamp_equal": lambda lib, F, x: lib.clamp(x, 0.5, 0.5),
    "clamp_crossed": lambda lib, F, x: lib.clamp(x, 1.0, -1.0),
    "max": lambda lib, F, x: lib.max(x * 0 + lib.round(x / 4)),
    "min": lambda lib, F, x: lib.min(lib.round(x / 4)),
    "amax": lambda lib, F, x: lib.amax(lib.round(x / 4)),
    "norm_zero": lambda lib, F, x: lib.norm(x * 0),
    "vector_norm_zero": lambda lib, F, x: lib.linalg.vector_norm(x * 0),
    "vector_norm_zero_ord1": lambda lib, F, x: lib.linalg.vector_norm(x * 0, ord=1),
    "vector_norm_zero_inf": lambda lib, F, x: lib.linalg.vector_norm(x * 0, ord=float("inf")),
    "vector_norm_zero_ord3": lambda lib, F, x: lib.linalg.vector_norm(x * 0, ord=3),
    "norm_ties_inf": lambda lib, F, x: lib.linalg.vector_norm(lib.abs(lib.round(x / 4)), ord=float("inf")),
    "relu_inplace": lambda lib, F, x: F.relu(x * 1, inplace=True),
    "relu6_inplace": lambda lib, F, x: F.relu6(x * 1, inplace=True),
    "hardtanh_inplace": lambda lib, F, x: F.hardtanh(x * 1, inplace=True),
    "hardsigmoid_inplace": lambda lib, F, x: F.hardsigmoid(x * 1, inplace=True),
    "hardswish_inplace": lambda lib, F, x: F.hardswish(x * 1, inplace=True),
    "elu_inplace": lambda lib, F, x: F.elu(x * 1, inplace=True),
    "selu_inplace": lambda lib, F, x: F.selu(x * 1, inplace=True),
    "celu_inplace": lambda lib, F, x: F.celu(x * 1, alpha=2.0, inplace=True),
}


# torch has no double backward for hardsigmoid; its norm's second derivative at 0 is NaN; its
# softplus double backward masks ``beta x >= threshold`` while its first derivative masks ``>``
_FIRST_ONLY = {
    "hardsigmoid",
    "hardsigmoid_inplace",
    "norm_zero",
    "vector_norm_zero",
    "softplus_beta_threshold",
}
# torch's hardsigmoid gradient is float32's 1/6 even in float64; ember's is float64's
_RTOL = {
    "hardsigmoid": 1e-7,
    "hardsigmoid_inplace": 1e-7,
    "gelu_tanh": 1e-6,
}  # gelu_tanh: cancellation in its tails at ±6


@pytest.mark.parametrize("name", list(_UNARY))
def test_unary_kinks_match_torch(name: str) -> None:
    _check(_UNARY[name], [_KINKS], second=name not in _FIRST_ONLY, rtol=_RTOL.get(name, 1e-9))


def _bce(lib: Any, F: Any, x: Any) -> Any:
    target = lib.tensor([0.0, 1.0, 0.5] * 4, dtype=lib.float64)
    return F.binary_cross_entropy_with_logits(x, target, reduction="none")


_LOSSES: dict[str, Callable] = {
    "bce_with_logits": _bce,
    "bce_with_logits_mean": lambda lib, F, x: _bce(lib, F, x).mean(),
    "l1": lambda lib, F, x: F.l1_loss(x, x * 0 + 0.5, reduction="none"),
    "smooth_l1": lambda lib, F, x: F.smooth_l1_loss(x, x * 0, reduction="none", beta=1.0),
    "smooth_l1_beta0": lambda lib, F, x: F.smooth_l1_loss(x, x * 0, reduction="none", beta=0.0),
    "huber": lambda lib, F, x: F.huber_loss(x, x * 0, reduction="none", delta=1.0),
    "hinge_embedding": lambda lib, F, x: F.hinge_embedding_loss(
        x, lib.tensor([-1.0] * 12, dtype=lib.float64), margin=1.0, reduction="none"
    ),
    "soft_margin": lambda lib, F, x: F.soft_margin_loss(x, lib.ones(12, dtype=lib.float64), reduction="none"),
    "margin_ranking": lambda lib, F, x: F.margin_ranking_loss(x, x * 0, x * 0 + 1, reduction="none"),
}


@pytest.mark.parametrize("name", list(_LOSSES))
def test_loss_kinks_match_torch(name: str) -> None:
    _check(_LOSSES[name], [_KINKS])


_TIES = [[1.0, 3.0, 3.0, 2.0], [3.0, 3.0, 3.0, 3.0], [0.0, -1.0, 0.0, -1.0]]


_REDUCTIONS: dict[str, Callable] = {
    "max": lambda lib, F, x: lib.max(x),
    "min": lambda lib, F, x: lib.min(x),
    "max_dim": lambda lib, F, x: lib.max(x, dim=1).values,
    "min_dim": lambda lib, F, x: lib.min(x, dim=1).values,
    "max_dim0_keepdim": lambda lib, F, x: lib.max(x, dim=0, keepdim=True).values,
    "amax_dim": lambda lib, F, x: lib.amax(x, dim=1),
    "amin_dim": lambda lib, F, x: lib.amin(x, dim=0),
    "amax_all": lambda lib, F, x: lib.amax(x),
    "norm_inf_dim": lambda lib, F, x: lib.linalg.vector_norm(x, ord=float("inf"), dim=1),
    "norm_zero_rows": lambda lib, F, x: lib.linalg.vector_norm(x * (x < 0), dim=1),
    "norm_fro_zero_rows": lambda lib, F, x: lib.norm(x * (x < 0), dim=1),
    "norm_ord3_zero_rows": lambda lib, F, x: lib.linalg.vector_norm(x * (x < 0), ord=3, dim=1),
    "norm_ord1_zero_rows": lambda lib, F, x: lib.linalg.vector_norm(x * (x < 0), ord=1, dim=1),
    "std_one": lambda lib, F, x: lib.std(x[:, :1], dim=1),
    "var_one": lambda lib, F, x: lib.var(x[:, :1], dim=1),
    "std_one_all": lambda lib, F, x: lib.std(x[:1, :1]),
    "var_one_all": lambda lib, F, x: lib.var(x[:1, :1]),
    "std_one_unbiased_false": lambda lib, F, x: lib.std(x[:, :1], dim=1, unbiased=False),
    "var_one_correction0": lambda lib, F, x: lib.var(x[:, :1], dim=1, correction=0),
    "std_constant": lambda lib, F, x: lib.std(x * 0 + 1, dim=1),
    "normalize_zero_rows": lambda lib, F, x: F.normalize(x * (x < 0), dim=1),
    "normalize_ord1_zero_rows": lambda lib, F, x: F.normalize(x * (x < 0), p=1.0, dim=1),
    "std_mean_constant": lambda lib, F, x: lib.std_mean(x * 0 + 1, dim=1)[0],
}


@pytest.mark.parametrize("name", list(_REDUCTIONS))
def test_reduction_ties_match_torch(name: str) -> None:
    _check(_REDUCTIONS[name], [_TIES], second=False)


_A = [0.0, 0.0, 1.0, -1.0, 2.0, 0.0, -0.0, 3.0]
_B = [0.0, 1.0, 1.0, -1.0, -1.0, -2.0, 0.0, 3.0]

_BINARY: dict[str, Callable] = {
    "maximum": lambda lib, F, a, b: lib.maximum(a, b),
    "minimum": lambda lib, F, a, b: lib.minimum(a, b),
    "fmax": lambda lib, F, a, b: lib.fmax(a, b),
    "fmin": lambda lib, F, a, b: lib.fmin(a, b),
    "atan2": lambda lib, F, a, b: lib.atan2(a, b),
    "where": lambda lib, F, a, b: lib.where(a > b, a, b),
    "where_eq": lambda lib, F, a, b: lib.where(a >= b, a, b),
    "pow_tensor": lambda lib, F, a, b: lib.pow(lib.abs(a), b),
    "clamp_tensor": lambda lib, F, a, b: lib.clamp(a, min=b),
    "clamp_tensor_both": lambda lib, F, a, b: lib.clamp(a, min=b, max=b),
}


@pytest.mark.parametrize("name", list(_BINARY))
def test_binary_kinks_match_torch(name: str) -> None:
    _check(_BINARY[name], [_A, _B])


_ZERO = [0.0, 0.0, 1.0, 2.0]


@pytest.mark.parametrize("exponent", [0.0, 0.5, 1.0, 2.0, 3.0, -1.0, -0.5, -2.0])
def test_pow_at_zero_matches_torch(exponent: float) -> None:
    _check(lambda lib, F, x: lib.pow(x, exponent), [_ZERO])
    _check(lambda lib, F, x: x**exponent, [_ZERO])


@pytest.mark.parametrize("base", [0.0, 2.0, 1.0])
def test_scalar_base_pow_matches_torch(base: float) -> None:
    _check(lambda lib, F, x: lib.pow(base, x), [[0.0, 1.0, -1.0, 0.5]])


_ZEROS = [[0.0, 2.0, 3.0], [1.0, 2.0, 3.0], [0.0, 0.0, 1.0]]
_PRODUCTS: dict[str, Callable] = {
    "prod_dim_one_zero": lambda lib, F, x: x.prod(1),
    "prod_all": lambda lib, F, x: x.prod(),
    "prod_dim0": lambda lib, F, x: x.prod(0),
}


@pytest.mark.parametrize("name", list(_PRODUCTS))
def test_prod_at_zeros_matches_torch(name: str) -> None:
    """The gradient at a row's only zero is the product of the rest (not 0)."""
    _check(_PRODUCTS[name], [_ZEROS])


def test_binary_cross_entropy_at_zero_and_one_matches_torch() -> None:
    """Finite gradients at inputs 0 and 1 (PyTorch's clamped denominator), not NaN."""

    def bce(lib: Any, F: Any, x: Any) -> Any:
        return F.binary_cross_entropy(x, lib.tensor([0.0, 1.0, 1.0, 0.0, 0.5], dtype=lib.float64))

    _check(bce, [[0.0, 1.0, 0.0, 1.0, 0.25]], second=False)
