"""Reductions and scans beyond the primitives: logsumexp, nan-aware sums, order statistics
(median, quantile, kthvalue, mode), running products and extremes, unique, histograms and
binary search. Order statistics sort (a differentiable primitive) and pick, so their
gradients flow to the picked elements.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ember.backends import dtypes as D

from .._dispatch import has_kernel
from .._dtype import get_default_dtype
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from ._common import norm_dim, norm_dims
from ._composite import NoRecord, not_implemented_for, run_composite
from .select import where
from .unary import exp, floor, isnan, log

__all__ = [
    "aminmax",
    "count_nonzero",
    "cummax",
    "cummin",
    "cumprod",
    "kthvalue",
    "logcumsumexp",
    "logsumexp",
    "median",
    "mode",
    "nanmean",
    "nanmedian",
    "nanquantile",
    "nansum",
    "quantile",
]

_RETURN_TYPES = {
    n: namedtuple(n, ["values", "indices"])
    for n in ("median", "nanmedian", "kthvalue", "mode", "cummax", "cummin")
}


def _ret(name: str, values: Tensor, indices: Tensor) -> Any:
    return _RETURN_TYPES[name](values, indices)


aminmax_t = namedtuple("aminmax", ["min", "max"])


def _float(x: Tensor) -> Tensor:
    return x.to(get_default_dtype()) if x.dtype.category < 2 else x


def _arange(n: int, like: Tensor) -> Tensor:
    from .._creation import arange

    return arange(n, device=like._device)


def logsumexp(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input), dim))`` computed stably (shifted by the max).

    Example: ``ember.logsumexp(ember.tensor([1000., 1000.]), 0)`` is ``1000 + log 2``.
    """
    x = _float(input)
    dims = norm_dims(dim, x.ndim)
    if x.numel() == 0:
        return log(exp(x).sum(dims, keepdim=keepdim))  # type: ignore[attr-defined]
    with NoRecord():
        r = x.real if x.dtype.is_complex else x  # type: ignore[attr-defined]
        m = r.amax(dims, keepdim=True) if x.ndim else r  # type: ignore[attr-defined]
        m = where(m.abs() == float("inf"), 0.0, m)  # type: ignore[attr-defined]
    out = log(exp(x - m).sum(dims, keepdim=True)) + m  # type: ignore[attr-defined]
    return out.squeeze(dims) if not keepdim and dims else out  # type: ignore[attr-defined]


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum treating NaN as zero."""
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    x = where(isnan(input), 0, input) if input.dtype.category >= 2 else input
    return x.sum(dim, keepdim, dtype=dtype)  # type: ignore[attr-defined]


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Mean of the non-NaN elements."""
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if input.dtype.category < 2:
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got {input.dtype.name}"
        )
    count = (~isnan(input)).sum(dim, keepdim)  # type: ignore[attr-defined, operator]
    return nansum(input, dim, keepdim, dtype=dtype) / count


# -- order statistics ------------------------------------------------------------------------
def _sorted_rows(input: Tensor, dim: Any) -> tuple[Tensor, Tensor, int, bool]:
    """(values sorted along d, their indices, d, whole) with NaN last."""
    whole = dim is None
    x = input.reshape(-1) if whole else (input.reshape(1) if input.ndim == 0 else input)
    d = 0 if whole else norm_dim(dim, x.ndim)
    s = x.sort(d)  # type: ignore[attr-defined]
    return s.values, s.indices, d, whole


def _pick(vals: Tensor, idx: Tensor, k: Tensor, d: int) -> tuple[Tensor, Tensor]:
    kk = k.unsqueeze(d)  # type: ignore[attr-defined]
    return vals.gather(d, kk).squeeze(d), idx.gather(d, kk).squeeze(d)  # type: ignore[attr-defined]


def _nan_as(dtype: Any) -> float:
    """The median of nothing is NaN; PyTorch casts it to ints as x86 does (int32/64 minimum, else 0)."""
    if dtype.category >= 2 or dtype is D.bool_:
        return float("nan")
    return {D.int64: -(2**63), D.int32: -(2**31)}.get(dtype, 0)


