"""Fused optimizer updates: ``sgd_update`` and ``adam_update``, one kernel launch each.

One work item per element reads the parameter, gradient and state once and writes them
once. The Python scalars are rounded to the parameter's type on the host and the kernel
does the operations in the order of the CPU kernels (``ember_cpu.optim_kernels``, which
follow PyTorch's single-tensor code; SGD's ``a + s * b`` steps are ``fma``, rounded once as
PyTorch's add with alpha); with ``FP_CONTRACT OFF`` and correctly rounded division and sqrt
the float32 results match the CPU backend bit for bit. Non-contiguous
operands (views of a larger tensor) are copied to contiguous buffers, updated by the same
kernel and written back with ``assign``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import elementwise as ew
from . import runtime
from .clarray import CLArray
from .dtypes import ctype

__all__ = ["adam_update", "sgd_update"]

EMBER_SGD_UPDATE_SRC = """
__kernel void ember_sgd_update(__global T *p, long op, __global const T *g, long og,
    __global T *b, long ob, T neg_lr, T momentum, T damp1, T wd,
    int nesterov, int maximize, int first, int has_buf, long n)
{
    long i = get_global_id(0);
    if (i >= n) return;
    T pi = p[op + i], gi = g[og + i];
    if (maximize) gi = -gi;
    if (wd != 0) gi = fma(pi, wd, gi);
    if (has_buf) {
        T bi = first ? gi : fma(gi, damp1, b[ob + i] * momentum);
        b[ob + i] = bi;
        gi = nesterov ? fma(bi, momentum, gi) : bi;
    }
    p[op + i] = fma(gi, neg_lr, pi);
}
"""

EMBER_ADAM_UPDATE_SRC = """
__kernel void ember_adam_update(__global T *p, long op, __global const T *g, long og,
    __global T *m, long om, __global T *v, long ov, __global T *vmax, long ox,
    T wd, T decay, T w, T w1, T omb2, T beta2, T bc2s, T neg_step, T eps,
    int decoupled, int lerp_low, int amsgrad, int maximize, int fused_sq, long n)
{
    long i = get_global_id(0);
    if (i >= n) return;
    T pi = p[op + i], gi = g[og + i];
    if (maximize) gi = -gi;
    if (decoupled) {
        if (wd != 0) pi = pi * decay;
    } else if (wd != 0) {
        gi = fma(pi, wd, gi);
    }
    T mi = m[om + i], diff = gi - mi;
    mi = lerp_low ? fma(diff, w, mi) : fma(-diff, w1, gi);
    T vb = v[ov + i] * beta2, sq = gi * omb2;
    T vi = fused_sq ? fma(sq, gi, vb) : vb + sq * gi;
    m[om + i] = mi;
    v[ov + i] = vi;
    if (amsgrad) {
        T mx = vmax[ox + i];
        vi = (isnan(mx) || mx >= vi) ? mx : vi;
        vmax[ox + i] = vi;
    }
    T denom = sqrt(vi) / bc2s + eps;
    p[op + i] = pi + (mi * neg_step) / denom;
}
"""

_FLAGS = np.int32
_SCALAR = {"float32": np.float32, "float64": np.float64}


def _kernel(x: CLArray, src: str, name: str, n_arrays: int, n_scalars: int, n_flags: int) -> Any:
    t = _SCALAR[x.dtype.name]
    types = [None, np.int64] * n_arrays + [t] * n_scalars + [_FLAGS] * n_flags + [np.int64]
    key = (name, x.dtype.name)
    return runtime.kernel(x.dev, key, lambda: (f"#define T {ctype(x.dtype)}\n{src}", name, types))


def _dense(arrays: list[CLArray | None]) -> tuple[list[CLArray | None], list[tuple[CLArray, CLArray]]]:
    """Contiguous stand-ins for ``arrays`` and the (original, copy) pairs to write back."""
    out: list[CLArray | None] = []
    back = []
    for a in arrays:
        if a is None or a.is_contiguous():
            out.append(a)
        else:
            c = ew.clone(a)
            out.append(c)
            back.append((a, c))
    return out, back


def _run(
    name: str, src: str, x: CLArray, arrays: list[CLArray | None], scalars: list[Any], flags: list[int]
) -> None:
    """Launch ``name`` over the elements of ``x`` (``arrays[0]``); None arrays get a dummy buffer."""
    if x.dtype.name not in _SCALAR:
        raise TypeError(
            f"{name}: backend 'opencl' has no {x.dtype.name} kernel (supported: float32, float64)"
        )
    if x.size == 0:
        return
    dense, back = _dense(arrays)
    args: list[Any] = []
    for a in dense:
        d = a if a is not None else dense[0]
        args += [d.buf, d.offset] if d is not None else []
    t = _SCALAR[x.dtype.name]
    knl = _kernel(x, src, name, len(arrays), len(scalars), len(flags))
    runtime.launch(x.dev, knl, x.size, args + [t(s) for s in scalars] + [_FLAGS(f) for f in flags] + [x.size])
    for orig, copy in back:
        ew.assign(orig, copy)


def sgd_update(
    param: CLArray,
    grad: CLArray,
    buf: CLArray | None,
    lr: float,
    momentum: float,
    dampening: float,
    weight_decay: float,
    nesterov: bool,
    maximize: bool,
    first_step: bool,
) -> None:
    r"""SGD step in place on ``param`` and ``buf`` (the formula of ``ops.sgd_update``)::

    g = -grad if maximize else grad
    g = g + param * weight_decay                    if weight_decay != 0
    buf = g (first_step)  else  buf = buf * momentum + g * (1 - dampening)
    g = g + buf * momentum if nesterov else buf     if momentum != 0
    param = param + g * (-lr)
    """
    has_buf = momentum != 0 and buf is not None
    scalars = [-lr, momentum, 1 - dampening, weight_decay]
    flags = [int(nesterov), int(maximize), int(first_step), int(has_buf)]
    _run(
        "ember_sgd_update",
        EMBER_SGD_UPDATE_SRC,
        param,
        [param, grad, buf if has_buf else None],
        scalars,
        flags,
    )


def adam_update(
    param: CLArray,
    grad: CLArray,
    exp_avg: CLArray,
    exp_avg_sq: CLArray,
    max_exp_avg_sq: CLArray | None,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    amsgrad: bool,
    maximize: bool,
    step: float,
    decoupled: bool,
) -> None:
    r"""Adam / AdamW step ``step`` in place (the formula of ``ops.adam_update``)::

    g = -grad if maximize else grad
    param = param * (1 - lr * weight_decay)           if decoupled (AdamW)
    g = g + param * weight_decay                      elif weight_decay != 0
    m = m + (g - m) * w  if w < 0.5  else  g - (g - m) * (1 - w),   w = 1 - beta1
    v = v * beta2 + (g * (1 - beta2)) * g
    vmax = max(vmax, v); v := vmax                    if amsgrad
    param = param + (m * (-lr / (1 - beta1**step))) / (sqrt(v) / (1 - beta2**step) ** 0.5 + eps)
    """
    ams = amsgrad and max_exp_avg_sq is not None
    w = 1 - beta1
    bc2s = (1 - beta2**step) ** 0.5
    neg_step = -(lr / (1 - beta1**step))
    f32 = param.dtype.name == "float32"  # 1 - w at the parameter's precision, as PyTorch's lerp
    w1 = float(np.float32(1) - np.float32(w)) if f32 else 1.0 - w
    scalars = [weight_decay, 1 - lr * weight_decay, w, w1, 1 - beta2, beta2, bc2s, neg_step, eps]
    # v * beta2 + sq * g fused for float32 (the CPU's exact float64 path), two roundings for
    # float64 (NumPy has no wider type): both backends give the same bits
    flags = [int(decoupled), int(w < 0.5), int(ams), int(maximize), int(f32)]
    arrays = [param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq if ams else None]
    _run("ember_adam_update", EMBER_ADAM_UPDATE_SRC, param, arrays, scalars, flags)
