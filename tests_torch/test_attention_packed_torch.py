"""Self-attention's packed projection: the attention node takes the (3, N, heads, L, hd) q/k/v
tensor and returns its gradient stacked; against PyTorch: gradients of every parameter and of
the input, with and without an input that wants one, and gradients of gradients."""

from __future__ import annotations

import contextlib
from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _pair(seed: int, dtype: str) -> tuple[Any, Any]:
    ember.manual_seed(seed)
    me = ember.nn.MultiheadAttention(8, 2, dtype=getattr(ember, dtype))
    mt = torch.nn.MultiheadAttention(8, 2, dtype=getattr(torch, dtype))
    mt.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in me.state_dict().items()})
    return me, mt


def test_packed_node_records_qkv_as_input() -> None:
    me, _ = _pair(0, "float32")
    x = ember.randn(5, 3, 8)
    out = me(x, x, x, need_weights=False)[0]
    sdpa = out.grad_fn
    while sdpa is not None and type(sdpa).__name__ != "ScaledDotProductAttentionBackward0":
        sdpa = sdpa.next_functions[0][0] if sdpa.next_functions else None
    assert sdpa is not None
    names = [type(f).__name__ for f, _ in sdpa.next_functions]
    assert names == ["PermuteBackward0"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_grad", [True, False])
def test_gradients_match_pytorch(dtype: str, x_grad: bool) -> None:
    tol = 3e-5 if dtype == "float32" else 1e-11
    me, mt = _pair(1, dtype)
    rng = np.random.default_rng(2)
    x, g = rng.normal(0, 1, (6, 4, 8)), rng.normal(0, 1, (6, 4, 8))
    mask = np.log(np.tril(np.ones((6, 6))))
    xe = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=x_grad)
    xt = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=x_grad)
    oe = me(xe, xe, xe, attn_mask=ember.tensor(mask, dtype=xe.dtype), need_weights=False)[0]
    ot = mt(xt, xt, xt, attn_mask=torch.tensor(mask, dtype=xt.dtype), need_weights=False)[0]
    oe.backward(ember.tensor(g, dtype=oe.dtype))
    ot.backward(torch.tensor(g, dtype=ot.dtype))
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=tol, atol=tol)
    for (name, pe), pt in zip(me.named_parameters(), mt.parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), rtol=tol, atol=tol, err_msg=name)
    if x_grad:
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


def _math_attention(lib: Any) -> Any:
    if lib is torch:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        return sdpa_kernel(SDPBackend.MATH)
    return contextlib.nullcontext()


def test_double_backward_matches_pytorch() -> None:
    me, mt = _pair(3, "float64")
    x = np.random.default_rng(4).normal(0, 1, (4, 2, 8))
    hess = []
    for lib, m in ((ember, me), (torch, mt)):
        xi = lib.tensor(x, requires_grad=True)
        with _math_attention(lib):  # PyTorch's fused CPU attention has no double backward
            out = m(xi, xi, xi, need_weights=False)[0]
        (gx,) = lib.autograd.grad((out * out).sum(), xi, create_graph=True)
        (h,) = lib.autograd.grad((gx * gx).sum(), m.in_proj_weight)
        hess.append(h.numpy())
    np.testing.assert_allclose(hess[0], hess[1], rtol=1e-9, atol=1e-11)
