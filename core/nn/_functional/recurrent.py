"""One recurrent layer (one direction) over a whole sequence: one graph node, one kernel call.

``lstm_layer``, ``gru_layer`` and ``rnn_layer`` take the input projection of every time step
(``gi``, computed by the caller with one recorded matmul), the initial state and the hidden
weights, run the backend's fused kernel (or the decomposition below, a step loop in ember ops,
so every backend runs them) without recording, and record a single node whose rule calls the
matching ``*_backward`` composite and then forms the weight gradients with one matmul over all
steps. Under ``create_graph`` the rule instead differentiates the decomposition again, so
higher-order gradients still work. ``lengths`` (packed sequences): rows past their length keep
their state (see ``ember.backends.ops``).
"""

from __future__ import annotations

from typing import Any

from ..._autocast_hook import autocast_op
from ..._creation import tensor, zeros
from ..._dispatch import call, has_kernel
from ..._ops._composite import decomposition
from ..._ops.join import cat, stack
from ..._ops.pointwise_unary import sigmoid, tanh
from ..._ops.select import where
from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import state as _grad
from ...autograd.graph import record
from ._util import NoRecord

__all__ = ["gru_layer", "lstm_layer", "rnn_layer"]

Lengths = tuple[int, ...] | None


def _order(n: int, reverse: bool) -> range:
    return range(n - 1, -1, -1) if reverse else range(n)


def _masks(lengths: Lengths, like: Tensor) -> list[Tensor] | None:
    """Per step, (N, 1) True where the row's sequence still runs."""
    if lengths is None:
        return None
    lens = tensor(list(lengths), device=like.device)
    return [(lens > t).unsqueeze(-1) for t in range(like.shape[0])]


def _prev(out: Tensor, h0: Tensor, reverse: bool) -> Tensor:
    """The state each step started from, (L, N, H)."""
    first = h0.unsqueeze(0)
    return cat([out[1:], first], 0) if reverse else cat([first, out[:-1]], 0)


def _same_dtype(*ts: Any) -> tuple:
    """Cast to the widest floating dtype among ``ts`` (mixed only under autocast)."""
    dts = {t.dtype for t in ts if t is not None}
    if len(dts) == 1:
        return ts
    wide = max(dts, key=lambda d: d.itemsize)
    return tuple(t if t is None or t.dtype is wide else t.to(wide) for t in ts)


def _run(name: str, tensors: tuple, params: tuple, dtype: Any) -> tuple:
    """The backend's kernel on native arrays, or the decomposition; Tensors out, no graph."""
    x = tensors[0]
    with NoRecord():
        if not has_kernel(x._be, name):
            out = _DECOMPOSED[name](*(None if t is None else t.detach() for t in tensors), *params)
            return out if isinstance(out, tuple) else (out,)
        raw = call(x._be, name, *(None if t is None else t._data for t in tensors), *params)
        raw = raw if isinstance(raw, tuple) else (raw,)
        return tuple(wrap(r, x._be, x._device, dtype, tuple(int(s) for s in r.shape)) for r in raw)


def _regrad(fn: Any, n: Any, g: Tensor, args: tuple) -> tuple:
    """create_graph: differentiate the decomposition, recorded, for gradients of gradients."""
    from ...autograd import grad

    inputs = args[:5]
    out = fn(*args)
    out = out[0] if isinstance(out, tuple) else out
    wanted = [t for t, need in zip(inputs, n.needs_input_grad) if need and t is not None]
    got = iter(grad(out, wanted, g, create_graph=True, allow_unused=True))
    return tuple(next(got) if need and t is not None else None for t, need in zip(inputs, n.needs_input_grad))


def _weight_grads(n: Any, d_gh: Tensor, prev: Tensor) -> tuple:
    need = n.needs_input_grad
    gates = d_gh.shape[-1]
    d_w = d_gh.reshape(-1, gates).mT @ prev.reshape(-1, prev.shape[-1]) if need[3] else None
    d_b = d_gh.sum((0, 1)) if need[4] else None
    return d_w, d_b


