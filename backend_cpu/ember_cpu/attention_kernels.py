"""Fused scaled-dot-product attention: one kernel call forward, one backward.

The frontend's decomposition is a dozen ops, each a Python call and a temporary; here the
scores live in one buffer that is scaled, masked and softmax-ed in place (ufuncs with
``out=``), and each product is one batched BLAS ``matmul``. Half types compute in float32.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from .dtypes import HALF

__all__ = ["sdpa", "sdpa_backward"]

_F32 = np.dtype(np.float32)


@lru_cache(maxsize=64)
def _above_diagonal(lq: int, lk: int) -> np.ndarray:
    """True where key j lies after query i (PyTorch's top-left aligned causal mask hides it)."""
    return np.triu(np.ones((lq, lk), dtype=bool), 1)


def _wide(*xs: Any) -> tuple[Any, ...]:
    return tuple(None if x is None else x.astype(_F32) for x in xs)


def _softmax_(s: np.ndarray) -> np.ndarray:
    """Softmax over the last axis in place; a row with every score -inf becomes zeros."""
    if not s.shape[-1]:  # no keys: empty rows (the output is then all zeros, as PyTorch's)
        return s
    m = s.max(axis=-1, keepdims=True)
    # -inf rows: subtract a finite number so that exp gives 0, not NaN (NaN still propagates)
    np.maximum(m, np.finfo(s.dtype).min, out=m)
    np.subtract(s, m, out=s)
    np.exp(s, out=s)
    z = s.sum(axis=-1, keepdims=True)
    np.maximum(z, 1.0, out=z)  # a row holding its max sums to >= 1; an empty row to 0
    np.divide(s, z, out=s)
    return s


def sdpa(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None,
    drop: np.ndarray | None,
    scale: float,
    is_causal: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """``(softmax(q kᵀ·scale + mask) · drop) @ v`` and the softmax (see ``ops.py``)."""
    dtype = q.dtype
    if dtype in HALF:
        q, k, v, drop = _wide(q, k, v, drop)
        if mask is not None and mask.dtype != np.bool_:
            mask = mask.astype(_F32)
    s = np.matmul(q, np.swapaxes(k, -1, -2))
    np.multiply(s, scale, out=s)
    if mask is not None:
        if mask.dtype == np.bool_:
            np.copyto(s, -np.inf, where=~mask)
        else:
            np.add(s, mask, out=s)
    if is_causal:
        np.copyto(s, -np.inf, where=_above_diagonal(s.shape[-2], s.shape[-1]))
    w = _softmax_(s)
    out = np.matmul(w if drop is None else w * drop, v)
    if dtype in HALF:
        return out.astype(dtype), w.astype(dtype)
    return out, w


def sdpa_backward(
    g: np.ndarray,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    w: np.ndarray,
    drop: np.ndarray | None,
    scale: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dq, dk, dv)``: dS = W ∘ (dP − rowsum(dP ∘ W)) with dP = (g vᵀ) ∘ drop."""
    dtype = q.dtype
    if dtype in HALF:
        g, q, k, v, w, drop = _wide(g, q, k, v, w, drop)
    wd = w if drop is None else w * drop
    dv = np.matmul(np.swapaxes(wd, -1, -2), g)
    dp = np.matmul(g, np.swapaxes(v, -1, -2))
    if drop is not None:
        np.multiply(dp, drop, out=dp)
    row = np.einsum("...ij,...ij->...i", dp, w)[..., None]
    np.subtract(dp, row, out=dp)
    np.multiply(dp, w, out=dp)
    np.multiply(dp, scale, out=dp)
    dq = np.matmul(dp, k)
    dk = np.matmul(np.swapaxes(dp, -1, -2), q)
    if dtype in HALF:
        return dq.astype(dtype), dk.astype(dtype), dv.astype(dtype)
    return dq, dk, dv
