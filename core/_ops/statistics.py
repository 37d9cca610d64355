"""Statistics of data: histograms (1-D and D-dimensional), covariance and correlation, and
trapezoidal integration, composed from ember ops."""

from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any

from ember.backends import dtypes as D

from .._creation import linspace, zeros
from .._dtype import get_default_dtype, pt_name
from .._public import op, public
from .._tensor import Tensor
from ._common import norm_dim
from .diagonal import diagonal
from .search import searchsorted
from .select import where

PUBLIC = public(
    __name__,
    {
        "corrcoef": op(method=True),
        "cov": op(method=True),
        "cumulative_trapezoid": op(),
        "histogram": op(method=True),
        "histogramdd": op(),
        "trapezoid": op(),
        "trapz": op(),
    },
)
__all__ = [*PUBLIC]


_histogram_t = namedtuple("histogram", ["hist", "bin_edges"])

builtins_range = builtins.range  # ``range`` is a keyword argument name below


def histogram(
    input: Tensor, bins: Any = 100, *, range: Any = None, weight: Tensor | None = None, density: bool = False
) -> Any:
    """``(hist, bin_edges)`` as ``numpy.histogram``: equal bins over ``range``, or given edges."""

    if input.dtype.category < 2:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{pt_name(input.dtype)}'")
    x = input.reshape(-1).detach()
    if isinstance(bins, Tensor):
        edges = bins.to(input.dtype)
    else:
        lo, hi = (
            range
            if range is not None
            else ((float(x.amin().item()), float(x.amax().item())) if x.numel() else (0.0, 1.0))
        )
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = linspace(lo, hi, int(bins) + 1, dtype=input.dtype, device=input._device)
    n = edges.numel() - 1

    b = searchsorted(edges, x, right=True) - 1
    b = where(x == edges[-1], n - 1, b)
    inside = (b >= 0) & (b < n)
    w = weight.reshape(-1).to(input.dtype) if weight is not None else inside.to(input.dtype)
    w = where(inside, w, 0.0)
    hist = zeros(n, dtype=input.dtype, device=input._device).scatter_add(0, where(inside, b, 0), w)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return _histogram_t(hist, edges)


_histogramdd_t = namedtuple("histogramdd", ["hist", "bin_edges"])


def _edges(x: Tensor, bins: Any, rng: Any) -> Tensor:
    if isinstance(bins, Tensor):
        return bins.to(x.dtype)
    if rng is not None:
        lo, hi = rng
    elif x.numel():
        lo, hi = float(x.amin().item()), float(x.amax().item())
    else:
        lo, hi = 0.0, 1.0
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return linspace(lo, hi, int(bins) + 1, dtype=x.dtype, device=x._device)


def histogramdd(
    input: Tensor, bins: Any = 10, *, range: Any = None, weight: Tensor | None = None, density: bool = False
) -> Any:
    """A D-dimensional histogram of the rows of ``input`` (..., D): ``(hist, [edges per dim])``."""

    if input.dtype.category < 2:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{pt_name(input.dtype)}'")
    x = input.reshape(-1, input._shape[-1]).detach()
    nd = x._shape[1]
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * nd
    ranges = [None] * nd if range is None else [tuple(range[2 * k : 2 * k + 2]) for k in builtins_range(nd)]
    edges, sizes = [], []
    lin = zeros(x._shape[0], dtype=D.int64, device=x._device)
    inside = lin == 0
    for k in builtins_range(nd):
        col = x[:, k]
        e = _edges(col, per_dim[k], ranges[k])
        n = e.numel() - 1
        b = searchsorted(e, col, right=True) - 1
        b = where(col == e[-1], n - 1, b)
        inside = inside & (b >= 0) & (b < n)
        lin = lin * n + where((b >= 0) & (b < n), b, 0)
        edges.append(e)
        sizes.append(n)
    w = weight.reshape(-1).to(input.dtype) if weight is not None else inside.to(input.dtype)
    w = where(inside, w, 0.0).to(input.dtype)
    total = 1
    for n in sizes:
        total *= n
    hist = zeros(total, dtype=input.dtype, device=x._device).scatter_add(0, where(inside, lin, 0), w)
    hist = hist.reshape(tuple(sizes))
    if density:
        vol = None
        for k, e in enumerate(edges):
            shape = [1] * nd
            shape[k] = sizes[k]
            wk = (e[1:] - e[:-1]).reshape(shape)
            vol = wk if vol is None else vol * wk
        hist = hist / (hist.sum() * vol)
    return _histogramdd_t(hist, tuple(edges))


def cov(
    input: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None
) -> Tensor:
    """The covariance of the variables in rows of ``input`` (observations in columns)."""
    if input.ndim > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {input.ndim} dimensions"
        )
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if x.dtype.category < 2:
        x = x.to(get_default_dtype())
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    n = x._shape[1]
    norm: float | Tensor
    if w is None:
        wsum = float(n)
        avg = x.mean(1, keepdim=True)
        norm = wsum - correction
    else:
        wsum_t = w.sum()
        avg = (x * w).sum(1, keepdim=True) / wsum_t
        if correction == 0:
            norm = wsum_t
        elif aweights is None:
            norm = wsum_t - correction
        else:
            norm = wsum_t - correction * (w * aweights.to(x.dtype)).sum() / wsum_t
    xc = x - avg
    xw = xc * w if w is not None else xc
    c = xw @ xc.mT.conj_physical()
    if not isinstance(norm, Tensor) and norm <= 0:
        norm = 0.0
    out = c / norm
    return out.squeeze()  # as NumPy: one variable gives 0-d


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = diagonal(c).sqrt()
    out = c / d.unsqueeze(1) / d.unsqueeze(0)
    return out.clamp(-1, 1) if not out.dtype.is_complex else out


def _trap_pieces(y: Tensor, x: Any, dx: Any, d: int) -> Tensor:
    n = y._shape[d]
    ys = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    if isinstance(x, Tensor):
        xd = x.narrow(-1 if x.ndim == 1 else d, 1, n - 1) - x.narrow(-1 if x.ndim == 1 else d, 0, n - 1)
        if x.ndim == 1 and y.ndim > 1:
            shape = [1] * y.ndim
            shape[d] = n - 1
            xd = xd.reshape(shape)
        return ys * xd / 2
    return ys * ((1.0 if dx is None else dx) if x is None else x) / 2


def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim`` with sample points ``x`` or spacing ``dx``."""
    d = norm_dim(dim, y.ndim)
    if y._shape[d] == 0:
        return y.sum(d)
    return _trap_pieces(y, x, dx, d).sum(d)


def trapz(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """``trapezoid`` (the older name)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Running trapezoidal integrals along ``dim`` (one fewer element)."""
    d = norm_dim(dim, y.ndim)
    if y._shape[d] == 0:
        return y.clone()
    return _trap_pieces(y, x, dx, d).cumsum(d)
