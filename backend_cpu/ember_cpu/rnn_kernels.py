"""Recurrent layers as one kernel per layer and direction, forward and backward.

The frontend hands over the input projection of every time step at once (``gi``: one matmul
it recorded itself), so a step here is one BLAS call for the hidden projection and a few
ufuncs writing into preallocated buffers; a Python-level op per gate would cost more than
the arithmetic at these sizes. Sigmoid is ``0.5 * tanh(0.5 * x) + 0.5`` so that one ``tanh``
over the whole gate row serves every gate (the 0.5 is folded into the weights and ``gi``
once per layer). The backward precomputes every factor that does not depend on the
recurrence for the whole sequence, so its loop is a multiply-add and one matmul per step.
``lengths`` (packed sequences): a row whose sequence has ended keeps its state; its outputs
repeat that state and it gets no gate gradient. Half types compute in float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .dtypes import HALF

__all__ = ["RNN_KERNELS"]

_F32 = np.dtype(np.float32)


def _up(*arrays: Any) -> tuple[Any, ...]:
    return tuple(a.astype(_F32) if a is not None and a.dtype in HALF else a for a in arrays)


def _down(dtype: np.dtype, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(a.astype(dtype) if a.dtype != dtype else a for a in arrays)


def _order(n: int, reverse: bool) -> range:
    return range(n - 1, -1, -1) if reverse else range(n)


def _idle(lengths: Any, t: int) -> np.ndarray | None:
    """Rows whose sequence has ended before step ``t`` (None when every row runs)."""
    if lengths is None:
        return None
    idle = np.asarray(lengths) <= t
    return idle if idle.any() else None


def _prev(out: np.ndarray, h0: np.ndarray, reverse: bool) -> np.ndarray:
    """The state each step started from: h0, then the outputs shifted by one step."""
    prev = np.empty_like(out)
    if not len(out):  # no steps: nothing started anywhere
        return prev
    if reverse:
        prev[-1], prev[:-1] = h0, out[1:]
    else:
        prev[0], prev[1:] = h0, out[:-1]
    return prev


def _sigmoid_(x: np.ndarray) -> None:
    np.multiply(x, 0.5, out=x)
    np.tanh(x, out=x)
    np.multiply(x, 0.5, out=x)
    np.add(x, 0.5, out=x)


# -- LSTM ----------------------------------------------------------------------------------
def lstm_layer(gi: Any, h0: Any, c0: Any, w_hh: Any, b_hh: Any, reverse: bool, lengths: Any) -> tuple:
    dtype = gi.dtype
    gi, h0, c0, w_hh, b_hh = _up(gi, h0, c0, w_hh, b_hh)
    steps, n, g = gi.shape
    hid = g // 4
    scale = np.repeat(np.array([0.5, 0.5, 1.0, 0.5], gi.dtype), hid)
    shift = np.repeat(np.array([0.5, 0.5, 0.0, 0.5], gi.dtype), hid)
    gates = np.multiply(gi, scale)  # the pre-activations, then (in place) the gates
    if b_hh is not None:
        gates += b_hh * scale
    wt = np.ascontiguousarray((w_hh * scale[:, None]).T)
    hc = np.empty((2, steps, n, hid), gi.dtype)
    out, cs = hc[0], hc[1]
    buf, tmp = np.empty((n, g), gi.dtype), np.empty((n, hid), gi.dtype)
    # per-step views made once, in C (list() of an array): Python slicing costs per step;
    # scale and shift at the step's full shape (a broadcast operand costs NumPy 2x)
    zs, hs, cts = list(gates), list(out), list(cs)
    scale, shift = (np.ascontiguousarray(np.broadcast_to(v, (n, g))) for v in (scale, shift))
    g4 = gates.reshape(steps, n, 4, hid)
    ii, ff, gg, oo = (list(g4[:, :, j]) for j in range(4))
    h, c = h0, c0
    for t in _order(steps, reverse):
        z, ct = zs[t], cts[t]
        np.matmul(h, wt, out=buf)
        z += buf
        np.tanh(z, out=z)
        z *= scale
        z += shift
        np.multiply(ff[t], c, out=ct)
        np.multiply(ii[t], gg[t], out=tmp)
        ct += tmp
        np.tanh(ct, out=tmp)
        np.multiply(oo[t], tmp, out=hs[t])
        if lengths is not None:
            idle = _idle(lengths, t)
            if idle is not None:
                hs[t][idle], ct[idle] = h[idle], c[idle]
        h, c = hs[t], ct
    return _down(dtype, hc, gates)


def lstm_layer_backward(
    g: Any, h0: Any, c0: Any, w_hh: Any, hc: Any, gates: Any, reverse: bool, lengths: Any
) -> tuple:
    dtype = g.dtype
    g, h0, c0, w_hh, hc, gates = _up(g, h0, c0, w_hh, hc, gates)
    _, steps, n, hid = hc.shape
    gate4 = gates.reshape(steps, n, 4, hid)
    i, f, gg, o = gate4[:, :, 0], gate4[:, :, 1], gate4[:, :, 2], gate4[:, :, 3]
    tc = np.tanh(hc[1])
    on_o = tc * o * (1 - o)  # d o_pre = dh * on_o
    on_c = o * (1 - tc * tc)  # dc += dh * on_c
    on_ifg = np.empty((steps, n, 3, hid), hc.dtype)  # d [i, f, g]_pre = dc * on_ifg
    np.multiply(gg * i, 1 - i, out=on_ifg[:, :, 0])
    np.multiply(_prev(hc[1], c0, reverse) * f, 1 - f, out=on_ifg[:, :, 1])
    np.multiply(i, 1 - gg * gg, out=on_ifg[:, :, 2])
    d = np.empty((steps, n, 4, hid), hc.dtype)
    dh, dc, tmp = np.zeros((n, hid), hc.dtype), np.zeros((n, hid), hc.dtype), np.empty((n, hid), hc.dtype)
    w = np.ascontiguousarray(w_hh)
    c_hit = g[1].any(axis=(1, 2)).tolist()  # the cells' gradient is mostly c_n's alone
    gh, gc, fs = list(g[0]), list(g[1]), list(f)
    ons_c, ons_o, ons_ifg = list(on_c), list(on_o), list(on_ifg)
    d_o, d_ifg, d_rows = list(d[:, :, 3]), list(d[:, :, :3]), list(d.reshape(steps, n, 4 * hid))
    dc_rows = dc[:, None, :]
    for t in _order(steps, not reverse):
        dh += gh[t]
        if c_hit[t]:
            dc += gc[t]
        idle = None if lengths is None else _idle(lengths, t)
        kept = None if idle is None else (dh[idle], dc[idle])
        np.multiply(dh, ons_c[t], out=tmp)
        dc += tmp
        np.multiply(dh, ons_o[t], out=d_o[t])
        np.multiply(ons_ifg[t], dc_rows, out=d_ifg[t])
        dc *= fs[t]
        np.matmul(d_rows[t], w, out=dh)
        if kept is not None:
            d[t][idle] = 0
            dh[idle], dc[idle] = kept
    return _down(dtype, d.reshape(steps, n, 4 * hid), dh, dc)


# -- GRU -----------------------------------------------------------------------------------
def gru_layer(gi: Any, h0: Any, w_hh: Any, b_hh: Any, reverse: bool, lengths: Any) -> tuple:
    dtype = gi.dtype
    gi, h0, w_hh, b_hh = _up(gi, h0, w_hh, b_hh)
    steps, n, g = gi.shape
    hid = g // 3
    gi3 = gi.reshape(steps, n, 3, hid)
    wt = np.ascontiguousarray(w_hh.T)
    gates = np.empty((steps, n, 4, hid), gi.dtype)  # r, z, n, and hn = h @ W_hn^T + b_hn
    out = np.empty((steps, n, hid), gi.dtype)
    gh, tmp = np.empty((n, g), gi.dtype), np.empty((n, hid), gi.dtype)
    gh3 = gh.reshape(n, 3, hid)
    h = h0
    for t in _order(steps, reverse):
        np.matmul(h, wt, out=gh)
        if b_hh is not None:
            gh += b_hh
        rzn = gates[t]
        rz = rzn[:, :2]
        np.add(gi3[t, :, :2], gh3[:, :2], out=rz)
        _sigmoid_(rz)
        nt, hn = rzn[:, 2], rzn[:, 3]
        hn[...] = gh3[:, 2]
        np.multiply(rzn[:, 0], hn, out=nt)
        nt += gi3[t, :, 2]
        np.tanh(nt, out=nt)
        np.subtract(h, nt, out=tmp)
        tmp *= rzn[:, 1]
        np.add(nt, tmp, out=out[t])
        idle = _idle(lengths, t)
        if idle is not None:
            out[t][idle] = h[idle]
        h = out[t]
    return _down(dtype, out, gates.reshape(steps, n, 4 * hid))


def gru_layer_backward(
    g: Any, h0: Any, w_hh: Any, out: Any, gates: Any, reverse: bool, lengths: Any
) -> tuple:
    dtype = g.dtype
    g, h0, w_hh, out, gates = _up(g, h0, w_hh, out, gates)
    steps, n, hid = out.shape
    gate4 = gates.reshape(steps, n, 4, hid)
    r, z, nt, hn = gate4[:, :, 0], gate4[:, :, 1], gate4[:, :, 2], gate4[:, :, 3]
    # every gate gradient is dh times a factor: [r, z, hn (the hidden side of n), n]
    on = np.empty((steps, n, 4, hid), out.dtype)
    np.multiply(1 - z, 1 - nt * nt, out=on[:, :, 3])
    np.multiply(on[:, :, 3], r, out=on[:, :, 2])
    np.multiply(on[:, :, 3] * hn, r * (1 - r), out=on[:, :, 0])
    np.multiply(_prev(out, h0, reverse) - nt, z * (1 - z), out=on[:, :, 1])
    d = np.empty((steps, n, 4, hid), out.dtype)
    dh, tmp = np.zeros((n, hid), out.dtype), np.empty((n, hid), out.dtype)
    w = np.ascontiguousarray(w_hh)
    for t in _order(steps, not reverse):
        dh += g[t]
        idle = _idle(lengths, t)
        kept = None if idle is None else dh[idle]
        np.multiply(on[t], dh[:, None, :], out=d[t])
        np.multiply(dh, z[t], out=tmp)
        np.matmul(d[t, :, :3].reshape(n, 3 * hid), w, out=dh)
        dh += tmp
        if kept is not None:
            d[t][idle] = 0
            dh[idle] = kept
    d_gi = d[:, :, [0, 1, 3]].reshape(steps, n, 3 * hid)
    d_gh = d[:, :, :3].reshape(steps, n, 3 * hid)
    return _down(dtype, d_gi, d_gh, dh)


# -- Elman RNN -----------------------------------------------------------------------------
def rnn_layer(gi: Any, h0: Any, w_hh: Any, b_hh: Any, relu: bool, reverse: bool, lengths: Any) -> Any:
    dtype = gi.dtype
    gi, h0, w_hh, b_hh = _up(gi, h0, w_hh, b_hh)
    steps, n, hid = gi.shape
    out = np.add(gi, b_hh) if b_hh is not None else gi.copy()
    wt = np.ascontiguousarray(w_hh.T)
    buf = np.empty((n, hid), gi.dtype)
    h = h0
    for t in _order(steps, reverse):
        ht = out[t]
        np.matmul(h, wt, out=buf)
        ht += buf
        if relu:
            np.maximum(ht, 0, out=ht)
        else:
            np.tanh(ht, out=ht)
        idle = _idle(lengths, t)
        if idle is not None:
            ht[idle] = h[idle]
        h = ht
    return _down(dtype, out)[0]


def rnn_layer_backward(
    g: Any, h0: Any, w_hh: Any, out: Any, relu: bool, reverse: bool, lengths: Any
) -> tuple:
    dtype = g.dtype
    g, h0, w_hh, out = _up(g, h0, w_hh, out)
    steps, n, hid = out.shape
    slope = (out > 0).astype(out.dtype) if relu else 1 - out * out
    d = np.empty((steps, n, hid), out.dtype)
    dh = np.zeros((n, hid), out.dtype)
    w = np.ascontiguousarray(w_hh)
    for t in _order(steps, not reverse):
        dh += g[t]
        idle = _idle(lengths, t)
        kept = None if idle is None else dh[idle]
        np.multiply(dh, slope[t], out=d[t])
        np.matmul(d[t], w, out=dh)
        if kept is not None:
            d[t][idle] = 0
            dh[idle] = kept
    return _down(dtype, d, dh)


RNN_KERNELS: dict[str, Callable[..., Any]] = {
    "lstm_layer": lstm_layer,
    "lstm_layer_backward": lstm_layer_backward,
    "gru_layer": gru_layer,
    "gru_layer_backward": gru_layer_backward,
    "rnn_layer": rnn_layer,
    "rnn_layer_backward": rnn_layer_backward,
}