# -- LSTM ----------------------------------------------------------------------------------
@autocast_op("mkldnn_rnn_layer")
def lstm_layer(
    gi: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool, lengths: Lengths
) -> Tensor:
    """(2, L, N, H): every h then every c of one LSTM direction (h_n, c_n are its last step)."""
    gi, h0, c0, w_hh, b_hh = _same_dtype(gi, h0, c0, w_hh, b_hh)
    hc, gates = _run("lstm_layer", (gi, h0, c0, w_hh, b_hh), (reverse, lengths), gi.dtype)
    if _grad.enabled:
        ctx = (gi, h0, c0, w_hh, b_hh, hc.detach(), gates, reverse, lengths)
        record("MkldnnRnnLayerBackward0", _lstm_rule, hc, (gi, h0, c0, w_hh, b_hh), (), ctx)
    return hc


def _lstm_rule(n: Any, g: Tensor) -> tuple:
    gi, h0, c0, w_hh, b_hh, hc, gates, reverse, lengths = n.ctx
    if _grad.enabled:
        return _regrad(_lstm_decomposed, n, g, (gi, h0, c0, w_hh, b_hh, reverse, lengths))
    d_g, d_h0, d_c0 = _run("lstm_layer_backward", (g, h0, c0, w_hh, hc, gates), (reverse, lengths), g.dtype)
    return (d_g, d_h0, d_c0, *_weight_grads(n, d_g, _prev(hc.select(0, 0), h0, reverse)))


@decomposition("lstm_layer")
def _lstm_decomposed(
    gi: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool, lengths: Lengths
) -> tuple:
    steps, hid = gi.shape[0], h0.shape[-1]
    pre = gi if b_hh is None else gi + b_hh
    masks = _masks(lengths, gi)
    hs: list[Any] = [None] * steps
    cs: list[Any] = [None] * steps
    gates: list[Any] = [None] * steps
    h, c = h0, c0
    w_t = w_hh.mT
    for t in _order(steps, reverse):
        z = pre[t] + h @ w_t
        i, f = sigmoid(z[:, :hid]), sigmoid(z[:, hid : 2 * hid])
        gg, o = tanh(z[:, 2 * hid : 3 * hid]), sigmoid(z[:, 3 * hid :])
        c_new = f * c + i * gg
        h_new = o * tanh(c_new)
        if masks is not None:
            h_new, c_new = where(masks[t], h_new, h), where(masks[t], c_new, c)
        hs[t], cs[t], gates[t] = h_new, c_new, cat([i, f, gg, o], -1)
        h, c = h_new, c_new
    return stack([stack(hs, 0), stack(cs, 0)], 0), stack(gates, 0)


@decomposition("lstm_layer_backward")
def _lstm_backward_decomposed(
    g: Tensor,
    h0: Tensor,
    c0: Tensor,
    w_hh: Tensor,
    hc: Tensor,
    gates: Tensor,
    reverse: bool,
    lengths: Lengths,
) -> tuple:
    steps, hid = hc.shape[1], hc.shape[-1]
    masks = _masks(lengths, hc[0])
    c_prev = _prev(hc[1], c0, reverse)
    tc = tanh(hc[1])
    d: list[Any] = [None] * steps
    dh, dc = zeros(h0.shape, dtype=g.dtype, device=g.device), zeros(c0.shape, dtype=g.dtype, device=g.device)
    for t in _order(steps, not reverse):
        dh, dc = dh + g[0, t], dc + g[1, t]
        i, f = gates[t, :, :hid], gates[t, :, hid : 2 * hid]
        gg, o = gates[t, :, 2 * hid : 3 * hid], gates[t, :, 3 * hid :]
        dc_t = dc + dh * o * (1 - tc[t] * tc[t])
        d_t = cat(
            [
                dc_t * gg * i * (1 - i),
                dc_t * c_prev[t] * f * (1 - f),
                dc_t * i * (1 - gg * gg),
                dh * tc[t] * o * (1 - o),
            ],
            -1,
        )
        dh_new, dc_new = d_t @ w_hh, dc_t * f
        if masks is not None:
            d_t = where(masks[t], d_t, 0.0)
            dh_new, dc_new = where(masks[t], dh_new, dh), where(masks[t], dc_new, dc)
        d[t], dh, dc = d_t, dh_new, dc_new
    return stack(d, 0), dh, dc


