"""Helpers for tests/ops: NumPy references, gradchecks in float64."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
from ember.autograd import gradcheck

__all__ = ["close", "dbl", "grad_ok", "gradgrad_ok", "same"]


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, ember.Tensor) else np.asarray(t)


def close(got: Any, expected: Any, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    g, e = _np(got), np.asarray(expected)
    assert g.shape == e.shape, (g.shape, e.shape)
    np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)


def same(got: Any, expected: Any) -> None:
    g, e = _np(got), np.asarray(expected)
    assert g.shape == e.shape, (g.shape, e.shape)
    np.testing.assert_array_equal(g, e)


def dbl(*shape: int, seed: int = 0, low: float = -1.0, high: float = 1.0) -> ember.Tensor:
    """A float64 leaf that requires grad, uniform in [low, high)."""
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.uniform(low, high, shape), dtype=ember.float64, requires_grad=True)


def grad_ok(fn: Any, *inputs: ember.Tensor) -> None:
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)


def gradgrad_ok(fn: Any, x: ember.Tensor, eps: float = 1e-6) -> None:
    """d/dx <grad sum(fn(x)), v> by double backward against central differences of the grad."""
    rng = np.random.default_rng(1)
    base = x.detach()
    v = ember.tensor(rng.uniform(-1, 1, tuple(base.shape)), dtype=ember.float64)

    def grad_at(a: ember.Tensor, create: bool) -> tuple:
        leaf = a.detach().requires_grad_()
        (g,) = ember.autograd.grad(fn(leaf).sum(), leaf, create_graph=create)
        return leaf, g

    leaf, g = grad_at(base, True)
    (hv,) = ember.autograd.grad((g * v).sum(), leaf)
    flat = base.cpu().numpy().reshape(-1)
    num = np.zeros(flat.size)
    for k in range(flat.size):
        d = np.zeros(flat.size)
        d[k] = eps
        step = ember.tensor(d.reshape(base.shape), dtype=ember.float64)
        gp = grad_at(base + step, False)[1]
        gm = grad_at(base - step, False)[1]
        num[k] = ((gp - gm) * v).sum().item() / (2 * eps)
    np.testing.assert_allclose(hv.cpu().numpy().reshape(-1), num, rtol=1e-4, atol=1e-6)