def _median(input: Tensor, dim: Any, keepdim: bool, ignore_nan: bool) -> Any:
    not_implemented_for("median_out", input, "complex")
    if dim is None and input.numel() == 0:
        from .._creation import full

        return full((), _nan_as(input.dtype), dtype=input.dtype, device=input._device)
    if dim is not None and input.ndim and input._shape[norm_dim(dim, input.ndim)] == 0:
        raise IndexError(
            f"median(): Expected reduction dim {norm_dim(dim, input.ndim)} to have non-zero size."
        )
    # PyTorch checks emptiness first (an empty bool median is True), then the kernel's dtype
    not_implemented_for("median_cpu" if dim is None else "median_out", input, "bool")
    vals, idx, d, whole = _sorted_rows(input, dim)
    n = vals._shape[d]
    if input.dtype.category >= 2:
        nans = isnan(vals).sum(d)  # type: ignore[attr-defined]
    else:
        nans = vals.sum(d) * 0  # type: ignore[attr-defined]
    if ignore_nan:
        valid = n - nans
        k = where(valid > 0, (valid - 1) // 2, 0)
    else:
        k = where(nans > 0, n - nans, (n - 1) // 2)
    v, i = _pick(vals, idx, k.to(D.int64), d)
    if whole:
        return v
    if keepdim and input.ndim:
        v, i = v.unsqueeze(d), i.unsqueeze(d)  # type: ignore[attr-defined]
    return _ret("nanmedian" if ignore_nan else "median", v, i)


def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """The lower median (NaN if any element is NaN); with ``dim``, ``(values, indices)``."""
    return _median(input, dim, keepdim, False)


def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """``median`` ignoring NaN."""
    return _median(input, dim, keepdim, True)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest element along ``dim`` and its index."""
    not_implemented_for("kthvalue_cpu", input, "bool", "complex")
    vals, idx, d, _ = _sorted_rows(input, dim)
    n = vals._shape[d]
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    v, i = vals.select(d, k - 1), idx.select(d, k - 1)  # type: ignore[attr-defined]
    if keepdim and input.ndim:
        v, i = v.unsqueeze(d), i.unsqueeze(d)  # type: ignore[attr-defined]
    return _ret("kthvalue", v, i)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest among ties) and an index of it."""
    x = input.reshape(1) if input.ndim == 0 else input
    d = norm_dim(dim, x.ndim)
    if x._shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    with NoRecord():
        s = x.sort(d).values.movedim(d, -1)  # type: ignore[attr-defined]
        n = s._shape[-1]
        pos = _arange(n, x)
        starts = s[..., 1:] != s[..., :-1]
        from .join import cat

        starts = cat([(pos[:1] == 0).expand(s._shape[:-1] + (1,)), starts], -1)  # type: ignore[attr-defined]
        run_start = cummax(where(starts, pos, 0), -1).values
        counts = pos - run_start + 1  # length of the run so far
        best = counts.argmax(-1, keepdim=True)  # first max: the smallest value among ties
        value = s.gather(-1, best)  # type: ignore[attr-defined]
    xm = x.movedim(d, -1)  # type: ignore[attr-defined]
    with NoRecord():
        hits = (xm == value).to(D.int64) * (_arange(xm._shape[-1], x) + 1)
        index = hits.amax(-1) - 1  # type: ignore[attr-defined]
    v = xm.gather(-1, index.unsqueeze(-1)).squeeze(-1)  # type: ignore[attr-defined]
    if keepdim and input.ndim:
        v, index = v.unsqueeze(d), index.unsqueeze(d)  # type: ignore[attr-defined]
    return _ret("mode", v, index)


_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    from .._creation import tensor

    name = "nanquantile" if ignore_nan else "quantile"
    if interpolation not in _INTERP:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but got {interpolation}"
        )
    if input.dtype.category < 2:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, Tensor)
    qt = (
        tensor([float(q)], dtype=input.dtype, device=input._device)
        if scalar_q
        else q.reshape(-1).to(input.dtype)
    )
    if qt.numel() and (float(qt.amin().item()) < 0 or float(qt.amax().item()) > 1):  # type: ignore[attr-defined]
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    vals, _, d, whole = _sorted_rows(input, dim)
    v = vals.movedim(d, -1).unsqueeze(0)  # type: ignore[attr-defined]
    n = v._shape[-1]
    nans = isnan(v).sum(-1, keepdim=True)  # type: ignore[attr-defined]
    valid = (n - nans) if ignore_nan else (nans * 0 + n)
    qs = qt.reshape((-1,) + (1,) * (v.ndim - 1))
    pos = qs * (valid - 1).clamp(min=0).to(input.dtype)  # type: ignore[attr-defined]
    if interpolation == "lower":
        pos = floor(pos)
    elif interpolation == "higher":
        pos = -floor(-pos)
    elif interpolation == "nearest":
        pos = pos.round()  # type: ignore[attr-defined]
    lo_i = floor(pos).to(D.int64)
    hi_i = (-floor(-pos)).to(D.int64).clamp(max=n - 1)  # type: ignore[attr-defined]
    shape = (qt.numel(),) + v._shape[1:-1] + (1,)
    vl = v.expand(shape[:-1] + (n,)).gather(-1, lo_i.expand(shape))  # type: ignore[attr-defined]
    vh = v.expand(shape[:-1] + (n,)).gather(-1, hi_i.expand(shape))  # type: ignore[attr-defined]
    frac = 0.5 if interpolation == "midpoint" else pos - floor(pos)
    from .math_extra import lerp

    out = lerp(vl, vh, frac)  # PyTorch's two-sided lerp: inf neighbours give NaN as there
    bad = (nans > 0) if not ignore_nan else (valid == 0)
    out = where(bad.expand(shape), float("nan"), out).squeeze(-1)  # type: ignore[attr-defined]
    if whole:
        out = out.reshape((qt.numel(),) + ((1,) * input.ndim if keepdim else ()))
    elif keepdim:
        out = out.unsqueeze(d + 1)  # type: ignore[attr-defined]
    return out.squeeze(0) if scalar_q else out  # type: ignore[attr-defined]


