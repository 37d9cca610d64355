"""Recurrent layers (LSTM, GRU, Elman) as one call per layer and direction, forward and backward.

Per time step: one cuBLAS product of the state with the hidden weights (``cupy.matmul`` into a
preallocated buffer), then ONE fused kernel per step that adds the input projection and bias,
applies the gates and writes the step's slice of the sequence buffers. The backward step
kernel forms every gate gradient of the step and the product with the weights closes it.

Packed ``lengths``: a row past its length keeps its state and gets no gate gradient, as in the
CPU backend. In the backward the state gradient of an idle row must bypass the product, so
the step kernel parks it in ``keep`` and the next step picks ``keep`` (not the product) for
rows that were idle: ``dh = (idle before ? 0 : mm) + keep + g[t]``; the product of an idle
row is never read, so inf/NaN weights cannot leak into it. Half types compute in float32.

Host work (buffers, step order, the product) goes through ``cupy`` and ``_launch`` only, so
tests/test_rnn_attention.py runs this file with NumPy as ``cupy`` and the kernels built for
the host from the very source NVRTC compiles.
"""

from __future__ import annotations

from string import Template
from typing import Any

import cupy
import numpy as np

__all__ = [
    "EMBER_RNN",
    "EMBER_RNN_SRC",
    "gru_layer",
    "gru_layer_backward",
    "lstm_layer",
    "lstm_layer_backward",
    "rnn_layer",
    "rnn_layer_backward",
]

