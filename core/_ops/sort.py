"""Sorting and order statistics: ``sort`` (a stable primitive), ``argsort``, ``topk``, median,
quantile, kthvalue and mode. Order statistics sort and pick, so their gradients flow to the
picked elements."""

from __future__ import annotations

import math
from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._creation import full, tensor, zeros
from .._dispatch import call
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel
from ._common import norm_dim
from ._composite import NoRecord, not_implemented_for
from .join import cat
from .pointwise_special import lerp
from .pointwise_unary import floor, isnan
from .reduction import _arange, _ret, return_types
from .reduction_scan import cummax
from .select import where

PUBLIC = public(
    __name__,
    {
        "argsort": op(method=True),
        "kthvalue": op(method=True),
        "median": op(method=True),
        "mode": op(method=True),
        "msort": op(method=True),
        "nanmedian": op(method=True),
        "nanquantile": op(method=True),
        "quantile": op(method=True),
        "sort": op(method=True),
        "topk": op(method=True),
    },
)
__all__ = [*PUBLIC]


def _sort_rule(n: Any, g: Tensor) -> tuple:
    shape, d, idx = n.ctx

    return (zeros(shape, dtype=g.dtype, device=g._device).scatter(d, idx, g),)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """``(values, indices)`` sorted along ``dim``; equal elements keep their order; NaN is largest."""
    if input.dtype.is_complex:
        raise RuntimeError("sort(): complex tensors are not supported")
    if input.ndim == 0:
        norm_dim(dim, 0)  # a scalar still takes only -1 or 0
        return return_types.sort(
            input.clone(),
            wrap(
                call(input._be, "full", (), 0, D.int64, input._device.index or 0),
                input._be,
                input._device,
                D.int64,
                (),
            ),
        )
    d = norm_dim(dim, input.ndim)
    vals, idx = call(input._be, "sort", input._data, d, bool(descending))
    values = wrap(vals, input._be, input._device, input.dtype, input._shape)
    indices = wrap(idx, input._be, input._device, D.int64, input._shape)
    if _grad.enabled and input.requires_grad:
        record("SortBackward0", _sort_rule, values, (input,), (), (input._shape, d, indices))
    return return_types.sort(values, indices)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """Indices that sort ``input`` along ``dim``."""
    return sort(input, dim, descending, stable).indices


def msort(input: Tensor) -> Tensor:
    return sort(input, 0).values


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    d = norm_dim(dim, input.ndim)
    size = input._shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if input.dtype is D.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    values, indices = sort(input, d, descending=largest)
    if input.ndim == 0:
        return return_types.topk(values, indices)
    return return_types.topk(relabel(values.narrow(d, 0, k), "TopkBackward0"), indices.narrow(d, 0, k))


# -- order statistics ------------------------------------------------------------------------
def _sorted_rows(input: Tensor, dim: Any) -> tuple[Tensor, Tensor, int, bool]:
    """(values sorted along d, their indices, d, whole) with NaN last."""
    whole = dim is None
    x = input.reshape(-1) if whole else (input.reshape(1) if input.ndim == 0 else input)
    d = 0 if whole else norm_dim(dim, x.ndim)
    s = x.sort(d)
    return s.values, s.indices, d, whole


def _pick(vals: Tensor, idx: Tensor, k: Tensor, d: int) -> tuple[Tensor, Tensor]:
    kk = k.unsqueeze(d)
    return vals.gather(d, kk).squeeze(d), idx.gather(d, kk).squeeze(d)


def _nan_as(dtype: Any) -> float:
    """The median of nothing is NaN; PyTorch casts it to ints as x86 does (int32/64 minimum, else 0)."""
    if dtype.category >= 2 or dtype is D.bool_:
        return float("nan")
    return {D.int64: -(2**63), D.int32: -(2**31)}.get(dtype, 0)


