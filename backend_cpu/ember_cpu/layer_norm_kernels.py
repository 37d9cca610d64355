"""``layer_norm`` and its backward as one kernel call each (PyTorch's native_layer_norm and
native_layer_norm_backward): the rows are a (R, C) view and every step is one ufunc call over
it, instead of a dozen frontend ops with broadcast reductions. The frontend casts half inputs
to float32 first, so these see float32/float64 (any floating dtype works)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["LAYER_NORM_KERNELS", "layer_norm", "layer_norm_backward"]


def _rows(x: np.ndarray, k: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """``x`` as (rows, normalized elements) and the shape of its per-row statistics."""
    lead = x.shape[: x.ndim - k]
    return x.reshape(math.prod(lead), math.prod(x.shape[x.ndim - k :])), lead + (1,) * k


_BLAS = (np.dtype(np.float32), np.dtype(np.float64))


def _row_sums(a: np.ndarray, ones: np.ndarray | None) -> np.ndarray:
    """(R, 1) sums of (R, C) ``a``: a BLAS matrix-vector product where it can (NumPy's ``sum``
    over a short last axis costs several times more), else ``sum``."""
    return a.sum(axis=1, keepdims=True) if ones is None else np.matmul(a, ones)


def _ones(a: np.ndarray) -> np.ndarray | None:
    return np.ones((a.shape[1], 1), a.dtype) if a.dtype in _BLAS else None


def _col_sums(a: np.ndarray) -> np.ndarray:
    """(C,) sums of (R, C) ``a`` over its rows."""
    if a.dtype in _BLAS:
        return np.matmul(np.ones(a.shape[0], a.dtype), a)
    return a.sum(axis=0)


def layer_norm(
    x: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, k: int, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(out, mean, rstd): ``c = x - mean``, ``rstd = 1/sqrt(mean(c*c) + eps)``, ``c*rstd*w + b``."""
    x2, stat = _rows(x, k)
    n, ones = x2.shape[1], _ones(x2)
    mean = _row_sums(x2, ones)
    mean /= n
    out = np.subtract(x2, mean)
    var = _row_sums(np.multiply(out, out), ones)
    var /= n
    var += eps
    rstd = np.sqrt(var, out=var)
    np.divide(1, rstd, out=rstd)
    out *= rstd
    if w is not None:
        out *= w if w.ndim == 1 else w.reshape(-1)
    if b is not None:
        out += b if b.ndim == 1 else b.reshape(-1)
    return out.reshape(x.shape), mean.reshape(stat), rstd.reshape(stat)


def layer_norm_backward(
    g: np.ndarray, x: np.ndarray, w: np.ndarray | None, mean: np.ndarray, rstd: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """(dx, dw, db): ``dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))``, ``gw = g * w``."""
    x2, _ = _rows(x, k)
    g2 = g.reshape(x2.shape)
    r = rstd.reshape(-1, 1)
    xhat = np.subtract(x2, mean.reshape(-1, 1))
    xhat *= r
    n = x2.shape[1]
    gw = g2 if w is None else np.multiply(g2, w.reshape(-1))
    t = np.multiply(gw, xhat)
    dw = None if w is None else _col_sums(np.multiply(g2, xhat)).reshape(w.shape)
    db = _col_sums(g2).reshape(x.shape[x.ndim - k :])
    ones = _ones(t)
    m2 = _row_sums(t, ones)
    m2 /= n
    m1 = _row_sums(gw, ones)
    m1 /= n
    dx = np.subtract(gw, m1)
    dx -= np.multiply(xhat, m2, out=t)
    dx *= r
    return dx.reshape(x.shape), dw, db


LAYER_NORM_KERNELS: dict[str, Callable[..., Any]] = {
    "layer_norm": layer_norm,
    "layer_norm_backward": layer_norm_backward,
}