# -- GRU -----------------------------------------------------------------------------------
def gru_layer(
    gi: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool, lengths: Lengths
) -> Tensor:
    """(L, N, H): every h of one GRU direction."""
    gi, h0, w_hh, b_hh = _same_dtype(gi, h0, w_hh, b_hh)
    out, gates = _run("gru_layer", (gi, h0, w_hh, b_hh), (reverse, lengths), gi.dtype)
    if _grad.enabled:
        ctx = (gi, h0, None, w_hh, b_hh, out.detach(), gates, reverse, lengths)
        record("GruLayerBackward", _gru_rule, out, (gi, h0, None, w_hh, b_hh), (), ctx)
    return out


def _gru_rule(n: Any, g: Tensor) -> tuple:
    gi, h0, _, w_hh, b_hh, out, gates, reverse, lengths = n.ctx
    if _grad.enabled:
        return _regrad(_gru_args, n, g, (gi, h0, None, w_hh, b_hh, reverse, lengths))
    d_gi, d_gh, d_h0 = _run("gru_layer_backward", (g, h0, w_hh, out, gates), (reverse, lengths), g.dtype)
    return (d_gi, d_h0, None, *_weight_grads(n, d_gh, _prev(out, h0, reverse)))


def _gru_args(
    gi: Tensor, h0: Tensor, _: None, w_hh: Tensor, b_hh: Any, reverse: bool, lengths: Lengths
) -> Any:
    return _gru_decomposed(gi, h0, w_hh, b_hh, reverse, lengths)


@decomposition("gru_layer")
def _gru_decomposed(
    gi: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool, lengths: Lengths
) -> tuple:
    steps, hid = gi.shape[0], h0.shape[-1]
    masks = _masks(lengths, gi)
    hs: list[Any] = [None] * steps
    gates: list[Any] = [None] * steps
    h, w_t = h0, w_hh.mT
    for t in _order(steps, reverse):
        gh = h @ w_t if b_hh is None else h @ w_t + b_hh
        rz = sigmoid(gi[t, :, : 2 * hid] + gh[:, : 2 * hid])
        r, z, hn = rz[:, :hid], rz[:, hid:], gh[:, 2 * hid :]
        nt = tanh(gi[t, :, 2 * hid :] + r * hn)
        h_new = nt + z * (h - nt)
        if masks is not None:
            h_new = where(masks[t], h_new, h)
        hs[t], gates[t], h = h_new, cat([rz, nt, hn], -1), h_new
    return stack(hs, 0), stack(gates, 0)


@decomposition("gru_layer_backward")
def _gru_backward_decomposed(
    g: Tensor, h0: Tensor, w_hh: Tensor, out: Tensor, gates: Tensor, reverse: bool, lengths: Lengths
) -> tuple:
    steps, hid = out.shape[0], out.shape[-1]
    masks = _masks(lengths, out)
    h_prev = _prev(out, h0, reverse)
    d_gi: list[Any] = [None] * steps
    d_gh: list[Any] = [None] * steps
    dh = zeros(h0.shape, dtype=g.dtype, device=g.device)
    for t in _order(steps, not reverse):
        dh = dh + g[t]
        r, z = gates[t, :, :hid], gates[t, :, hid : 2 * hid]
        nt, hn = gates[t, :, 2 * hid : 3 * hid], gates[t, :, 3 * hid :]
        dn = dh * (1 - z) * (1 - nt * nt)
        dr, dz = dn * hn * r * (1 - r), dh * (h_prev[t] - nt) * z * (1 - z)
        gi_t, gh_t = cat([dr, dz, dn], -1), cat([dr, dz, dn * r], -1)
        dh_new = dh * z + gh_t @ w_hh
        if masks is not None:
            gi_t, gh_t = where(masks[t], gi_t, 0.0), where(masks[t], gh_t, 0.0)
            dh_new = where(masks[t], dh_new, dh)
        d_gi[t], d_gh[t], dh = gi_t, gh_t, dh_new
    return stack(d_gi, 0), stack(d_gh, 0), dh