def _median(input: Tensor, dim: Any, keepdim: bool, ignore_nan: bool) -> Any:
    not_implemented_for("median_out", input, "complex")
    if dim is None and input.numel() == 0:
        out = full((), _nan_as(input.dtype), dtype=input.dtype, device=input._device)
        if _grad.enabled and input.requires_grad:  # still a node: the (empty) input's gradient is empty
            out = relabel(input.sum() * 0 + out, "NanmedianBackward0" if ignore_nan else "MedianBackward0")  # type: ignore[attr-defined]
        return out
    if dim is not None and input.ndim and input._shape[norm_dim(dim, input.ndim)] == 0:
        raise IndexError(
            f"median(): Expected reduction dim {norm_dim(dim, input.ndim)} to have non-zero size."
        )
    # PyTorch checks emptiness first (an empty bool median is True), then the kernel's dtype
    not_implemented_for("median_cpu" if dim is None else "median_out", input, "bool")
    vals, idx, d, whole = _sorted_rows(input, dim)
    n = vals._shape[d]
    if input.dtype.category >= 2:
        nans = isnan(vals).sum(d)
    else:
        nans = vals.sum(d) * 0
    if ignore_nan:
        valid = n - nans
        k = where(valid > 0, (valid - 1) // 2, 0)
    else:
        k = where(nans > 0, n - nans, (n - 1) // 2)
    v, i = _pick(vals, idx, k.to(D.int64), d)
    if whole:
        return v
    if keepdim and input.ndim:
        v, i = v.unsqueeze(d), i.unsqueeze(d)
    return _ret("nanmedian" if ignore_nan else "median", v, i)


def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """The lower median (NaN if any element is NaN); with ``dim``, ``(values, indices)``."""
    return _median(input, dim, keepdim, False)


def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """``median`` ignoring NaN."""
    return _median(input, dim, keepdim, True)


def _gt_or_nan(a: float, b: float) -> bool:
    return (math.isnan(a) and not math.isnan(b)) or a > b


def _quickselect(row: list, k: int) -> int:
    """The index PyTorch's CPU kthvalue reports: its median-of-three quickselect over a copy of
    the row (NaN largest), which among equal values picks whichever the partitioning leaves at
    position ``k``, not the first."""
    a, ix = list(row), list(range(len(row)))

    def swap(p: int, q: int) -> None:
        a[p], a[q] = a[q], a[p]
        ix[p], ix[q] = ix[q], ix[p]

    lo, hi = 0, len(a) - 1
    while hi > lo:
        if hi == lo + 1:
            if _gt_or_nan(a[lo], a[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        for p, q in ((lo + 1, hi), (lo, hi), (lo + 1, lo)):
            if _gt_or_nan(a[p], a[q]):
                swap(p, q)
        i, j, piv = lo + 1, hi, a[lo]
        while True:
            i += 1
            while _gt_or_nan(piv, a[i]):
                i += 1
            j -= 1
            while _gt_or_nan(a[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return ix[k]


def _tie_indices(x: Tensor, v: Tensor, i: Tensor, k: int, d: int) -> Tensor | None:
    """``i`` with the rows where the k-th value occurs more than once re-picked as PyTorch does
    (None when no row has a tie: the sorted index is then the only one)."""
    with NoRecord():
        xm = x.movedim(d, -1)
        same = xm == v.unsqueeze(-1)
        if x.dtype.category >= 2:
            same = same | (isnan(xm) & isnan(v).unsqueeze(-1))
        ties = same.sum(-1).reshape(-1) > 1
        if not bool(ties.any()):
            return None
        rows = xm.reshape(-1, xm._shape[-1])
        flat = i.reshape(-1).clone()
        at = ties.nonzero().reshape(-1)
        picked = [_quickselect(row, k - 1) for row in rows[at].tolist()]
        flat[at] = tensor(picked, dtype=D.int64, device=x._device)
        return flat.reshape(i._shape)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest element along ``dim`` and its index."""
    not_implemented_for("kthvalue_cpu", input, "bool", "complex")
    vals, idx, d, _ = _sorted_rows(input, dim)
    n = vals._shape[d]
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    v, i = vals.select(d, k - 1), idx.select(d, k - 1)
    fixed = _tie_indices(input.reshape(1) if input.ndim == 0 else input, v, i, k, d)
    if fixed is not None:  # the value stays, the element it is read from (and its gradient) moves
        i = fixed
        v = (
            input.reshape(1).gather(0, i.reshape(1)).reshape(())
            if input.ndim == 0
            else input.gather(d, i.unsqueeze(d)).squeeze(d)
        )
    if keepdim and input.ndim:
        v, i = v.unsqueeze(d), i.unsqueeze(d)
    return _ret("kthvalue", v, i)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest among ties) and an index of it."""
    x = input.reshape(1) if input.ndim == 0 else input
    d = norm_dim(dim, x.ndim)
    if x._shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    with NoRecord():
        s = x.sort(d).values.movedim(d, -1)
        n = s._shape[-1]
        pos = _arange(n, x)
        starts = s[..., 1:] != s[..., :-1]

        starts = cat([(pos[:1] == 0).expand(s._shape[:-1] + (1,)), starts], -1)
        run_start = cummax(where(starts, pos, 0), -1).values
        counts = pos - run_start + 1  # length of the run so far
        best = counts.argmax(-1, keepdim=True)  # first max: the smallest value among ties
        value = s.gather(-1, best)
    xm = x.movedim(d, -1)
    with NoRecord():
        hits = (xm == value).to(D.int64) * (_arange(xm._shape[-1], x) + 1)
        index = hits.amax(-1) - 1
    v = xm.gather(-1, index.unsqueeze(-1)).squeeze(-1)
    if keepdim and input.ndim:
        v, index = v.unsqueeze(d), index.unsqueeze(d)
    return _ret("mode", v, index)


_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    name = "nanquantile" if ignore_nan else "quantile"
    if interpolation not in _INTERP:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but got {interpolation}"
        )
    if input.dtype.category < 2:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q and not 0 <= q <= 1:  # a Python q is checked first, by quantile's one name
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    if not scalar_q and q.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    qt = (
        tensor([float(q)], dtype=input.dtype, device=input._device)
        if scalar_q
        else q.reshape(-1).to(input.dtype)
    )
    if qt.numel() and (float(qt.amin().item()) < 0 or float(qt.amax().item()) > 1):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    vals, _, d, whole = _sorted_rows(input, dim)
    v = vals.movedim(d, -1).unsqueeze(0)
    n = v._shape[-1]
    nans = isnan(v).sum(-1, keepdim=True)
    valid = (n - nans) if ignore_nan else (nans * 0 + n)
    qs = qt.reshape((-1,) + (1,) * (v.ndim - 1))
    pos = qs * (valid - 1).clamp(min=0).to(input.dtype)
    if interpolation == "lower":
        pos = floor(pos)
    elif interpolation == "higher":
        pos = -floor(-pos)
    elif interpolation == "nearest":
        pos = pos.round()
    lo_i = floor(pos).to(D.int64)
    hi_i = (-floor(-pos)).to(D.int64).clamp(max=n - 1)
    shape = (qt.numel(),) + v._shape[1:-1] + (1,)
    vl = v.expand(shape[:-1] + (n,)).gather(-1, lo_i.expand(shape))
    vh = v.expand(shape[:-1] + (n,)).gather(-1, hi_i.expand(shape))
    frac = 0.5 if interpolation == "midpoint" else pos - floor(pos)

    out = lerp(vl, vh, frac)  # PyTorch's two-sided lerp: inf neighbours give NaN as there
    bad = (nans > 0) if not ignore_nan else (valid == 0)
    out = where(bad.expand(shape), float("nan"), out).squeeze(-1)
    if whole:
        out = out.reshape((qt.numel(),) + ((1,) * input.ndim if keepdim else ()))
    elif keepdim:
        out = out.unsqueeze(d + 1)
    return out.squeeze(0) if scalar_q else out


@autocast_op("quantile")
def quantile(
    input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Tensor:
    """The ``q``-quantiles along ``dim`` (flattened when None), interpolating between ranks.

    ``q`` is a number or a 1-D tensor (its values become the first output dim);
    ``interpolation`` is linear, lower, higher, midpoint or nearest. Any NaN gives NaN.
    Example: ``ember.quantile(ember.tensor([1., 2., 3., 4.]), 0.5)`` is ``2.5``.
    """
    return _quantile(input, q, dim, keepdim, interpolation, False)


@autocast_op("nanquantile")
def nanquantile(
    input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Tensor:
    """``quantile`` ignoring NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, True)
