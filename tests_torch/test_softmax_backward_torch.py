"""softmax/log_softmax gradients (the fused ``*_backward`` kernels on the CPU, and the recorded
decomposition under create_graph) against PyTorch: values, dtypes, grad_fn names, double backward."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

FNS = ("softmax", "log_softmax")
TOL = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2}


def _pair(a: np.ndarray, dtype: str) -> tuple[Any, Any]:
    e = ember.tensor(a, dtype=getattr(ember, dtype), requires_grad=True)
    t = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)
    return e, t


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().float().numpy())


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize(
    ("shape", "dim", "transpose"), [((3, 7), 1, False), ((3, 7), 0, False), ((5, 4), 0, True)]
)
def test_gradient_matches_pytorch(fn: str, dtype: str, shape: tuple, dim: int, transpose: bool) -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(0, 2, shape)
    g = rng.normal(0, 1, shape[::-1] if transpose else shape)
    e, t = _pair(x, dtype)
    ye = getattr(ember, fn)(e.t() if transpose else e, dim)
    yt = getattr(torch, fn)(t.t() if transpose else t, dim)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__
    ye.backward(ember.tensor(g, dtype=ye.dtype))
    yt.backward(torch.tensor(g, dtype=yt.dtype))
    assert e.grad.dtype == getattr(ember, dtype)
    np.testing.assert_allclose(_np(e.grad), _np(t.grad), rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("fn", FNS)
def test_broadcast_gradient_from_sum(fn: str) -> None:
    x = np.random.default_rng(3).normal(0, 3, (4, 10000))
    e, t = _pair(x, "float32")
    getattr(ember, fn)(e, 1).sum().backward()
    getattr(torch, fn)(t, 1).sum().backward()
    # log_softmax's 1 - 10000 * exp(out) magnifies float32's rounding of out (both libraries)
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=2e-3 if fn == "log_softmax" else 1e-6)


@pytest.mark.parametrize("fn", FNS)
def test_double_backward_matches_pytorch(fn: str) -> None:
    rng = np.random.default_rng(5)
    x, g = rng.normal(0, 1, (3, 6)), rng.normal(0, 1, (3, 6))
    e, t = _pair(x, "float64")
    (ge,) = ember.autograd.grad(getattr(ember, fn)(e, 1), e, ember.tensor(g), create_graph=True)
    (gt,) = torch.autograd.grad(getattr(torch, fn)(t, 1), t, torch.tensor(g), create_graph=True)
    np.testing.assert_allclose(ge.detach().numpy(), gt.detach().numpy(), rtol=1e-12, atol=1e-12)
    (hess_e,) = ember.autograd.grad((ge * ge).sum(), e)
    (hess_t,) = torch.autograd.grad((gt * gt).sum(), t)
    np.testing.assert_allclose(hess_e.numpy(), hess_t.numpy(), rtol=1e-10, atol=1e-12)


def test_cross_entropy_gradient_matches_pytorch() -> None:
    rng = np.random.default_rng(9)
    x, y = rng.normal(0, 2, (20, 10000)), rng.integers(0, 10000, 20)
    e, t = _pair(x, "float32")
    ember.nn.functional.cross_entropy(e, ember.tensor(y)).backward()
    torch.nn.functional.cross_entropy(t, torch.tensor(y)).backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-7)


@pytest.mark.parametrize("norm_type", [2.0, float("inf"), 1.0, 3.0])
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_clip_grad_norm_matches_pytorch(norm_type: float, dtype: str) -> None:
    """The word-LM's other per-batch step: per-parameter norms, one total, one scale each
    (a complex gradient's 2-norm takes |g|, not g * g)."""
    rng = np.random.default_rng(11)
    grads = [rng.normal(0, 1, s) for s in ((40, 8), (8,), (3, 5))]
    if dtype == "complex64":
        grads = [g + 1j * rng.normal(0, 1, g.shape) for g in grads]
    pe = [ember.zeros(g.shape, dtype=getattr(ember, dtype), requires_grad=True) for g in grads]
    pt = [torch.zeros(g.shape, dtype=getattr(torch, dtype), requires_grad=True) for g in grads]
    for e, t, g in zip(pe, pt, grads):
        e.grad, t.grad = ember.tensor(g, dtype=e.dtype), torch.tensor(g, dtype=t.dtype)
    ne = ember.nn.utils.clip_grad_norm_(pe, 0.25, norm_type)
    nt = torch.nn.utils.clip_grad_norm_(pt, 0.25, norm_type)
    assert ne.dtype == getattr(ember, str(nt.dtype).removeprefix("torch."))
    np.testing.assert_allclose(ne.numpy(), nt.numpy(), rtol=1e-5)
    for e, t in zip(pe, pt):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)