EMBER_RNN_SRC = Template(
    r"""
typedef ${A} A;

__device__ A ember_sig(A x) { return (A)0.5 * tanh((A)0.5 * x) + (A)0.5; }

#define EMBER_STEP_INDEX \
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
    if (i >= n * hid) return; \
    long long row = i / hid, j = i - row * hid; \
    bool idle = lens[row] <= t;

/* the state gradient entering a backward step (see rnn.py) */
#define EMBER_DH(g) \
    (((tp >= 0 && lens[row] <= tp) ? (A)0 : mm[i]) + keep[i] + (g)[i])

extern "C" __global__ void ember_lstm_step(
    const A *gi, const A *hw, const A *bias, const A *h_prev, const A *c_prev, A *gates, A *h, A *c,
    const long long *lens, long long t, long long n, long long hid)
{
    EMBER_STEP_INDEX
    long long b = row * 4 * hid + j;
    A ig = ember_sig(gi[b] + bias[j] + hw[b]);
    A fg = ember_sig(gi[b + hid] + bias[j + hid] + hw[b + hid]);
    A gg = tanh(gi[b + 2 * hid] + bias[j + 2 * hid] + hw[b + 2 * hid]);
    A og = ember_sig(gi[b + 3 * hid] + bias[j + 3 * hid] + hw[b + 3 * hid]);
    gates[b] = ig;
    gates[b + hid] = fg;
    gates[b + 2 * hid] = gg;
    gates[b + 3 * hid] = og;
    A cn = fg * c_prev[i] + ig * gg;
    A hn = og * tanh(cn);
    c[i] = idle ? c_prev[i] : cn;
    h[i] = idle ? h_prev[i] : hn;
}

extern "C" __global__ void ember_lstm_back_step(
    const A *gh, const A *gc, const A *gates, const A *c, const A *c_prev, const A *mm, A *keep,
    A *dc, A *d, const long long *lens, long long t, long long tp, long long n, long long hid)
{
    EMBER_STEP_INDEX
    long long b = row * 4 * hid + j;
    A dh = EMBER_DH(gh);
    A dcv = dc[i] + gc[i];
    if (idle) {
        d[b] = d[b + hid] = d[b + 2 * hid] = d[b + 3 * hid] = (A)0;
        keep[i] = dh;
        dc[i] = dcv;
        return;
    }
    A ig = gates[b], fg = gates[b + hid], gg = gates[b + 2 * hid], og = gates[b + 3 * hid];
    A tc = tanh(c[i]);
    dcv += dh * (og * ((A)1 - tc * tc));
    d[b] = dcv * (gg * ig * ((A)1 - ig));
    d[b + hid] = dcv * (c_prev[i] * fg * ((A)1 - fg));
    d[b + 2 * hid] = dcv * (ig * ((A)1 - gg * gg));
    d[b + 3 * hid] = dh * (tc * og * ((A)1 - og));
    dc[i] = dcv * fg;
    keep[i] = (A)0;
}

extern "C" __global__ void ember_gru_step(
    const A *gi, const A *hw, const A *bias, const A *h_prev, A *gates, A *h,
    const long long *lens, long long t, long long n, long long hid)
{
    EMBER_STEP_INDEX
    long long b3 = row * 3 * hid + j, b4 = row * 4 * hid + j;
    A r = ember_sig(gi[b3] + (hw[b3] + bias[j]));
    A z = ember_sig(gi[b3 + hid] + (hw[b3 + hid] + bias[j + hid]));
    A hn = hw[b3 + 2 * hid] + bias[j + 2 * hid];
    A nt = tanh(r * hn + gi[b3 + 2 * hid]);
    gates[b4] = r;
    gates[b4 + hid] = z;
    gates[b4 + 2 * hid] = nt;
    gates[b4 + 3 * hid] = hn;
    h[i] = idle ? h_prev[i] : nt + (h_prev[i] - nt) * z;
}

/* d (L, N, 4H) per step: the gradients of r, z, the hidden side of n (gh_n) and n */
extern "C" __global__ void ember_gru_back_step(
    const A *g, const A *gates, const A *h_prev, const A *mm, A *keep, A *d,
    const long long *lens, long long t, long long tp, long long n, long long hid)
{
    EMBER_STEP_INDEX
    long long b = row * 4 * hid + j;
    A dh = EMBER_DH(g);
    if (idle) {
        d[b] = d[b + hid] = d[b + 2 * hid] = d[b + 3 * hid] = (A)0;
        keep[i] = dh;
        return;
    }
    A r = gates[b], z = gates[b + hid], nt = gates[b + 2 * hid], hn = gates[b + 3 * hid];
    A on_n = ((A)1 - z) * ((A)1 - nt * nt);
    d[b] = (on_n * hn * (r * ((A)1 - r))) * dh;
    d[b + hid] = ((h_prev[i] - nt) * (z * ((A)1 - z))) * dh;
    d[b + 2 * hid] = (on_n * r) * dh;
    d[b + 3 * hid] = on_n * dh;
    keep[i] = dh * z;
}

extern "C" __global__ void ember_rnn_step(
    const A *gi, const A *hw, const A *bias, const A *h_prev, A *h,
    const long long *lens, long long t, long long n, long long hid, int relu)
{
    EMBER_STEP_INDEX
    A x = gi[i] + bias[j] + hw[i];
    x = relu ? ((x < (A)0) ? (A)0 : x) : tanh(x);  /* NaN stays NaN, as np.maximum */
    h[i] = idle ? h_prev[i] : x;
}

extern "C" __global__ void ember_rnn_back_step(
    const A *g, const A *out, const A *mm, A *keep, A *d,
    const long long *lens, long long t, long long tp, long long n, long long hid, int relu)
{
    EMBER_STEP_INDEX
    A dh = EMBER_DH(g);
    A o = out[i];
    d[i] = idle ? (A)0 : dh * (relu ? (A)(o > (A)0) : (A)1 - o * o);
    keep[i] = idle ? dh : (A)0;
}
"""
)

