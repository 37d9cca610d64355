"""Recurrent layers (LSTM, GRU, Elman) as one matmul and one gate kernel per time step.

The frontend's decomposition launches a dozen elementwise kernels per step (~50 µs each on
PoCL); here a step is the tiled matmul of the previous state by the (pre-transposed) hidden
weights and ONE generated kernel, one work item per (row, unit), that adds the input
projection and bias, applies the gates, updates the state and writes h (and c) and the
activated gates straight into the whole sequence's output buffers: the next step's matmul
reads its state from there, so nothing returns to the host between steps.

The backward kernels mirror ``ember_cpu.rnn_kernels``: a step adds the output gradient to
the carried state gradient, writes the gate gradients and leaves the part of the next state
gradient that is not a matmul (``carry``: LSTM's dc, GRU's dh * z) in a buffer; the matmul
``d[t] @ w_hh`` supplies the rest, read by the next step's kernel for the rows that ran at t
(an idle row's product is never read, so inf/NaN weights cannot leak into its gradient).
``lengths`` (packed sequences) is copied to the device once per call: a row with
``lengths[n] <= t`` keeps its state, its outputs repeat it and its gate gradients are 0 (its
whole gradient is carried). Bias, lengths, relu and the first backward step (no product yet)
are compile-time switches, so each program is branch-free. float32/float64 here; kernels.py
runs float16/bfloat16 through float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import elementwise as ew
from . import runtime
from .clarray import CLArray, empty
from .dtypes import ctype, kind
from .matmul import matmul

__all__ = [
    "dense",
    "gru_layer",
    "gru_layer_backward",
    "launch",
    "lstm_layer",
    "lstm_layer_backward",
    "rnn_layer",
    "rnn_layer_backward",
    "transposed",
]

# Every kernel: buffers (each followed by its long element offset), then the step t, H and n
# (the work items: rows * hidden). HAS_BIAS / HAS_LENS / RELU / HAS_MM are defined per program.
_HELPERS = """
static T ember_sig(T x) { return (T)1 / ((T)1 + exp(-x)); }
#define GID long gid = get_global_id(0); if (gid >= n) return; long r = gid / H, j = gid % H;
#define IDLE (HAS_LENS && lens[r] <= t)
#define WAS_IDLE (HAS_LENS && lens[r] <= tp)  /* at the previous backward step: no product */
"""

LSTM_STEP = """
__kernel void ember_lstm_step(__global T *h, long oh, __global T *c, long oc, __global T *gt, long ogt,
    __global const T *gi, long ogi, __global const T *gh, long ogh, __global const T *b, long ob,
    __global const T *hp, long ohp, __global const T *cp, long ocp, __global const long *lens, long olens,
    long t, long H, long n)
{
    GID
    __global const T *x = gi + ogi + r * 4 * H + j, *y = gh + ogh + r * 4 * H + j;
    T zi = x[0], zf = x[H], zg = x[2 * H], zo = x[3 * H];
    if (HAS_BIAS) { b += ob + j; zi += b[0]; zf += b[H]; zg += b[2 * H]; zo += b[3 * H]; }
    T i = ember_sig(zi + y[0]), f = ember_sig(zf + y[H]), g = tanh(zg + y[2 * H]), o = ember_sig(zo + y[3 * H]);
    __global T *w = gt + ogt + r * 4 * H + j;
    w[0] = i; w[H] = f; w[2 * H] = g; w[3 * H] = o;
    T cv = f * cp[ocp + gid] + i * g, hv = o * tanh(cv);
    if (IDLE) { hv = hp[ohp + gid]; cv = cp[ocp + gid]; }
    h[oh + gid] = hv; c[oc + gid] = cv;
}
"""

LSTM_BACK = """
__kernel void ember_lstm_back(__global T *d, long od, __global T *dh, long odh, __global T *dc, long odc,
    __global const T *mm, long omm, __global const T *gh, long ogh, __global const T *gc, long ogc,
    __global const T *gt, long ogt, __global const T *c, long oc, __global const T *cp, long ocp,
    __global const long *lens, long olens, long t, long tp, long H, long n)
{
    GID
    T dhv = dh[odh + gid] + gh[ogh + gid], dcv = dc[odc + gid] + gc[ogc + gid];
    if (HAS_MM && !WAS_IDLE) dhv += mm[omm + gid];
    __global const T *w = gt + ogt + r * 4 * H + j;
    T i = w[0], f = w[H], g = w[2 * H], o = w[3 * H], tc = tanh(c[oc + gid]);
    T dct = dcv + dhv * (o * (1 - tc * tc));
    T di = dct * (g * i * (1 - i)), df = dct * (cp[ocp + gid] * f * (1 - f));
    T dg = dct * (i * (1 - g * g)), dov = dhv * (tc * o * (1 - o));
    T carry_h = 0, carry_c = dct * f;
    if (IDLE) { di = df = dg = dov = 0; carry_h = dhv; carry_c = dcv; }
    __global T *q = d + od + r * 4 * H + j;
    q[0] = di; q[H] = df; q[2 * H] = dg; q[3 * H] = dov;
    dh[odh + gid] = carry_h; dc[odc + gid] = carry_c;
}
"""

GRU_STEP = """
__kernel void ember_gru_step(__global T *h, long oh, __global T *gt, long ogt,
    __global const T *gi, long ogi, __global const T *gh, long ogh, __global const T *b, long ob,
    __global const T *hp, long ohp, __global const long *lens, long olens,
    long t, long H, long n)
{
    GID
    __global const T *x = gi + ogi + r * 3 * H + j, *y = gh + ogh + r * 3 * H + j;
    T hr = y[0], hz = y[H], hn = y[2 * H];
    if (HAS_BIAS) { b += ob + j; hr += b[0]; hz += b[H]; hn += b[2 * H]; }
    T rv = ember_sig(x[0] + hr), zv = ember_sig(x[H] + hz), nv = tanh(x[2 * H] + rv * hn);
    __global T *w = gt + ogt + r * 4 * H + j;
    w[0] = rv; w[H] = zv; w[2 * H] = nv; w[3 * H] = hn;
    T prev = hp[ohp + gid], hv = nv + (prev - nv) * zv;
    h[oh + gid] = IDLE ? prev : hv;
}
"""

GRU_BACK = """
__kernel void ember_gru_back(__global T *dgi, long odgi, __global T *dgh, long odgh, __global T *dh, long odh,
    __global const T *mm, long omm, __global const T *g, long og, __global const T *gt, long ogt,
    __global const T *hp, long ohp, __global const long *lens, long olens,
    long t, long tp, long H, long n)
{
    GID
    T dhv = dh[odh + gid] + g[og + gid];
    if (HAS_MM && !WAS_IDLE) dhv += mm[omm + gid];
    __global const T *w = gt + ogt + r * 4 * H + j;
    T rv = w[0], zv = w[H], nv = w[2 * H], hn = w[3 * H];
    T dn = dhv * ((1 - zv) * (1 - nv * nv));
    T dr = dn * (hn * rv * (1 - rv)), dz = dhv * ((hp[ohp + gid] - nv) * zv * (1 - zv)), dhn = dn * rv;
    T carry = dhv * zv;
    if (IDLE) { dn = dr = dz = dhn = 0; carry = dhv; }
    __global T *p = dgi + odgi + r * 3 * H + j, *q = dgh + odgh + r * 3 * H + j;
    p[0] = dr; p[H] = dz; p[2 * H] = dn;
    q[0] = dr; q[H] = dz; q[2 * H] = dhn;
    dh[odh + gid] = carry;
}
"""

RNN_STEP = """
__kernel void ember_rnn_step(__global T *h, long oh, __global const T *gi, long ogi,
    __global const T *gh, long ogh, __global const T *b, long ob, __global const T *hp, long ohp,
    __global const long *lens, long olens, long t, long H, long n)
{
    GID
    T z = gi[ogi + gid];
    if (HAS_BIAS) z += b[ob + j];
    z += gh[ogh + gid];
    T hv = RELU ? (isnan(z) ? z : fmax(z, (T)0)) : tanh(z);
    h[oh + gid] = IDLE ? hp[ohp + gid] : hv;
}
"""

RNN_BACK = """
__kernel void ember_rnn_back(__global T *d, long od, __global T *dh, long odh,
    __global const T *mm, long omm, __global const T *g, long og, __global const T *y, long oy,
    __global const long *lens, long olens, long t, long tp, long H, long n)
{
    GID
    T dhv = dh[odh + gid] + g[og + gid];
    if (HAS_MM && !WAS_IDLE) dhv += mm[omm + gid];
    T yv = y[oy + gid], slope = RELU ? (yv > 0 ? (T)1 : (T)0) : 1 - yv * yv;
    T dv = dhv * slope, carry = 0;
    if (IDLE) { dv = 0; carry = dhv; }
    d[od + gid] = dv;
    dh[odh + gid] = carry;
}
"""

FINISH = """
__kernel void ember_rnn_finish(__global T *mm, long omm, __global const T *carry, long oc,
    __global const long *lens, long olens, long tp, long H, long n)
{
    GID
    mm[omm + gid] = (WAS_IDLE ? (T)0 : mm[omm + gid]) + carry[oc + gid];
}
"""

_SOURCES = {
    name: _HELPERS + src
    for name, src in (
        ("ember_lstm_step", LSTM_STEP),
        ("ember_lstm_back", LSTM_BACK),
        ("ember_gru_step", GRU_STEP),
        ("ember_gru_back", GRU_BACK),
        ("ember_rnn_step", RNN_STEP),
        ("ember_rnn_back", RNN_BACK),
        ("ember_rnn_finish", FINISH),
    )
}

Buf = tuple[Any, int]  # (cl.Buffer, element offset)


def check_float(op: str, x: CLArray) -> None:
    if kind(x.dtype) != "f":
        raise TypeError(f"{op}: backend 'opencl' has no {x.dtype.name} kernel (supported: float32, float64)")


def dense(x: CLArray) -> CLArray:
    """``x`` itself when its elements are contiguous (any offset), else a contiguous copy."""
    return x if x.is_contiguous() else ew.clone(x)


def transposed(x: CLArray) -> CLArray:
    """The view of ``x`` with its last two dims swapped (no copy)."""
    sh, st = x.shape, x.strides
    return x.view(sh[:-2] + (sh[-1], sh[-2]), st[:-2] + (st[-1], st[-2]), x.offset)


def launch(
    x: CLArray,
    name: str,
    src: str,
    bufs: list[Buf],
    longs: list[int],
    scalars: tuple = (),
    defines: tuple[tuple[str, int], ...] = (),
) -> None:
    """Run kernel ``name``: (buffer, offset) pairs, ``scalars`` (of x's type), int64 ``longs``
    whose last is the number of work items; ``defines``: compile-time switches (a program each)."""
    t = np.dtype(x.dtype.name).type
    types = [None, np.int64] * len(bufs) + [t] * len(scalars) + [np.int64] * len(longs)
    head = "".join(f"#define {k} {v}\n" for k, v in defines)
    knl = runtime.kernel(
        x.dev,
        ("ember_rnn_attn", name, x.dtype.name, defines),
        lambda: (f"#define T {ctype(x.dtype)}\n{head}{src}", name, types),
    )
    args: list[Any] = []
    for buf, off in bufs:
        args += [buf, np.int64(off)]
    args += [t(s) for s in scalars] + [np.int64(v) for v in longs]
    runtime.launch(x.dev, knl, longs[-1], args)


class _Seq:
    """What every layer kernel shares: the step order, lengths on the device, dtype, sizes."""

    def __init__(self, op: str, gi: CLArray, h0: CLArray, lengths: Any, reverse: bool, steps: int) -> None:
        check_float(op, gi)
        self.x, self.dev, self.dt = gi, gi.dev, gi.dtype
        self.steps, self.n, self.hid = steps, h0.shape[0], h0.shape[1]
        self.nh = self.n * self.hid
        self.reverse = reverse
        self.lens: Buf = (self.dev.flag, 0)
        self.has_lens = 0
        if lengths is not None and self.n and any(int(v) < steps for v in lengths):
            import pyopencl as cl

            # a buffer made from host memory: no wait for the queue (enqueue_copy would block)
            host = np.asarray([int(v) for v in lengths], np.int64)
            flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
            self.lens, self.has_lens = (cl.Buffer(self.dev.ctx, flags, hostbuf=host), 0), 1

    def order(self, backward: bool) -> range:
        rev = self.reverse != backward
        return range(self.steps - 1, -1, -1) if rev else range(self.steps)

    def prev(self, t: int) -> int | None:
        """The forward step before ``t`` (None: the initial state)."""
        p = t + 1 if self.reverse else t - 1
        return p if 0 <= p < self.steps else None

    def state(self, t: int, seq: CLArray, base: int, init: CLArray) -> Buf:
        """(buffer, offset) of the (N, H) state step ``t`` started from."""
        p = self.prev(t)
        return (init.buf, init.offset) if p is None else (seq.buf, base + p * self.nh)

    def rows(self, arr: CLArray, off: int, width: int) -> CLArray:
        """The (N, width) rows of contiguous ``arr`` starting at element ``off``."""
        return arr.view((self.n, width), (width, 1), off)


def _run_step(s: _Seq, name: str, bufs: list[Buf], t: int | list[int], **flags: int) -> None:
    """One step's kernel; ``flags`` (HAS_BIAS, HAS_MM, RELU) and HAS_LENS are compile-time
    constants, so each variant is a branch-free program that the device vectorises."""
    defines = tuple(sorted(flags.items())) + (("HAS_LENS", s.has_lens),)
    steps = t if isinstance(t, list) else [t]
    launch(s.x, name, _SOURCES[name], bufs + [s.lens], [*steps, s.hid, s.nh], defines=defines)


def _bias(b: CLArray | None, fallback: CLArray) -> tuple[Buf, int]:
    if b is None:
        return (fallback.buf, 0), 0
    b = dense(b)
    return (b.buf, b.offset), 1


def _finish(s: _Seq, mm: CLArray | None, carry: CLArray, t: int) -> CLArray:
    """The gradient of the initial state: the last step ``t``'s product (for the rows that
    ran then) plus what was carried."""
    if mm is None:
        return carry
    _run_step(s, "ember_rnn_finish", [(mm.buf, mm.offset), (carry.buf, carry.offset)], t)
    return mm


def _zeros(s: _Seq, shape: tuple[int, ...]) -> CLArray:
    return ew.full(shape, 0.0, s.dt, s.dev.index)


# -- forward -------------------------------------------------------------------------------
def lstm_layer(gi: Any, h0: Any, c0: Any, w_hh: Any, b_hh: Any, reverse: bool, lengths: Any) -> tuple:
    s = _Seq("lstm_layer", gi, h0, lengths, reverse, gi.shape[0])
    gi, h0, c0, wt = dense(gi), dense(h0), dense(c0), ew.clone(transposed(w_hh))
    g4 = 4 * s.hid
    hc, gates = empty(s.dev, (2, s.steps, s.n, s.hid), s.dt), empty(s.dev, (s.steps, s.n, g4), s.dt)
    b, has_b = _bias(b_hh, gi)
    c_base = s.steps * s.nh
    for t in s.order(False):
        hp, cp = s.state(t, hc, 0, h0), s.state(t, hc, c_base, c0)
        gh = matmul(s.rows(hc, hp[1], s.hid) if s.prev(t) is not None else h0, wt)
        bufs = [(hc.buf, t * s.nh), (hc.buf, c_base + t * s.nh), (gates.buf, t * s.n * g4)]
        bufs += [(gi.buf, gi.offset + t * s.n * g4), (gh.buf, gh.offset), b, hp, cp]
        _run_step(s, "ember_lstm_step", bufs, t, HAS_BIAS=has_b)
    return hc, gates


def gru_layer(gi: Any, h0: Any, w_hh: Any, b_hh: Any, reverse: bool, lengths: Any) -> tuple:
    s = _Seq("gru_layer", gi, h0, lengths, reverse, gi.shape[0])
    gi, h0, wt = dense(gi), dense(h0), ew.clone(transposed(w_hh))
    g3 = 3 * s.hid
    out, gates = empty(s.dev, (s.steps, s.n, s.hid), s.dt), empty(s.dev, (s.steps, s.n, 4 * s.hid), s.dt)
    b, has_b = _bias(b_hh, gi)
    for t in s.order(False):
        hp = s.state(t, out, 0, h0)
        gh = matmul(s.rows(out, hp[1], s.hid) if s.prev(t) is not None else h0, wt)
        bufs = [(out.buf, t * s.nh), (gates.buf, t * 4 * s.nh)]
        bufs += [(gi.buf, gi.offset + t * s.n * g3), (gh.buf, gh.offset), b, hp]
        _run_step(s, "ember_gru_step", bufs, t, HAS_BIAS=has_b)
    return out, gates


def rnn_layer(gi: Any, h0: Any, w_hh: Any, b_hh: Any, relu: bool, reverse: bool, lengths: Any) -> Any:
    s = _Seq("rnn_layer", gi, h0, lengths, reverse, gi.shape[0])
    gi, h0, wt = dense(gi), dense(h0), ew.clone(transposed(w_hh))
    out = empty(s.dev, (s.steps, s.n, s.hid), s.dt)
    b, has_b = _bias(b_hh, gi)
    for t in s.order(False):
        hp = s.state(t, out, 0, h0)
        gh = matmul(s.rows(out, hp[1], s.hid) if s.prev(t) is not None else h0, wt)
        bufs = [(out.buf, t * s.nh), (gi.buf, gi.offset + t * s.nh), (gh.buf, gh.offset), b, hp]
        _run_step(s, "ember_rnn_step", bufs, t, HAS_BIAS=has_b, RELU=int(relu))
    return out


# -- backward ------------------------------------------------------------------------------
def _mm(mm: CLArray | None, fallback: CLArray) -> tuple[Buf, int]:
    return ((fallback.buf, 0), 0) if mm is None else ((mm.buf, mm.offset), 1)


def lstm_layer_backward(
    g: Any, h0: Any, c0: Any, w_hh: Any, hc: Any, gates: Any, reverse: bool, lengths: Any
) -> tuple:
    s = _Seq("lstm_layer_backward", g, h0, lengths, reverse, hc.shape[1])
    g, c0, w, hc, gates = dense(g), dense(c0), dense(w_hh), dense(hc), dense(gates)
    g4, c_base = 4 * s.hid, s.steps * s.nh
    d = empty(s.dev, (s.steps, s.n, g4), s.dt)
    dh, dc = _zeros(s, (s.n, s.hid)), _zeros(s, (s.n, s.hid))
    mm: CLArray | None = None
    tp = -1  # the previous backward step: its product is in mm
    for t in s.order(True):
        mmb, has_mm = _mm(mm, dh)
        cp = s.state(t, hc, hc.offset + c_base, c0)
        bufs = [(d.buf, t * s.n * g4), (dh.buf, 0), (dc.buf, 0), mmb]
        bufs += [(g.buf, g.offset + t * s.nh), (g.buf, g.offset + c_base + t * s.nh)]
        bufs += [(gates.buf, gates.offset + t * s.n * g4), (hc.buf, hc.offset + c_base + t * s.nh), cp]
        _run_step(s, "ember_lstm_back", bufs, [t, tp], HAS_MM=has_mm)
        mm, tp = matmul(s.rows(d, t * s.n * g4, g4), w), t
    return d, _finish(s, mm, dh, tp), dc


def gru_layer_backward(
    g: Any, h0: Any, w_hh: Any, out: Any, gates: Any, reverse: bool, lengths: Any
) -> tuple:
    s = _Seq("gru_layer_backward", g, h0, lengths, reverse, out.shape[0])
    g, h0, w, out, gates = dense(g), dense(h0), dense(w_hh), dense(out), dense(gates)
    g3 = 3 * s.hid
    d_gi, d_gh = empty(s.dev, (s.steps, s.n, g3), s.dt), empty(s.dev, (s.steps, s.n, g3), s.dt)
    dh = _zeros(s, (s.n, s.hid))
    mm: CLArray | None = None
    tp = -1  # the previous backward step: its product is in mm
    for t in s.order(True):
        mmb, has_mm = _mm(mm, dh)
        bufs = [(d_gi.buf, t * s.n * g3), (d_gh.buf, t * s.n * g3), (dh.buf, 0), mmb]
        bufs += [(g.buf, g.offset + t * s.nh), (gates.buf, gates.offset + t * 4 * s.nh)]
        bufs += [s.state(t, out, out.offset, h0)]
        _run_step(s, "ember_gru_back", bufs, [t, tp], HAS_MM=has_mm)
        mm, tp = matmul(s.rows(d_gh, t * s.n * g3, g3), w), t
    return d_gi, d_gh, _finish(s, mm, dh, tp)


def rnn_layer_backward(
    g: Any, h0: Any, w_hh: Any, out: Any, relu: bool, reverse: bool, lengths: Any
) -> tuple:
    s = _Seq("rnn_layer_backward", g, h0, lengths, reverse, out.shape[0])
    g, w, out = dense(g), dense(w_hh), dense(out)
    d = empty(s.dev, (s.steps, s.n, s.hid), s.dt)
    dh = _zeros(s, (s.n, s.hid))
    mm: CLArray | None = None
    tp = -1  # the previous backward step: its product is in mm
    for t in s.order(True):
        mmb, has_mm = _mm(mm, dh)
        bufs = [
            (d.buf, t * s.nh),
            (dh.buf, 0),
            mmb,
            (g.buf, g.offset + t * s.nh),
            (out.buf, out.offset + t * s.nh),
        ]
        _run_step(s, "ember_rnn_back", bufs, [t, tp], HAS_MM=has_mm, RELU=int(relu))
        mm, tp = matmul(s.rows(d, t * s.nh, s.hid), w), t
    return d, _finish(s, mm, dh, tp)
