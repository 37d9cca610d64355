"""layer_norm is one NativeLayerNormBackward0 node (PyTorch's graph) whose rule is the closed
form; against PyTorch: gradients of input, weight and bias, which of them want one, no affine
parameters, half input with float32 parameters, and gradients of gradients."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

TOL = {"float64": 1e-12, "float32": 3e-5}


def _run(lib: Any, x: np.ndarray, w: Any, b: Any, g: np.ndarray, dtype: str, wants: tuple) -> tuple:
    dt = getattr(lib, dtype)
    ts = [
        None if a is None else lib.tensor(a, dtype=dt, requires_grad=want)
        for a, want in zip((x, w, b), wants)
    ]
    y = lib.nn.functional.layer_norm(ts[0], w.shape if w is not None else x.shape[-1:], ts[1], ts[2])
    y.backward(lib.tensor(g, dtype=dt))
    return type(y.grad_fn).__name__, [None if t is None or t.grad is None else t.grad.numpy() for t in ts]


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize(
    ("affine", "wants"),
    [
        (True, (True, True, True)),
        (True, (False, True, True)),
        (True, (True, False, False)),
        (False, (True, False, False)),
    ],
)
@pytest.mark.parametrize("shape", [(20, 10, 32), (4, 5, 6), (6,)])
def test_gradients_match_pytorch(dtype: str, affine: bool, wants: tuple, shape: tuple) -> None:
    rng = np.random.default_rng(4)
    ns = shape[-2:] if len(shape) == 3 and shape[-1] == 6 else shape[-1:]
    x, g = rng.normal(0, 2, shape), rng.normal(0, 1, shape)
    w, b = (rng.normal(1, 0.5, ns), rng.normal(0, 0.5, ns)) if affine else (None, None)
    name_e, ge = _run(ember, x, w, b, g, dtype, wants)
    name_t, gt = _run(torch, x, w, b, g, dtype, wants)
    assert name_e == name_t == "NativeLayerNormBackward0"
    for a, c in zip(ge, gt):
        assert (a is None) == (c is None)
        if a is not None:
            np.testing.assert_allclose(a, c, rtol=TOL[dtype], atol=TOL[dtype])


def test_half_input_float32_parameters() -> None:
    rng = np.random.default_rng(6)
    x, g = rng.normal(0, 2, (8, 16)), rng.normal(0, 1, (8, 16))
    w, b = rng.normal(1, 0.5, 16), rng.normal(0, 0.5, 16)
    outs = []
    for lib in (ember, torch):
        xt = lib.tensor(x, dtype=lib.bfloat16, requires_grad=True)
        wt, bt = (lib.tensor(a, dtype=lib.float32, requires_grad=True) for a in (w, b))
        y = lib.nn.functional.layer_norm(xt, (16,), wt, bt)
        assert y.dtype == lib.bfloat16
        y.backward(lib.tensor(g, dtype=lib.bfloat16))
        outs.append([y.detach().float().numpy(), xt.grad.float().numpy(), wt.grad.numpy(), bt.grad.numpy()])
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    for a, c in zip(outs[0][1:], outs[1][1:]):
        np.testing.assert_allclose(a, c, rtol=2e-2, atol=2e-2)


def test_double_backward_matches_pytorch() -> None:
    rng = np.random.default_rng(8)
    x, w, b, g = (
        rng.normal(0, 1, (5, 7)),
        rng.normal(1, 0.3, 7),
        rng.normal(0, 0.3, 7),
        rng.normal(0, 1, (5, 7)),
    )
    hess = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        first = lib.autograd.grad(
            lib.nn.functional.layer_norm(ts[0], (7,), ts[1], ts[2]), ts, lib.tensor(g), create_graph=True
        )
        hess.append([h.numpy() for h in lib.autograd.grad(sum((d * d).sum() for d in first), ts[:2])])
    for a, c in zip(*hess):
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-12)