# -- Elman RNN -----------------------------------------------------------------------------
@autocast_op("_rnn_layer")
def rnn_layer(
    gi: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor | None, relu: bool, reverse: bool, lengths: Lengths
) -> Tensor:
    """(L, N, H): every h of one Elman RNN direction."""
    gi, h0, w_hh, b_hh = _same_dtype(gi, h0, w_hh, b_hh)
    (out,) = _run("rnn_layer", (gi, h0, w_hh, b_hh), (relu, reverse, lengths), gi.dtype)
    if _grad.enabled:
        ctx = (gi, h0, None, w_hh, b_hh, out.detach(), relu, reverse, lengths)
        record("RnnLayerBackward", _rnn_rule, out, (gi, h0, None, w_hh, b_hh), (), ctx)
    return out


def _rnn_rule(n: Any, g: Tensor) -> tuple:
    gi, h0, _, w_hh, b_hh, out, relu, reverse, lengths = n.ctx
    if _grad.enabled:
        return _regrad(_rnn_args, n, g, (gi, h0, None, w_hh, b_hh, relu, reverse, lengths))
    d_gi, d_h0 = _run("rnn_layer_backward", (g, h0, w_hh, out), (relu, reverse, lengths), g.dtype)
    return (d_gi, d_h0, None, *_weight_grads(n, d_gi, _prev(out, h0, reverse)))


def _rnn_args(gi: Tensor, h0: Tensor, _: None, w_hh: Tensor, b_hh: Any, *params: Any) -> Any:
    return _rnn_decomposed(gi, h0, w_hh, b_hh, *params)


@decomposition("rnn_layer")
def _rnn_decomposed(
    gi: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor | None, relu: bool, reverse: bool, lengths: Lengths
) -> Tensor:
    steps = gi.shape[0]
    pre = gi if b_hh is None else gi + b_hh
    masks = _masks(lengths, gi)
    hs: list[Any] = [None] * steps
    h, w_t = h0, w_hh.mT
    for t in _order(steps, reverse):
        z = pre[t] + h @ w_t
        h_new = z.clamp_min(0) if relu else tanh(z)
        if masks is not None:
            h_new = where(masks[t], h_new, h)
        hs[t], h = h_new, h_new
    return stack(hs, 0)


@decomposition("rnn_layer_backward")
def _rnn_backward_decomposed(
    g: Tensor, h0: Tensor, w_hh: Tensor, out: Tensor, relu: bool, reverse: bool, lengths: Lengths
) -> tuple:
    steps = out.shape[0]
    masks = _masks(lengths, out)
    slope = (out > 0).to(out.dtype) if relu else 1 - out * out
    d: list[Any] = [None] * steps
    dh = zeros(h0.shape, dtype=g.dtype, device=g.device)
    for t in _order(steps, not reverse):
        dh = dh + g[t]
        d_t = dh * slope[t]
        dh_new = d_t @ w_hh
        if masks is not None:
            d_t, dh_new = where(masks[t], d_t, 0.0), where(masks[t], dh_new, dh)
        d[t], dh = d_t, dh_new
    return stack(d, 0), dh


_DECOMPOSED: dict[str, Any] = {
    "lstm_layer": _lstm_decomposed,
    "lstm_layer_backward": _lstm_backward_decomposed,
    "gru_layer": _gru_decomposed,
    "gru_layer_backward": _gru_backward_decomposed,
    "rnn_layer": _rnn_decomposed,
    "rnn_layer_backward": _rnn_backward_decomposed,
}
