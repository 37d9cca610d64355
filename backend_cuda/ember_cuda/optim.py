"""Fused optimizer updates: ``sgd_update`` and ``adam_update``, one ElementwiseKernel each.

Laid out like ``ember_opencl.optim``. Each kernel reads the parameter, gradient and state
once and writes them once, in the wide type (float for half types, double for float64),
in the order of the op table's formula (``ember.backends.ops``), which is PyTorch's
single-tensor algorithm. CuPy kernels need no layout work: they take strided arrays.

``EMBER_SGD_MOMENTUM`` (``momentum != 0``) and ``EMBER_SGD`` (plain step)::

    d = -grad if maximize else grad;  d = d + weight_decay * param
    buf = d (first step)  else  buf = momentum * buf + (1 - dampening) * d
    param = param + (-lr) * (d + momentum * buf if nesterov else buf)

Every ``a + s * b`` there is ``fma`` (PyTorch's add with alpha rounds once; so do the CPU and
OpenCL kernels); ``1 - dampening`` comes from the host, as PyTorch's Python computes it.

``EMBER_ADAM`` / ``EMBER_ADAM_AMSGRAD`` (scalars folded on the host: ``decay = 1 - lr * wd``,
``bc2s = (1 - beta2**step) ** 0.5``, ``neg_step = -lr / (1 - beta1**step)``)::

    d = -grad if maximize else grad
    param = param * decay  if decoupled  else  d = d + wd * param
    m = m + (1 - beta1) * (d - m)   (PyTorch's lerp: g - beta1 * (d - m) when 1 - beta1 >= 0.5)
    v = beta2 * v + ((1 - beta2) * d) * d;  vmax = max(vmax, v), v := vmax  (amsgrad)
    param = param + (neg_step * m) / (sqrt(v) / bc2s + eps)

The weight decay and the lerp are ``fma`` (PyTorch's lerp and add with alpha); ``+ (...) * d``
is fused in float (PyTorch's addcmul) and rounded twice in double (``__dmul_rn``/``__dadd_rn``:
the CPU backend has no wider type to fuse float64 in, and the two must agree).
"""

from __future__ import annotations

import cupy
import numpy

from .elementwise import WIDE_PREAMBLE

# v + s * d: fused for float (PyTorch's addcmul), two roundings for double (as the CPU backend)
_ADDCMUL_PREAMBLE = (
    WIDE_PREAMBLE
    + """
__device__ float ember_addcmul(float v, float s, float d) { return fmaf(s, d, v); }
__device__ double ember_addcmul(double v, double s, double d) { return __dadd_rn(v, __dmul_rn(s, d)); }
"""
)

__all__ = ["EMBER_ADAM", "EMBER_ADAM_AMSGRAD", "EMBER_SGD", "EMBER_SGD_MOMENTUM", "adam_update", "sgd_update"]

_SGD_GRAD = """
    typedef typename ember_wide<T>::type W;
    W d = maximize ? -(W)grad : (W)grad;
    if ((W)weight_decay != W(0)) d = fma((W)param, (W)weight_decay, d);
"""

EMBER_SGD = cupy.ElementwiseKernel(
    "T grad, T lr, T weight_decay, bool maximize",
    "T param",
    _SGD_GRAD + "param = (T)fma(d, -(W)lr, (W)param);",
    "ember_sgd",
    preamble=WIDE_PREAMBLE,
)

EMBER_SGD_MOMENTUM = cupy.ElementwiseKernel(
    "T grad, T lr, T momentum, T damp1, T weight_decay, bool nesterov, bool first, bool maximize",
    "T param, T buf",
    _SGD_GRAD
    + """
    W b = first ? d : fma(d, (W)damp1, (W)buf * (W)momentum);
    buf = (T)b;
    W step = nesterov ? fma(b, (W)momentum, d) : b;
    param = (T)fma(step, -(W)lr, (W)param);
    """,
    "ember_sgd_momentum",
    preamble=WIDE_PREAMBLE,
)

