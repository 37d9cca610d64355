"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` (multi-layer, bidirectional, batch_first) and cells.

Parameter names, shapes, gate order (LSTM: i, f, g, o; GRU: r, z, n) and initialisation
U(-1/√hidden, 1/√hidden) follow PyTorch, so state_dicts load either way. Each layer computes
the input projection of all time steps in one matmul, then runs one fused layer op per
direction (``_functional/recurrent.py``: one kernel call and one graph node per layer, as
PyTorch's graph); LSTMs with projections and the cells loop over time in ember ops.
"""

from __future__ import annotations

import math
from typing import Any

from ..._autocast_hook import hook as autocast_hook
from ..._creation import empty, zeros
from ..._dtype import pt_name
from ..._ops.join import stack
from ..._ops.pointwise_unary import sigmoid, tanh
from ..._ops.select import where
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from .._functional import recurrent as R
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence
from .module import Module

__all__ = [
    "GRU",
    "LSTM",
    "RNN",
    "GRUCell",
    "LSTMCell",
    "RNNBase",
    "RNNCell",
    "RNNCellBase",
]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _lstm_step(
    gi: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None
) -> tuple[Tensor, Tensor]:
    gates = gi + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    return (h if w_hr is None else F.linear(h, w_hr)), c


def _gru_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    gh = F.linear(h, w_hh, b_hh)
    ir, iz, in_ = gi.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r, z = sigmoid(ir + hr), sigmoid(iz + hz)
    n = tanh(in_ + r * hn)
    return (1 - z) * n + z * h


def _rnn_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, relu: bool) -> Tensor:
    pre = gi + F.linear(h, w_hh, b_hh)
    return F.relu(pre) if relu else tanh(pre)


def _check_proj_size(mode: str, proj_size: int, hidden_size: int) -> None:
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if proj_size and mode != "LSTM":
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNNBase(Module):
    """Shared parameters and the time loop of ``RNN``, ``LSTM`` and ``GRU``."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if not 0 <= dropout <= 1:
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        _check_proj_size(mode, proj_size, hidden_size)
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real = proj_size or hidden_size
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            for d in range(dirs):
                size_in = input_size if layer == 0 else real * dirs
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes: list[tuple[str, tuple[int, ...]]] = [
                    ("weight_ih", (gate, size_in)),
                    ("weight_hh", (gate, real)),
                ]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + sfx, Parameter(empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name + sfx)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op, as PyTorch's off cuDNN: the fused layer ops take the parameters as they are,
        so there is no weight buffer to compact."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        per = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i : i + per]] for i in range(0, len(names), per)]

    def _params(self, layer: int, d: int) -> tuple:
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        b_ih = getattr(self, "bias_ih" + sfx) if self.bias else None
        b_hh = getattr(self, "bias_hh" + sfx) if self.bias else None
        w_hr = getattr(self, "weight_hr" + sfx) if self.proj_size else None
        return getattr(self, "weight_ih" + sfx), getattr(self, "weight_hh" + sfx), b_ih, b_hh, w_hr

    def _run_direction(
        self, x: Tensor, layer: int, d: int, h: Tensor, c: Tensor | None, masks: Any = None
    ) -> tuple:
        w_ih, w_hh, b_ih, b_hh, w_hr = self._params(layer, d)
        steps, n = x.shape[0], x.shape[1]
        # one matmul for all steps (shapes spelled out: a batch of 0 rows has no -1 to infer)
        gi_all = F.linear(x.reshape(steps * n, x.shape[2]), w_ih, b_ih).view(steps, n, w_ih.shape[0])
        if w_hr is None:
            return self._fused(gi_all, w_hh, b_hh, h, c, bool(d), masks)
        steps = range(x.shape[0] - 1, -1, -1) if d else range(x.shape[0])
        outs: list[Tensor] = [None] * x.shape[0]  # type: ignore[list-item]
        for t in steps:
            gi = gi_all[t]
            h_prev, c_prev = h, c
            if self.mode == "LSTM":
                h, c = _lstm_step(gi, h, c, w_hh, b_hh, w_hr)  # type: ignore[arg-type]
            elif self.mode == "GRU":
                h = _gru_step(gi, h, w_hh, b_hh)
            else:
                h = _rnn_step(gi, h, w_hh, b_hh, self.mode == "RNN_RELU")
            if masks is not None:  # finished sequences keep their state (packed input)
                h = where(masks[t], h, h_prev)
                c = where(masks[t], c, c_prev) if c is not None else None
            outs[t] = h
        return stack(outs, 0), h, c

    def _fused(
        self, gi: Tensor, w_hh: Tensor, b_hh: Tensor | None, h: Tensor, c: Tensor | None, rev: bool, lens: Any
    ) -> tuple:
        last = 0 if rev else gi.shape[0] - 1
        if self.mode == "LSTM":
            hc = R.lstm_layer(gi, h, c, w_hh, b_hh, rev, lens)  # type: ignore[arg-type]
            out = hc.select(0, 0)  # select, not indexing: no key to parse on this hot path
            return out, out.select(0, last), hc.select(0, 1).select(0, last)
        if self.mode == "GRU":
            out = R.gru_layer(gi, h, w_hh, b_hh, rev, lens)
        else:
            out = R.rnn_layer(gi, h, w_hh, b_hh, self.mode == "RNN_RELU", rev, lens)
        return out, out.select(0, last), None

    def _check_dtypes(self, x: Tensor, h0: Tensor, c0: Tensor | None) -> None:
        """PyTorch's errors for an input or state of another dtype than the weights (the fused
        layers would promote; autocast casts them itself)."""
        w = self.weight_ih_l0
        if autocast_hook[0] is not None or not x.is_floating_point():
            return
        if x.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({x.dtype}) does not match weight dtype ({w.dtype}). Convert input: "
                f"input.to({w.dtype}), or convert model: model.to({x.dtype})"
            )
        for h in (h0, c0):
            if h is not None and h.dtype != w.dtype:
                raise RuntimeError(
                    f"mat1 and mat2 must have the same dtype, but got {pt_name(h.dtype)} and {pt_name(w.dtype)}"
                )

    def _check(self, x: Tensor, hx: Any) -> bool:
        if x.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {x.ndim}D instead")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {x.shape[-1]}"
            )
        if x.shape[1 if x.ndim == 3 and self.batch_first else 0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        return x.ndim == 3

    def forward(self, input: Any, hx: Any = None) -> tuple:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        return self._forward(input, hx, None)

    def _forward_packed(self, packed: PackedSequence, hx: Any) -> tuple:
        padded, lengths = pad_packed_sequence(packed, batch_first=self.batch_first)
        if self.proj_size:
            lens = lengths.to(padded.device)
            masks: Any = [(lens > t).unsqueeze(-1) for t in range(int(lengths.max()))]
        else:
            masks = tuple(int(v) for v in lengths.tolist())
        out, state = self._forward(padded, hx, masks)
        repacked = pack_padded_sequence(
            out, lengths, batch_first=self.batch_first, enforce_sorted=packed.sorted_indices is None
        )
        return repacked, state

    def _forward(self, input: Tensor, hx: Any, masks: Any) -> tuple:
        batched = self._check(input, hx)
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        dirs = 2 if self.bidirectional else 1
        c_shape = (self.num_layers * dirs, x.shape[1], self.hidden_size)
        shape = (self.num_layers * dirs, x.shape[1], self.proj_size or self.hidden_size)
        lstm = self.mode == "LSTM"
        if hx is None:
            h0 = zeros(shape, dtype=x.dtype, device=x.device)
            c0 = zeros(c_shape, dtype=x.dtype, device=x.device) if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
            if not batched:
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if c0 is not None else None
            if tuple(h0.shape) != shape:
                which = "hidden[0] size" if lstm else "hidden size"
                raise RuntimeError(f"Expected {which} {shape}, got {list(h0.shape)}")
            if c0 is not None and tuple(c0.shape) != c_shape:
                raise RuntimeError(f"Expected hidden[1] size {c_shape}, got {list(c0.shape)}")
        self._check_dtypes(x, h0, c0)
        hs, cs = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                h_k, c_k = h0.select(0, k), c0.select(0, k) if c0 is not None else None
                out, h, c = self._run_direction(x, layer, d, h_k, c_k, masks)
                outs.append(out)
                hs.append(h)
                cs.append(c)
            x = outs[0] if dirs == 1 else _cat(outs)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        out = x.transpose(0, 1) if batched and self.batch_first else x
        h_n = stack(hs, 0)
        c_n = stack(cs, 0) if lstm else None
        if not batched:
            out, h_n = out.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        return (out, (h_n, c_n)) if lstm else (out, h_n)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


def _cat(parts: list[Tensor]) -> Tensor:
    from ..._ops.join import cat

    return cat(parts, -1)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu)."""

    def __init__(self, *args: Any, nonlinearity: str = "tanh", **kwargs: Any) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory; returns ``output, (h_n, c_n)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit; returns ``output, h_n``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("GRU", *args, **kwargs)


class _CellBase(Module):
    _gates = 1

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = self._gates * hidden_size
        self.weight_ih = Parameter(empty((g, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(empty((g, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(g, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(g, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        stdv = 1.0 / math.sqrt(hidden_size)
        for p in self.parameters():
            init.uniform_(p, -stdv, stdv)

    def _zeros(self, x: Tensor) -> Tensor:
        return zeros(x.shape[:-1] + (self.hidden_size,), dtype=x.dtype, device=x.device)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        h = self._zeros(input) if hx is None else hx
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        return _rnn_step(gi, h, self.weight_hh, self.bias_hh, self.nonlinearity == "relu")


class LSTMCell(_CellBase):
    _gates = 4

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        h, c = (self._zeros(input), self._zeros(input)) if hx is None else hx
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        return _lstm_step(gi, h, c, self.weight_hh, self.bias_hh, None)


class GRUCell(_CellBase):
    _gates = 3

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        h = self._zeros(input) if hx is None else hx
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        return _gru_step(gi, h, self.weight_hh, self.bias_hh)


RNNCellBase = _CellBase
