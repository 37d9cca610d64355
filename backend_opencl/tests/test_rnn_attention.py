"""The OpenCL recurrent-layer and attention kernels (rnn.py, attention.py) through the frontend:
nn.LSTM/GRU/RNN (packed too), nn.MultiheadAttention and F.scaled_dot_product_attention on
"opencl", forward and backward, against the same modules on the CPU backend (the oracle)."""

from __future__ import annotations

import copy
from typing import Any

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from ember_opencl import runtime

TOL = {"float32": 1e-5, "float64": 1e-12}


def _np(t: Any) -> np.ndarray:
    return t.detach().to("cpu").numpy()


def _close(a: Any, b: Any, tol: float) -> None:
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def _ran(*kernels: str, dtype: str = "float32") -> None:
    """The OpenCL kernels themselves ran (not the frontend's decomposition): they are built."""
    built = {k[1:3] for k in runtime.device(0).kernels if k[0] == "ember_rnn_attn"}
    missing = [k for k in kernels if (k, dtype) not in built]
    assert not missing, f"not run on the device: {missing}"


def _pair(module: Any, dtype: str) -> tuple[Any, Any]:
    dt = getattr(ember, dtype)
    cpu = module.to(dt)
    return cpu, copy.deepcopy(cpu).to("opencl")


def _grads(cpu: Any, dev: Any, tol: float) -> None:
    for (name, a), b in zip(cpu.named_parameters(), dev.parameters()):
        assert b.grad is not None, name
        _close(b.grad, a.grad, tol)


def _run_rnn(
    cpu: Any, dev: Any, x: np.ndarray, h0: list[np.ndarray], lengths: list[int] | None, tol: float
) -> None:
    outs = []
    for model, device in ((cpu, "cpu"), (dev, "opencl")):
        xt = ember.tensor(x, device=device, requires_grad=True)
        hs = tuple(ember.tensor(h, device=device, requires_grad=True) for h in h0)
        inp = xt if lengths is None else pack_padded_sequence(xt, lengths, enforce_sorted=False)
        out, state = model(inp, hs if len(hs) > 1 else hs[0])
        if lengths is not None:
            out = pad_packed_sequence(out)[0]
        state = state if isinstance(state, tuple) else (state,)
        w = ember.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(x.dtype), device=device)
        loss = (out * w).sum() + sum(((s * s).sum() for s in state), ember.tensor(0.0, device=device))
        loss.backward()
        outs.append((out, state, xt, hs))
    (o1, s1, x1, h1), (o2, s2, x2, h2) = outs
    _close(o2, o1, tol)
    for a, b in zip(s1 + h1, s2 + h2):
        _close(b if b.grad is None else b.grad, a if a.grad is None else a.grad, tol)
    _close(x2.grad, x1.grad, tol)
    _grads(cpu, dev, tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstm_bidirectional_two_layers(dtype: str) -> None:
    ember.manual_seed(0)
    cpu, dev = _pair(ember.nn.LSTM(6, 5, num_layers=2, bidirectional=True), dtype)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 3, 6)).astype(dtype)
    h0 = [rng.standard_normal((4, 3, 5)).astype(dtype) for _ in range(2)]
    _run_rnn(cpu, dev, x, h0, None, TOL[dtype])
    _ran("ember_lstm_step", "ember_lstm_back", dtype=dtype)


def test_lstm_packed() -> None:
    ember.manual_seed(1)
    cpu, dev = _pair(ember.nn.LSTM(4, 6, bidirectional=True), "float32")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4, 4)).astype(np.float32)
    h0 = [rng.standard_normal((2, 4, 6)).astype(np.float32) for _ in range(2)]
    _run_rnn(cpu, dev, x, h0, [5, 2, 4, 1], TOL["float32"])
    _ran("ember_lstm_step", "ember_lstm_back")


@pytest.mark.parametrize("packed", [False, True])
def test_gru(packed: bool) -> None:
    ember.manual_seed(2)
    cpu, dev = _pair(ember.nn.GRU(4, 5, num_layers=2, bidirectional=packed, bias=not packed), "float32")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 3, 4)).astype(np.float32)
    h0 = [rng.standard_normal((4 if packed else 2, 3, 5)).astype(np.float32)]
    _run_rnn(cpu, dev, x, h0, [3, 6, 2] if packed else None, TOL["float32"])
    _ran("ember_gru_step", "ember_gru_back")


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn(nonlinearity: str) -> None:
    ember.manual_seed(3)
    cpu, dev = _pair(ember.nn.RNN(4, 5, nonlinearity=nonlinearity, bidirectional=True), "float32")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 3, 4)).astype(np.float32)
    h0 = [rng.standard_normal((2, 3, 5)).astype(np.float32)]
    _run_rnn(cpu, dev, x, h0, [6, 4, 1], TOL["float32"])
    _ran("ember_rnn_step", "ember_rnn_back")


