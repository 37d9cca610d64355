"""Fused optimizer updates: ``sgd_update`` and ``adam_update``, in place with NumPy ``out=``,
and their multi-tensor forms (``*_foreach``: a parameter group in one call).

Each kernel follows PyTorch's single-tensor implementation operation by operation (same
order, same float32 roundings of the Python scalars), so a fused step gives the numbers
the per-op formula in ``ember.optim`` gives. Temporaries: at most two arrays of the
parameter's shape, and none for the plain SGD step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .fma import add_scaled
from .hostmem import cache

__all__ = ["OPTIM_KERNELS", "adam_update", "adam_update_foreach", "sgd_update", "sgd_update_foreach"]


def _effective_grad(param: np.ndarray, grad: np.ndarray, weight_decay: float, maximize: bool) -> np.ndarray:
    """``g = -grad if maximize``; ``g = g + weight_decay * param`` (rounded once, as PyTorch's
    ``grad.add(param, alpha=weight_decay)``): a new array only if needed."""
    g = np.negative(grad) if maximize else grad
    return _fma(g, param, weight_decay) if weight_decay != 0 else g


def sgd_update(
    param: np.ndarray,
    grad: np.ndarray,
    buf: np.ndarray | None,
    lr: float,
    momentum: float,
    dampening: float,
    weight_decay: float,
    nesterov: bool,
    maximize: bool,
    first_step: bool,
) -> None:
    r"""SGD step in place on ``param`` and ``buf`` (PyTorch's algorithm)::

    g = -grad if maximize else grad
    g = g + weight_decay * param                    if weight_decay != 0
    buf = g (first_step)  else  buf = momentum * buf + (1 - dampening) * g
    g = g + momentum * buf if nesterov else buf     if momentum != 0
    param = param + (-lr) * g

    Every ``a + s * b`` is rounded once, as PyTorch's ``add(..., alpha=s)`` (a fused multiply-add).
    """
    g = np.negative(grad) if maximize else grad
    if weight_decay != 0:
        g = _fma(g, param, weight_decay)
    if momentum != 0 and buf is not None:
        if first_step:
            np.copyto(buf, g)
        else:
            np.multiply(buf, momentum, out=buf)
            _fma(buf, g, 1 - dampening, out=buf)
        g = _fma(g, buf, momentum) if nesterov else buf
    _fma(param, g, -lr, out=param)


def _fma(x: np.ndarray, y: np.ndarray, s: float, out: np.ndarray | None = None) -> np.ndarray:
    """``x + s * y`` rounded once (float32/float64; other dtypes multiply, then add)."""
    if x.dtype in _FUSED:
        return add_scaled(x, y, s, out=out)
    prod = np.multiply(y, s)
    return np.add(x, prod, out=prod if out is None else out)


_FUSED = (np.dtype(np.float32), np.dtype(np.float64))


def _scratch(like: np.ndarray) -> np.ndarray:
    """A temporary of ``like``'s shape and dtype; large ones come from the buffer cache."""
    return cache.empty(like.shape, like.dtype)


def _lerp_(m: np.ndarray, g: np.ndarray, weight: float, scratch: np.ndarray) -> None:
    """``m = m + weight * (g - m)`` for ``weight < 0.5``, else ``g - (1 - weight) * (g - m)``,
    each a fused multiply-add as PyTorch's lerp (``1 - weight`` at the arrays' precision)."""
    diff = np.subtract(g, m, out=scratch)
    if weight < 0.5:
        _fma(m, diff, weight, out=m)
    else:
        one = m.dtype.type(1)
        _fma(g, diff, -float(one - m.dtype.type(weight)), out=m)


def _addcmul_(v: np.ndarray, t: np.ndarray, g: np.ndarray) -> None:
    """``v = v + t * g`` rounded once, as PyTorch's ``addcmul_`` (a fused multiply-add): float32
    through float64, where the product is exact; other dtypes multiply, then add."""
    if v.dtype == _FUSED[0]:
        wide = np.multiply(t, g, dtype=np.float64)
        wide += v
        np.copyto(v, wide, casting="same_kind")
    else:
        np.add(v, np.multiply(t, g, out=t), out=v)


def adam_update(
    param: np.ndarray,
    grad: np.ndarray,
    exp_avg: np.ndarray,
    exp_avg_sq: np.ndarray,
    max_exp_avg_sq: np.ndarray | None,
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
    r"""Adam / AdamW step ``step`` (1, 2, ...) in place (PyTorch's single-tensor algorithm)::

    g = -grad if maximize else grad
    param = param * (1 - lr * weight_decay)           if decoupled (AdamW)
    g = g + weight_decay * param                      elif weight_decay != 0
    m = lerp(m, g, 1 - beta1)
    v = beta2 * v + ((1 - beta2) * g) * g
    vmax = max(vmax, v); v := vmax                    if amsgrad
    denom = sqrt(v) / (1 - beta2**step) ** 0.5 + eps
    param = param + ((-lr / (1 - beta1**step)) * m) / denom

    The lerp, the ``+ weight_decay * param`` and the ``+ (...) * g`` are rounded once (PyTorch's
    fused multiply-adds; the last in float64 for float32, else multiplied, then added).
    """
    if decoupled:
        if weight_decay != 0:
            np.multiply(param, 1 - lr * weight_decay, out=param)
        g = _effective_grad(param, grad, 0, maximize)
    else:
        g = _effective_grad(param, grad, weight_decay, maximize)
    scratch = _scratch(param)
    _lerp_(exp_avg, g, 1 - beta1, scratch)
    np.multiply(exp_avg_sq, beta2, out=exp_avg_sq)
    _addcmul_(exp_avg_sq, np.multiply(g, 1 - beta2, out=scratch), g)
    v = exp_avg_sq
    if amsgrad and max_exp_avg_sq is not None:
        v = np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
    denom = np.sqrt(v, out=scratch)
    np.divide(denom, (1 - beta2**step) ** 0.5, out=denom)
    np.add(denom, eps, out=denom)
    upd = np.multiply(exp_avg, -(lr / (1 - beta1**step)), out=_scratch(exp_avg))
    np.add(param, np.divide(upd, denom, out=upd), out=param)


def sgd_update_foreach(
    params: list[np.ndarray],
    grads: list[np.ndarray],
    bufs: list[np.ndarray | None],
    lr: float,
    momentum: float,
    dampening: float,
    weight_decay: float,
    nesterov: bool,
    maximize: bool,
    first_steps: tuple[bool, ...],
) -> None:
    """``sgd_update`` on every tensor of a parameter group: one call from the optimizer."""
    for p, g, b, first in zip(params, grads, bufs, first_steps):
        sgd_update(p, g, b, lr, momentum, dampening, weight_decay, nesterov, maximize, first)


def adam_update_foreach(
    params: list[np.ndarray],
    grads: list[np.ndarray],
    exp_avgs: list[np.ndarray],
    exp_avg_sqs: list[np.ndarray],
    max_exp_avg_sqs: list[np.ndarray | None],
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    amsgrad: bool,
    maximize: bool,
    steps: tuple[float, ...],
    decoupled: bool,
) -> None:
    """``adam_update`` on every tensor of a parameter group: one call from the optimizer."""
    for p, g, m, v, vmax, step in zip(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps):
        adam_update(p, g, m, v, vmax, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, step, decoupled)


OPTIM_KERNELS: dict[str, Callable[..., Any]] = {
    "sgd_update": sgd_update,
    "adam_update": adam_update,
    "sgd_update_foreach": sgd_update_foreach,
    "adam_update_foreach": adam_update_foreach,
}
