"""nn.LSTM / nn.GRU / nn.RNN, recorded whole by the tracer, as ONNX LSTM / GRU / RNN operators
(one per layer; both directions in one operator). The weights are re-laid out for ONNX: gates
i,f,g,o -> i,o,f,c (LSTM) and r,z,n -> z,r,h (GRU, with ``linear_before_reset=1``, which is
PyTorch's formula), input and recurrent biases concatenated."""

from __future__ import annotations

from typing import Any

import numpy as np
from ember.jit import Node, Value

from ._basic import raise_unsupported
from ._context import Context, to_numpy

_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN_TANH": [0], "RNN_RELU": [0]}


def _gates(w: np.ndarray, mode: str) -> np.ndarray:
    blocks = np.split(w, len(_ORDER[mode]), axis=0)
    return np.concatenate([blocks[i] for i in _ORDER[mode]], axis=0)


def _layer_weights(module: Any, layer: int, mode: str) -> tuple[np.ndarray, ...]:
    dirs = ["", "_reverse"] if module.bidirectional else [""]
    w, r, b = [], [], []
    for d in dirs:
        sfx = f"_l{layer}{d}"
        wi = to_numpy(getattr(module, "weight_ih" + sfx))
        wh = to_numpy(getattr(module, "weight_hh" + sfx))
        w.append(_gates(wi, mode))
        r.append(_gates(wh, mode))
        if module.bias:
            bi = _gates(to_numpy(getattr(module, "bias_ih" + sfx)), mode)
            bh = _gates(to_numpy(getattr(module, "bias_hh" + sfx)), mode)
        else:
            bi = bh = np.zeros(wi.shape[0], wi.dtype)
        b.append(np.concatenate([bi, bh]))
    return np.stack(w), np.stack(r), np.stack(b)


def _layer_state(cx: Context, h: Value | None, layer: int, nd: int) -> str:
    if h is None:
        return ""
    return cx.op("Slice", [cx.name_of(h), cx.ints([layer * nd]), cx.ints([(layer + 1) * nd]), cx.ints([0])])


def rnn(cx: Context, n: Node) -> list[str]:
    m = n.module
    mode = m.mode
    x, hx = n.arg("input", pos=0), n.arg("hx", None, pos=1)
    if not isinstance(x, Value):
        raise_unsupported(n, "a PackedSequence input")
    if len(x.shape) != 3:
        raise_unsupported(n, "an unbatched input")
    if getattr(m, "proj_size", 0):
        raise_unsupported(n, "proj_size")
    h0, c0 = (hx if isinstance(hx, (tuple, list)) else (hx, None)) if hx is not None else (None, None)
    nd, hidden = 2 if m.bidirectional else 1, m.hidden_size
    seq = cx.name_of(x)
    if m.batch_first:
        seq = cx.op("Transpose", [seq], perm=[1, 0, 2])
    h_out, c_out = [], []
    op_type = {"LSTM": "LSTM", "GRU": "GRU"}.get(mode, "RNN")
    for layer in range(m.num_layers):
        w, r, b = _layer_weights(m, layer, mode)
        inputs = [
            seq,
            cx.const(w, "W"),
            cx.const(r, "R"),
            cx.const(b, "B"),
            "",
            _layer_state(cx, h0, layer, nd),
        ]
        attrs: dict[str, Any] = {
            "hidden_size": hidden,
            "direction": "bidirectional" if nd == 2 else "forward",
        }
        if mode == "LSTM":
            inputs.append(_layer_state(cx, c0, layer, nd))
        elif mode == "GRU":
            attrs["linear_before_reset"] = 1
        else:
            attrs["activations"] = ["Relu" if mode == "RNN_RELU" else "Tanh"] * nd
        while inputs[-1] == "":
            inputs.pop()
        outs = cx.op(op_type, inputs, n_out=3 if mode == "LSTM" else 2, **attrs)
        y = cx.op("Transpose", [outs[0]], perm=[0, 2, 1, 3])  # (L, nd, N, H) -> (L, N, nd, H)
        seq = cx.op("Reshape", [y, cx.ints([0, 0, -1])])
        h_out.append(outs[1])
        if mode == "LSTM":
            c_out.append(outs[2])
    if m.batch_first:
        seq = cx.op("Transpose", [seq], perm=[1, 0, 2])
    h = h_out[0] if len(h_out) == 1 else cx.op("Concat", h_out, axis=0)
    if mode != "LSTM":
        return [seq, h]
    c = c_out[0] if len(c_out) == 1 else cx.op("Concat", c_out, axis=0)
    return [seq, h, c]