# One module per accumulator type, holding every step kernel (compiled on first use).
EMBER_RNN = {
    name: cupy.RawModule(code=EMBER_RNN_SRC.substitute(A=c))
    for name, c in (("float32", "float"), ("float64", "double"))
}
_BLOCK = 256
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _launch(name: str, acc: np.dtype, threads: int, args: tuple) -> None:
    """One thread per (row, hidden unit); tests replace this with a host-built twin."""
    fn = EMBER_RNN[acc.name].get_function(name)
    fn(((threads + _BLOCK - 1) // _BLOCK,), (_BLOCK,), args)


def _acc(dtype: Any) -> np.dtype:
    return _F64 if np.dtype(dtype) == _F64 else _F32


def _wide(acc: np.dtype, *arrays: Any) -> list[Any]:
    return [None if a is None else cupy.ascontiguousarray(a.astype(acc, copy=False)) for a in arrays]


def _down(dtype: Any, *arrays: Any) -> tuple[Any, ...]:
    return tuple(a.astype(dtype, copy=False) for a in arrays)


def _order(steps: int, reverse: bool) -> list[int]:
    return list(range(steps - 1, -1, -1)) if reverse else list(range(steps))


def _lens(lengths: Any, n: int, steps: int) -> Any:
    """int64 lengths on the device; every row runs every step when None."""
    if lengths is None:
        return cupy.full((n,), steps, np.int64)
    return cupy.asarray(lengths, dtype=np.int64)


def _bias(b_hh: Any, size: int, acc: np.dtype) -> Any:
    return cupy.zeros((size,), acc) if b_hh is None else b_hh


def _ints(*vals: int) -> tuple[np.int64, ...]:
    return tuple(np.int64(v) for v in vals)


class _Back:
    """The backward recurrence's state: the product buffer mm and the parked gradients keep."""

    def __init__(self, n: int, hid: int, acc: np.dtype, lens: Any) -> None:
        self.mm, self.keep, self.lens, self.tp = (
            cupy.zeros((n, hid), acc),
            cupy.zeros((n, hid), acc),
            lens,
            -1,
        )
        self.n, self.hid = n, hid

    def step(self, name: str, acc: np.dtype, t: int, ins: tuple, outs: tuple, tail: tuple = ()) -> None:
        """Launch step ``t``'s kernel: ``(*ins, mm, keep, *outs, lens, t, tp, n, hid, *tail)``."""
        if self.n * self.hid:
            state = (self.mm, self.keep)
            ints = _ints(t, self.tp, self.n, self.hid)
            _launch(name, acc, self.n * self.hid, (*ins, *state, *outs, self.lens, *ints, *tail))
        self.tp = t

    def product(self, d: Any, w: Any) -> None:
        if self.n * self.hid:
            cupy.matmul(d, w, out=self.mm)

    def dh0(self) -> Any:
        """The gradient leaving the last step: the product, or keep for a row idle there."""
        if self.tp < 0:
            return self.mm + self.keep
        idle = (self.lens <= self.tp)[:, None]
        return cupy.where(idle, self.keep, self.mm + self.keep)


# -- LSTM ----------------------------------------------------------------------------------
def lstm_layer(gi: Any, h0: Any, c0: Any, w_hh: Any, b_hh: Any, reverse: bool, lengths: Any) -> tuple:
    dtype, acc = gi.dtype, _acc(gi.dtype)
    gi, h0, c0, w_hh, b_hh = _wide(acc, gi, h0, c0, w_hh, b_hh)
    steps, n, g = gi.shape
    hid = g // 4
    bias, lens = _bias(b_hh, g, acc), _lens(lengths, n, steps)
    wt = cupy.ascontiguousarray(w_hh.T)
    hc = cupy.empty((2, steps, n, hid), acc)
    gates = cupy.empty((steps, n, g), acc)
    hw = cupy.empty((n, g), acc)
    h, c = h0, c0
    for t in _order(steps, reverse):
        if n * hid:
            cupy.matmul(h, wt, out=hw)
            args = (gi[t], hw, bias, h, c, gates[t], hc[0, t], hc[1, t], lens, *_ints(t, n, hid))
            _launch("ember_lstm_step", acc, n * hid, args)
        h, c = hc[0, t], hc[1, t]
    return _down(dtype, hc, gates)


def lstm_layer_backward(
    g: Any, h0: Any, c0: Any, w_hh: Any, hc: Any, gates: Any, reverse: bool, lengths: Any
) -> tuple:
    dtype, acc = g.dtype, _acc(g.dtype)
    g, h0, c0, w_hh, hc, gates = _wide(acc, g, h0, c0, w_hh, hc, gates)
    _, steps, n, hid = hc.shape
    back = _Back(n, hid, acc, _lens(lengths, n, steps))
    d = cupy.empty((steps, n, 4 * hid), acc)
    dc = cupy.zeros((n, hid), acc)
    for t in _order(steps, not reverse):
        before = t + 1 if reverse else t - 1  # the step the forward ran just before t
        c_prev = c0 if before in (-1, steps) else hc[1, before]
        ins = (g[0, t], g[1, t], gates[t], hc[1, t], c_prev)
        back.step("ember_lstm_back_step", acc, t, ins, (dc, d[t]))
        back.product(d[t], w_hh)
    return _down(dtype, d, back.dh0(), dc)


# -- GRU -----------------------------------------------------------------------------------
def gru_layer(gi: Any, h0: Any, w_hh: Any, b_hh: Any, reverse: bool, lengths: Any) -> tuple:
    dtype, acc = gi.dtype, _acc(gi.dtype)
    gi, h0, w_hh, b_hh = _wide(acc, gi, h0, w_hh, b_hh)
    steps, n, g = gi.shape
    hid = g // 3
    bias, lens = _bias(b_hh, g, acc), _lens(lengths, n, steps)
    wt = cupy.ascontiguousarray(w_hh.T)
    out = cupy.empty((steps, n, hid), acc)
    gates = cupy.empty((steps, n, 4 * hid), acc)
    hw = cupy.empty((n, g), acc)
    h = h0
    for t in _order(steps, reverse):
        if n * hid:
            cupy.matmul(h, wt, out=hw)
            args = (gi[t], hw, bias, h, gates[t], out[t], lens, *_ints(t, n, hid))
            _launch("ember_gru_step", acc, n * hid, args)
        h = out[t]
    return _down(dtype, out, gates)


def gru_layer_backward(
    g: Any, h0: Any, w_hh: Any, out: Any, gates: Any, reverse: bool, lengths: Any
) -> tuple:
    dtype, acc = g.dtype, _acc(g.dtype)
    g, h0, w_hh, out, gates = _wide(acc, g, h0, w_hh, out, gates)
    steps, n, hid = out.shape
    back = _Back(n, hid, acc, _lens(lengths, n, steps))
    d = cupy.empty((steps, n, 4, hid), acc)  # r, z, gh_n, n
    d_rows = d.reshape(steps, n, 4 * hid)
    for t in _order(steps, not reverse):
        before = t + 1 if reverse else t - 1
        h_prev = h0 if before in (-1, steps) else out[before]
        back.step("ember_gru_back_step", acc, t, (g[t], gates[t], h_prev), (d_rows[t],))
        back.product(d_rows[t, :, : 3 * hid], w_hh)
    d_gi = d[:, :, [0, 1, 3]].reshape(steps, n, 3 * hid)
    d_gh = cupy.ascontiguousarray(d[:, :, :3]).reshape(steps, n, 3 * hid)
    return _down(dtype, d_gi, d_gh, back.dh0())


# -- Elman RNN -----------------------------------------------------------------------------
def rnn_layer(gi: Any, h0: Any, w_hh: Any, b_hh: Any, relu: bool, reverse: bool, lengths: Any) -> Any:
    dtype, acc = gi.dtype, _acc(gi.dtype)
    gi, h0, w_hh, b_hh = _wide(acc, gi, h0, w_hh, b_hh)
    steps, n, hid = gi.shape
    bias, lens = _bias(b_hh, hid, acc), _lens(lengths, n, steps)
    wt = cupy.ascontiguousarray(w_hh.T)
    out = cupy.empty((steps, n, hid), acc)
    hw = cupy.empty((n, hid), acc)
    h = h0
    for t in _order(steps, reverse):
        if n * hid:
            cupy.matmul(h, wt, out=hw)
            args = (gi[t], hw, bias, h, out[t], lens, *_ints(t, n, hid), np.int32(relu))
            _launch("ember_rnn_step", acc, n * hid, args)
        h = out[t]
    return _down(dtype, out)[0]


def rnn_layer_backward(
    g: Any, h0: Any, w_hh: Any, out: Any, relu: bool, reverse: bool, lengths: Any
) -> tuple:
    dtype, acc = g.dtype, _acc(g.dtype)
    g, w_hh, out = _wide(acc, g, w_hh, out)
    steps, n, hid = out.shape
    back = _Back(n, hid, acc, _lens(lengths, n, steps))
    d = cupy.empty((steps, n, hid), acc)
    for t in _order(steps, not reverse):
        back.step("ember_rnn_back_step", acc, t, (g[t], out[t]), (d[t],), (np.int32(relu),))
        back.product(d[t], w_hh)
    return _down(dtype, d, back.dh0())


RNN_KERNELS = {
    "lstm_layer": lstm_layer,
    "lstm_layer_backward": lstm_layer_backward,
    "gru_layer": gru_layer,
    "gru_layer_backward": gru_layer_backward,
    "rnn_layer": rnn_layer,
    "rnn_layer_backward": rnn_layer_backward,
}
