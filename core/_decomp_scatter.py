"""Decomposition of ``scatter_reduce`` (every reduction) into primitives.

Each target slot along ``dim`` is compared with every index (a one-hot mask of shape
``index.shape + (x.shape[dim],)``), the masked sources are reduced over the index axis with
the matching reduction primitive and combined with ``x`` where a slot was hit. The mask
costs index.numel() * x.shape[dim] elements: right for the moderate sizes it is used at;
a backend scattering huge tensors registers a kernel.
"""

from __future__ import annotations

import math
from typing import Any

from ember.backends import dtypes as D

from ._creation import arange
from ._ops._composite import decomposition
from ._ops.pointwise_binary import maximum, minimum
from ._ops.select import where
from ._tensor import Tensor

__all__ = ["scatter_reduce"]


def _limit(dtype: Any, highest: bool) -> float:
    """The identity of amin (``highest``) or amax for ``dtype``."""
    if dtype.category >= 2:
        return math.inf if highest else -math.inf
    bits = dtype.bits
    if not dtype.is_signed:
        return (1 << bits) - 1 if highest else 0
    return (1 << (bits - 1)) - 1 if highest else -(1 << (bits - 1))


def _reduced(vals: Tensor, hit_mask: Tensor, reduce: str, dtype: Any) -> Tensor:
    """Reduce the masked (..., n, m) values over n (axis -2)."""
    if reduce in ("sum", "mean"):
        return where(hit_mask, vals, 0).sum(-2).to(dtype)
    if reduce == "prod":
        return where(hit_mask, vals, 1).prod(-2).to(dtype)
    fill = _limit(dtype, highest=reduce == "amin")
    masked = where(hit_mask, vals, fill)
    return masked.amax(-2) if reduce == "amax" else masked.amin(-2)


def _combine(xr: Tensor, red: Tensor, count: Tensor, reduce: str, include_self: bool) -> Tensor:
    if reduce == "mean":
        total = xr + red if include_self else red
        n = (count + 1 if include_self else count).clamp(min=1)
        return (total // n if xr.dtype.category < 2 else total / n).to(xr.dtype)
    if not include_self:
        return red
    if reduce == "sum":
        return xr + red
    if reduce == "prod":
        return xr * red
    return maximum(xr, red) if reduce == "amax" else minimum(xr, red)


@decomposition("scatter_reduce")
def scatter_reduce(
    x: Tensor, index: Tensor, src: Tensor, dim: int, reduce: str, include_self: bool
) -> Tensor:
    if x.ndim == 0:
        one = scatter_reduce(x.reshape(1), index.reshape(1), src.reshape(1), 0, reduce, include_self)
        return one.reshape(())
    out = x.clone()
    if index.numel() == 0:
        return out
    shape = index._shape
    region = tuple(slice(None) if i == dim else slice(0, s) for i, s in enumerate(shape))
    src_t = src[tuple(slice(0, s) for s in shape)].movedim(dim, -1)
    xr = x[region].movedim(dim, -1)
    m = x._shape[dim]
    onehot = index.movedim(dim, -1).unsqueeze(-1) == arange(m, device=x._device)
    hit = onehot.any(-2)
    count = onehot.to(D.int64).sum(-2)
    red = _reduced(src_t.unsqueeze(-1), onehot, reduce, x.dtype)
    done = where(hit, _combine(xr, red, count, reduce, include_self), xr)
    out[region] = done.movedim(-1, dim)
    return out
