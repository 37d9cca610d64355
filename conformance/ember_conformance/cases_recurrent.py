"""Records for the recurrent layer composites (``lstm_layer``, ``gru_layer``, ``rnn_layer`` and
their backwards), with step-loop references in float64.

Samples cover both directions, a strided input projection and packed ``lengths``; the
backward samples take the states and gates the reference forward computes from the same
inputs (as the frontend passes the forward's own outputs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import FLOATS
from .records import OpCase, Sample
from .samples import contig, strided, values

__all__ = ["RECORDS"]

L, N, H = 4, 3, 5
LENGTHS = (4, 2, 3)


def _f(*arrays: Any) -> list[np.ndarray]:
    return [np.asarray(a, np.float64) for a in arrays]


def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _order(n: int, reverse: bool) -> range:
    return range(n - 1, -1, -1) if reverse else range(n)


def _runs(lengths: Any, t: int) -> np.ndarray:
    return np.ones(N, bool) if lengths is None else np.asarray(lengths) > t


def _prev(out: np.ndarray, h0: np.ndarray, reverse: bool) -> np.ndarray:
    first = h0[None]
    return np.concatenate([out[1:], first]) if reverse else np.concatenate([first, out[:-1]])


# -- references ------------------------------------------------------------------------------
def _lstm(gi: Any, h0: Any, c0: Any, w: Any, b: Any, reverse: bool, lengths: Any) -> tuple:
    gi, h0, c0, w, b = _f(gi, h0, c0, w, b)
    hc, gates = np.zeros((2, *gi.shape[:2], h0.shape[-1])), np.zeros(gi.shape)
    h, c = h0, c0
    for t in _order(gi.shape[0], reverse):
        i, f, g, o = np.split(gi[t] + h @ w.T + b, 4, -1)
        i, f, g, o = _sig(i), _sig(f), np.tanh(g), _sig(o)
        run = _runs(lengths, t)[:, None]
        c = np.where(run, f * c + i * g, c)
        h = np.where(run, o * np.tanh(c), h)
        hc[0, t], hc[1, t], gates[t] = h, c, np.concatenate([i, f, g, o], -1)
    return hc, gates


def _lstm_backward(
    g: Any, h0: Any, c0: Any, w: Any, hc: Any, gates: Any, reverse: bool, lengths: Any
) -> tuple:
    g, h0, c0, w, hc, gates = _f(g, h0, c0, w, hc, gates)
    c_prev = _prev(hc[1], c0, reverse)
    d, dh, dc = np.zeros(gates.shape), np.zeros(h0.shape), np.zeros(c0.shape)
    for t in _order(hc.shape[1], not reverse):
        dh, dc = dh + g[0, t], dc + g[1, t]
        i, f, gg, o = np.split(gates[t], 4, -1)
        tc = np.tanh(hc[1, t])
        dct = dc + dh * o * (1 - tc**2)
        dt = np.concatenate(
            [
                dct * gg * i * (1 - i),
                dct * c_prev[t] * f * (1 - f),
                dct * i * (1 - gg**2),
                dh * tc * o * (1 - o),
            ],
            -1,
        )
        run = _runs(lengths, t)[:, None]
        d[t] = np.where(run, dt, 0)
        dh, dc = np.where(run, dt @ w, dh), np.where(run, dct * f, dc)
    return d, dh, dc


def _gru(gi: Any, h0: Any, w: Any, b: Any, reverse: bool, lengths: Any) -> tuple:
    gi, h0, w, b = _f(gi, h0, w, b)
    out, gates = np.zeros((*gi.shape[:2], h0.shape[-1])), np.zeros((*gi.shape[:2], 4 * h0.shape[-1]))
    h = h0
    for t in _order(gi.shape[0], reverse):
        ir, iz, i_n = np.split(gi[t], 3, -1)
        hr, hz, hn = np.split(h @ w.T + b, 3, -1)
        r, z = _sig(ir + hr), _sig(iz + hz)
        n = np.tanh(i_n + r * hn)
        h = np.where(_runs(lengths, t)[:, None], (1 - z) * n + z * h, h)
        out[t], gates[t] = h, np.concatenate([r, z, n, hn], -1)
    return out, gates


def _gru_backward(g: Any, h0: Any, w: Any, out: Any, gates: Any, reverse: bool, lengths: Any) -> tuple:
    g, h0, w, out, gates = _f(g, h0, w, out, gates)
    h_prev = _prev(out, h0, reverse)
    d_gi, d_gh, dh = (
        np.zeros((*out.shape[:2], w.shape[0])),
        np.zeros((*out.shape[:2], w.shape[0])),
        np.zeros(h0.shape),
    )
    for t in _order(out.shape[0], not reverse):
        dh = dh + g[t]
        r, z, n, hn = np.split(gates[t], 4, -1)
        dn = dh * (1 - z) * (1 - n**2)
        dr, dz = dn * hn * r * (1 - r), dh * (h_prev[t] - n) * z * (1 - z)
        run = _runs(lengths, t)[:, None]
        d_gi[t] = np.where(run, np.concatenate([dr, dz, dn], -1), 0)
        d_gh[t] = np.where(run, np.concatenate([dr, dz, dn * r], -1), 0)
        dh = np.where(run, dh * z + d_gh[t] @ w, dh)
    return d_gi, d_gh, dh


def _rnn(gi: Any, h0: Any, w: Any, b: Any, relu: bool, reverse: bool, lengths: Any) -> np.ndarray:
    gi, h0, w, b = _f(gi, h0, w, b)
    out, h = np.zeros(gi.shape), h0
    for t in _order(gi.shape[0], reverse):
        z = gi[t] + h @ w.T + b
        h = np.where(_runs(lengths, t)[:, None], np.maximum(z, 0) if relu else np.tanh(z), h)
        out[t] = h
    return out


def _rnn_backward(g: Any, h0: Any, w: Any, out: Any, relu: bool, reverse: bool, lengths: Any) -> tuple:
    g, h0, w, out = _f(g, h0, w, out)
    slope = (out > 0).astype(np.float64) if relu else 1 - out**2
    d, dh = np.zeros(out.shape), np.zeros(h0.shape)
    for t in _order(out.shape[0], not reverse):
        dh = dh + g[t]
        run = _runs(lengths, t)[:, None]
        d[t] = np.where(run, dh * slope[t], 0)
        dh = np.where(run, d[t] @ w, dh)
    return d, dh


# -- samples ---------------------------------------------------------------------------------
_VARIANTS = [
    ("forward", False, None),
    ("reverse", True, None),
    ("packed", False, LENGTHS),
    ("packed-reverse", True, LENGTHS),
]


def _inputs(dtype: str, rng: np.random.Generator, gates: int, cell: bool) -> list[np.ndarray]:
    def v(*shape: int) -> np.ndarray:
        return values(rng, shape, dtype, "small")

    parts = [v(L, N, gates * H), v(N, H)] + ([v(N, H)] if cell else []) + [v(gates * H, H), v(gates * H)]
    return parts


def _layer_samples(gates: int, cell: bool, extra: tuple = ()) -> Any:
    def make(dtype: str, rng: np.random.Generator) -> list[Sample]:
        out = []
        for label, reverse, lengths in _VARIANTS:
            arrays = _inputs(dtype, rng, gates, cell)
            ts = [strided(arrays[0]) if label == "reverse" else contig(arrays[0])] + [
                contig(a) for a in arrays[1:]
            ]
            out.append(Sample(label, (*ts, *extra, reverse, lengths)))
        return out

    return make


def _backward_samples(kind: str, relu: bool = False) -> Any:
    gates = {"lstm": 4, "gru": 3, "rnn": 1}[kind]

    def make(dtype: str, rng: np.random.Generator) -> list[Sample]:
        out = []
        for label, reverse, lengths in _VARIANTS:
            arrays = _inputs(dtype, rng, gates, kind == "lstm")
            like = arrays[0].dtype
            if kind == "lstm":
                gi, h0, c0, w, b = arrays
                hc, gts = _lstm(gi, h0, c0, w, b, reverse, lengths)
                g = values(rng, hc.shape, dtype, "small")
                args: tuple = (g, h0, c0, w, hc.astype(like), gts.astype(like))
            elif kind == "gru":
                gi, h0, w, b = arrays
                o, gts = _gru(gi, h0, w, b, reverse, lengths)
                args = (values(rng, o.shape, dtype, "small"), h0, w, o.astype(like), gts.astype(like))
            else:
                gi, h0, w, b = arrays
                o = _rnn(gi, h0, w, b, relu, reverse, lengths)
                args = (values(rng, o.shape, dtype, "small"), h0, w, o.astype(like))
            ts = tuple(strided(a) if label == "reverse" and i == 0 else contig(a) for i, a in enumerate(args))
            out.append(Sample(label, (*ts, *((relu,) if kind == "rnn" else ()), reverse, lengths)))
        return out

    return make


def _two(dtype: str) -> tuple[str, str]:
    return dtype, dtype


def _three(dtype: str) -> tuple[str, str, str]:
    return dtype, dtype, dtype


_WHY = "real floating; one direction of a layer over the sequence (half types may compute in float32)"

RECORDS = [
    OpCase("lstm_layer", _layer_samples(4, True), _lstm, FLOATS, _WHY, out_dtype=_two, tol_scale=8.0),
    OpCase(
        "lstm_layer_backward",
        _backward_samples("lstm"),
        _lstm_backward,
        FLOATS,
        _WHY,
        out_dtype=_three,
        tol_scale=8.0,
    ),
    OpCase("gru_layer", _layer_samples(3, False), _gru, FLOATS, _WHY, out_dtype=_two, tol_scale=8.0),
    OpCase(
        "gru_layer_backward",
        _backward_samples("gru"),
        _gru_backward,
        FLOATS,
        _WHY,
        out_dtype=_three,
        tol_scale=8.0,
    ),
    OpCase("rnn_layer", _layer_samples(1, False, (False,)), _rnn, FLOATS, _WHY, tol_scale=8.0),
    OpCase(
        "rnn_layer_backward",
        _backward_samples("rnn", True),
        _rnn_backward,
        FLOATS,
        _WHY,
        out_dtype=_two,
        tol_scale=8.0,
    ),
]