def quantile(
    input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Tensor:
    """The ``q``-quantiles along ``dim`` (flattened when None), interpolating between ranks.

    ``q`` is a number or a 1-D tensor (its values become the first output dim);
    ``interpolation`` is linear, lower, higher, midpoint or nearest. Any NaN gives NaN.
    Example: ``ember.quantile(ember.tensor([1., 2., 3., 4.]), 0.5)`` is ``2.5``.
    """
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(
    input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Tensor:
    """``quantile`` ignoring NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


# -- scans -------------------------------------------------------------------------------------
def _cumprod_rule(n: Any, g: Tensor) -> tuple:
    x, out, d = n.ctx
    if x.dtype.is_complex:  # conjugate Wirtinger: the same formula on conjugates
        x, out = x.conj(), out.conj()  # type: ignore[attr-defined]
    safe = where(x == 0, 1.0, x)
    rev = (g * out).flip(d).cumsum(d).flip(d)  # type: ignore[attr-defined]
    # Exact where x has no zeros; at zeros, the prefix product over the others.
    if bool((x == 0).any().item()):  # type: ignore[attr-defined]
        return (_cumprod_grad_slow(x, g, d),)
    return (rev / safe,)


def _cumprod_grad_slow(x: Tensor, g: Tensor, d: int) -> Tensor:
    """d/dx_k sum_i g_i prod_{j<=i} x_j, by leaving x_k out (O(n^2), exact with zeros)."""
    from .join import stack

    n = x._shape[d]
    cols = []
    for k in range(n):
        mask = _arange(n, x) == k
        shape = [1] * x.ndim
        shape[d] = n
        xk = where(mask.reshape(shape), 1.0, x)
        prod = cumprod(xk, d)
        after = (_arange(n, x) >= k).reshape(shape).to(g.dtype)
        cols.append((g * prod * after).sum(d))  # type: ignore[attr-defined]
    return stack(cols, d)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Inclusive prefix products along ``dim``; integers accumulate in int64."""
    d = norm_dim(dim, input.ndim)
    dt = dtype or (D.int64 if input.dtype.category < 2 else input.dtype)
    x = input.to(dt)
    if x.ndim == 0:
        return x.clone()
    if not has_kernel(x._be, "cumprod"):
        with NoRecord():
            out = _scan(x, d, lambda a, b: a * b, 1)[0]
    else:
        out = run_composite("cumprod", (x,), (d,), dt)
    if _grad.enabled and x.requires_grad:
        record("CumprodBackward0", _cumprod_rule, out, (x,), (), (x, out, d))
    return out


def _shifted(t: Tensor, d: int, s: int, fill: Any) -> Tensor:
    """``t`` moved ``s`` places along ``d``, the first ``s`` filled with ``fill``."""
    from .._creation import full
    from .join import cat

    n = t._shape[d]
    head = full(t._shape[:d] + (min(s, n),) + t._shape[d + 1 :], fill, dtype=t.dtype, device=t._device)
    return cat([head, t.narrow(d, 0, n - min(s, n))], d) if n > s else head  # type: ignore[attr-defined]


def _scan(x: Tensor, d: int, combine: Any, identity: Any) -> tuple[Tensor]:
    """Inclusive scan by doubling (Hillis-Steele): log2(n) steps of primitives, any backend."""
    out, s, n = x, 1, x._shape[d]
    while s < n:
        out = combine(_shifted(out, d, s, identity), out)
        s *= 2
    return (out,)


def _cum_extreme_scan(x: Tensor, d: int, is_max: bool) -> tuple[Tensor, Tensor]:
    """Running max/min with the index of its last occurrence (NaN sticks), by doubling."""
    from .unary import isnan

    n = x._shape[d]
    shape = [1] * x.ndim
    shape[d] = n
    v, i = x, _arange(n, x).reshape(shape).expand(x._shape)  # type: ignore[attr-defined]
    worst: Any = float("-inf") if is_max else float("inf")
    if x.dtype is D.bool_:
        worst = not is_max
    elif x.dtype.category == 1:
        worst = _int_limit(x.dtype, is_max)
    step = 1
    while step < n:
        ev, ei = _shifted(v, d, step, worst), _shifted(i, d, step, -1)
        better = ev > v if is_max else ev < v
        if x.dtype.category >= 2:
            better = better | (isnan(ev) & ~isnan(v))  # type: ignore[operator]
        v, i = where(better, ev, v), where(better, ei, i)
        step *= 2
    return v, i


def _int_limit(dt: Any, is_max: bool) -> int:
    bits = dt.bits
    if not dt.is_signed:
        return 0 if is_max else (1 << bits) - 1
    return -(1 << (bits - 1)) if is_max else (1 << (bits - 1)) - 1


def _cum_extreme_rule(n: Any, g: Tensor) -> tuple:
    shape, d, idx = n.ctx
    from .._creation import zeros

    return (zeros(shape, dtype=g.dtype, device=g._device).scatter_add(d, idx, g),)  # type: ignore[attr-defined]


def _cum_extreme(name: str, input: Tensor, dim: int) -> Any:
    not_implemented_for(name + "_cpu", input, "complex")
    d = norm_dim(dim, input.ndim)
    x = input.reshape(1) if input.ndim == 0 else input
    if not has_kernel(x._be, name):
        with NoRecord():
            v, i = _cum_extreme_scan(x, d, name == "cummax")
    else:
        v, i = run_composite(name, (x,), (d,), (x.dtype, D.int64))
    v, i = v.reshape(input._shape), i.reshape(input._shape)
    if _grad.enabled and input.requires_grad:
        record(
            "CummaxBackward0" if name == "cummax" else "CumminBackward0",
            _cum_extreme_rule,
            v,
            (input,),
            (),
            (input._shape, d, i),
        )
    return _ret(name, v, i)


def cummax(input: Tensor, dim: int) -> Any:
    """Running maximum along ``dim`` and the index where it was (last) attained."""
    return _cum_extreme("cummax", input, dim)


def cummin(input: Tensor, dim: int) -> Any:
    """Running minimum along ``dim`` and the index where it was (last) attained."""
    return _cum_extreme("cummin", input, dim)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))`` computed stably."""
    not_implemented_for("logcumsumexp_out_cpu", input, "int")
    x = _float(input)
    d = norm_dim(dim, x.ndim)
    if x.ndim == 0 or x.numel() == 0:
        return x.clone()
    with NoRecord():
        r = x.real if x.dtype.is_complex else x  # type: ignore[attr-defined]
        m = r.amax(d, keepdim=True)  # type: ignore[attr-defined]
        m = where(m.abs() == float("inf"), 0.0, m)  # type: ignore[attr-defined]
    return log(exp(x - m).cumsum(d)) + m  # type: ignore[attr-defined]


# -- counting ------------------------------------------------------------------------------------
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """Number of non-zero elements over ``dim``."""
    return (input != 0).sum(dim)  # type: ignore[attr-defined]


def _check_aminmax_nonempty(input: Tensor, dim: Any) -> None:
    """PyTorch's own aminmax wording (not amin's) for an empty reduction."""
    if dim is None and input.numel() == 0:
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
        )
    d = norm_dim(dim, input.ndim) if dim is not None and input.ndim else None
    if d is not None and input.shape[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")


def aminmax(input: Tensor, *, dim: Any = None, keepdim: bool = False) -> Any:
    """``(min, max)`` over ``dim`` (all elements when None)."""
    _check_aminmax_nonempty(input, dim)
    if dim is None:
        mn, mx = input.amin(), input.amax()  # type: ignore[attr-defined]
        if keepdim:
            mn, mx = mn.reshape((1,) * input.ndim), mx.reshape((1,) * input.ndim)
        return aminmax_t(mn, mx)
    return aminmax_t(input.amin(dim, keepdim), input.amax(dim, keepdim))  # type: ignore[attr-defined]