_ADAM_PARAMS = (
    "T grad, T wd, T decay, T w, T w1, T omb2, T beta2, T bc2s, T neg_step, T eps, "
    "bool decoupled, bool lerp_low, bool maximize"
)
_ADAM_HEAD = """
    typedef typename ember_wide<T>::type W;
    W d = maximize ? -(W)grad : (W)grad;
    W p = param;
    if (decoupled) { if ((W)wd != W(0)) p = p * (W)decay; }
    else if ((W)wd != W(0)) d = fma(p, (W)wd, d);
    W mi = exp_avg, diff = d - mi;
    mi = lerp_low ? fma(diff, (W)w, mi) : fma(-diff, (W)w1, d);
    W vi = ember_addcmul((W)exp_avg_sq * (W)beta2, d * (W)omb2, d);
    exp_avg = (T)mi;
    exp_avg_sq = (T)vi;
"""
_ADAM_TAIL = "param = (T)(p + (mi * (W)neg_step) / (sqrt(vi) / (W)bc2s + (W)eps));"

EMBER_ADAM = cupy.ElementwiseKernel(
    _ADAM_PARAMS,
    "T param, T exp_avg, T exp_avg_sq",
    _ADAM_HEAD + _ADAM_TAIL,
    "ember_adam",
    preamble=_ADDCMUL_PREAMBLE,
)

EMBER_ADAM_AMSGRAD = cupy.ElementwiseKernel(
    _ADAM_PARAMS,
    "T param, T exp_avg, T exp_avg_sq, T max_exp_avg_sq",
    _ADAM_HEAD
    + """
    W mx = max_exp_avg_sq;
    vi = (mx != mx || mx >= vi) ? mx : vi;
    max_exp_avg_sq = (T)vi;
    """
    + _ADAM_TAIL,
    "ember_adam_amsgrad",
    preamble=_ADDCMUL_PREAMBLE,
)


def sgd_update(
    param: cupy.ndarray,
    grad: cupy.ndarray,
    buf: cupy.ndarray | None,
    lr: float,
    momentum: float,
    dampening: float,
    weight_decay: float,
    nesterov: bool,
    maximize: bool,
    first_step: bool,
) -> None:
    """One SGD step on ``param`` and ``buf`` in place (see the module docstring)."""
    s = param.dtype.type
    if momentum == 0 or buf is None:
        EMBER_SGD(grad, s(lr), s(weight_decay), bool(maximize), param)
        return
    scalars = (s(lr), s(momentum), s(1 - dampening), s(weight_decay))
    EMBER_SGD_MOMENTUM(grad, *scalars, bool(nesterov), bool(first_step), bool(maximize), param, buf)


def adam_update(
    param: cupy.ndarray,
    grad: cupy.ndarray,
    exp_avg: cupy.ndarray,
    exp_avg_sq: cupy.ndarray,
    max_exp_avg_sq: cupy.ndarray | None,
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
    """One Adam / AdamW step in place (see the module docstring)."""
    s = param.dtype.type
    w = 1 - beta1
    bc2s = (1 - beta2**step) ** 0.5
    neg_step = -(lr / (1 - beta1**step))
    w1 = 1.0 - w if param.dtype == numpy.float64 else float(numpy.float32(1) - numpy.float32(w))
    values = (weight_decay, 1 - lr * weight_decay, w, w1, 1 - beta2, beta2, bc2s, neg_step, eps)
    args = (grad, *(s(v) for v in values), bool(decoupled), w < 0.5, bool(maximize))
    if amsgrad and max_exp_avg_sq is not None:
        EMBER_ADAM_AMSGRAD(*args, param, exp_avg, exp_avg_sq, max_exp_avg_sq)
    else:
        EMBER_ADAM(*args, param, exp_avg, exp_avg_sq)
