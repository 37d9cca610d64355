"""``layer_norm`` and its backward as one kernel call each (PyTorch's native_layer_norm and
native_layer_norm_backward): the rows are a (R, C) view and every step is one ufunc call over
it, instead of a dozen frontend ops with broadcast reductions. The frontend casts half inputs
to float32 first, so these see float32/float64 (any floating dtype works)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["LAYER_NORM_KERNELS", "layer_norm", "layer_norm_backward"]


def _rows(x: np.ndarray, k: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """``x`` as (rows, normalized elements) and the shape of its per-row statistics."""
    lead = x.shape[: x.ndim - k]
    rows, n = int(np.prod(lead, dtype=np.int64)), int(np.prod(x.shape[x.ndim - k :], dtype=np.int64))
    return x.reshape(rows, n), lead + (1,) * k


def layer_norm(
    x: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, k: int, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(out, mean, rstd): ``c = x - mean``, ``rstd = 1/sqrt(mean(c*c) + eps)``, ``c*rstd*w + b``."""
    x2, stat = _rows(x, k)
    n = x2.shape[1]
    mean = np.add.reduce(x2, axis=1, keepdims=True)
    mean /= n
    out = np.subtract(x2, mean)
    var = np.add.reduce(np.multiply(out, out), axis=1, keepdims=True)
    var /= n
    var += eps
    rstd = np.sqrt(var, out=var)
    np.divide(1, rstd, out=rstd)
    out *= rstd
    if w is not None:
        out *= w.reshape(-1)
    if b is not None:
        out += b.reshape(-1)
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
    dw = None if w is None else np.add.reduce(np.multiply(g2, xhat), axis=0).reshape(w.shape)
    db = np.add.reduce(g2, axis=0).reshape(x.shape[x.ndim - k :])
    m2 = np.add.reduce(t, axis=1, keepdims=True)
    m2 /= n
    m1 = np.add.reduce(gw, axis=1, keepdims=True)
    m1 /= n
    dx = np.subtract(gw, m1)
    dx -= np.multiply(xhat, m2, out=t)
    dx *= r
    return dx.reshape(x.shape), dw, db.astype(g.dtype, copy=False)


LAYER_NORM_KERNELS: dict[str, Callable[..., Any]] = {
    "layer_norm": layer_norm,
    "layer_norm_backward": layer_norm_backward,
}