def _tensors(rng: np.random.Generator, device: str, *shapes: tuple[int, ...]) -> list[Any]:
    return [
        ember.tensor(rng.standard_normal(s).astype(np.float32), device=device, requires_grad=True)
        for s in shapes
    ]


def test_multihead_attention_masks() -> None:
    ember.manual_seed(4)
    cpu, dev = _pair(ember.nn.MultiheadAttention(8, 2), "float32")
    res = []
    pad = np.array([[False] * 5, [False, False, False, True, True]])
    causal = np.triu(np.ones((4, 5), bool), 2)
    for model, device in ((cpu, "cpu"), (dev, "opencl")):
        q, k, v = _tensors(np.random.default_rng(4), device, (4, 2, 8), (5, 2, 8), (5, 2, 8))
        kpm, am = ember.tensor(pad, device=device), ember.tensor(causal, device=device)
        out, _ = model(q, k, v, key_padding_mask=kpm, attn_mask=am, need_weights=False)
        (out * out).sum().backward()
        res.append((out, q, k, v))
    (o1, *in1), (o2, *in2) = res
    _close(o2, o1, 1e-5)
    for a, b in zip(in1, in2):
        _close(b.grad, a.grad, 1e-5)
    _grads(cpu, dev, 1e-5)
    _ran("ember_sdpa_rows", "ember_sdpa_rows_back")


def test_sdpa_causal_and_additive_mask() -> None:
    res = []
    mask = np.where(np.random.default_rng(5).random((2, 1, 6, 6)) < 0.3, -np.inf, 0.5).astype(np.float32)
    for device in ("cpu", "opencl"):
        q, k, v = _tensors(np.random.default_rng(5), device, (2, 3, 6, 4), (2, 3, 6, 4), (2, 3, 6, 5))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        b = F.scaled_dot_product_attention(q, k, v, attn_mask=ember.tensor(mask, device=device), scale=0.7)
        ((a * a).sum() + (b * b).sum()).backward()
        res.append((a, b, q, k, v))
    for x, y in zip(*res):
        _close(y, x, 1e-5)
        if x.grad is not None:
            _close(y.grad, x.grad, 1e-5)
    _ran("ember_sdpa_rows", "ember_sdpa_rows_back")


@pytest.mark.parametrize("op", ["lstm", "gru", "rnn"])
@pytest.mark.parametrize("reverse", [False, True])
def test_backward_idle_rows_ignore_nonfinite_weights(ocl: Any, cpu: Any, op: str, reverse: bool) -> None:
    """A row past its length keeps its gradient: the product with an inf weight never reaches it
    (the CPU kernel's result, NaN where it has NaN)."""
    rng = np.random.default_rng(6)
    steps, n, hid = 4, 3, 2
    gates = {"lstm": 4, "gru": 3, "rnn": 1}[op]
    w = rng.standard_normal((gates * hid, hid)).astype(np.float32)
    w[0, 1] = np.inf
    h0, c0 = (rng.standard_normal((n, hid)).astype(np.float32) for _ in range(2))
    out = np.tanh(rng.standard_normal((steps, n, hid))).astype(np.float32)
    acts = rng.uniform(0.1, 0.9, (steps, n, 4 * hid)).astype(np.float32)
    if op == "lstm":
        g = rng.standard_normal((2, steps, n, hid)).astype(np.float32)
        args: tuple = (g, h0, c0, w, np.stack([out, out * 2]), acts)
    elif op == "gru":
        args = (rng.standard_normal((steps, n, hid)).astype(np.float32), h0, w, out, acts)
    else:
        args = (rng.standard_normal((steps, n, hid)).astype(np.float32), h0, w, out, False)
    name, lengths = f"{op}_layer_backward", (4, 1, 2)
    want = cpu.k[name](*args, reverse, lengths)
    got = ocl.k[name](
        *(ocl.backend.from_numpy(a, 0) if isinstance(a, np.ndarray) else a for a in args), reverse, lengths
    )
    for a, b in zip(want, got):
        np.testing.assert_allclose(ocl.backend.to_numpy(b), a, rtol=1e-5, atol=1e-6)
