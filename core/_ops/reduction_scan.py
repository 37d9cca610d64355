"""Scans: running sums, products, extremes and ``logcumsumexp``, each with its rule."""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._creation import full, zeros
from .._dispatch import call, has_kernel
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from ._common import norm_dim
from ._composite import NoRecord, not_implemented_for, run_composite
from .join import cat, stack
from .pointwise_unary import exp, isnan, log
from .reduction import _arange, _float, _ret, _sum_dtype
from .select import where

PUBLIC = public(
    __name__,
    {
        "cummax": op(method=True),
        "cummin": op(method=True),
        "cumprod": op(method=True, inplace=True),
        "cumsum": op(method=True),
        "logcumsumexp": op(method=True),
    },
)
__all__ = [*PUBLIC]


def _cumsum_rule(n: Any, g: Tensor) -> tuple:
    (d,) = n.ctx
    total = g.sum(d, keepdim=True)
    return (total - cumsum(g, d) + g,)


@autocast_op("cumsum")
def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Inclusive prefix sums along ``dim``; integers accumulate in int64."""
    d = norm_dim(dim, input.ndim, "cumsum", "dim", 2)
    dt = _sum_dtype(input, dtype)
    x = input if input.dtype is dt else input.to(dt)
    if not x._shape:
        return x.clone()
    out = wrap(call(x._be, "cumsum", x._data, d), x._be, x._device, dt, x._shape)
    if _grad.enabled and input.requires_grad:
        record("CumsumBackward0", _cumsum_rule, out, (x,), (), (d,))
    return out


# -- scans -------------------------------------------------------------------------------------
def _cumprod_rule(n: Any, g: Tensor) -> tuple:
    x, out, d = n.ctx
    if x.dtype.is_complex:  # conjugate Wirtinger: the same formula on conjugates
        x, out = x.conj_physical(), out.conj_physical()
    safe = where(x == 0, 1.0, x)
    rev = (g * out).flip(d).cumsum(d).flip(d)
    # Exact where x has no zeros; at zeros, the prefix product over the others.
    if bool((x == 0).any().item()):
        return (_cumprod_grad_slow(x, g, d),)
    return (rev / safe,)


def _cumprod_grad_slow(x: Tensor, g: Tensor, d: int) -> Tensor:
    """d/dx_k sum_i g_i prod_{j<=i} x_j, by leaving x_k out (O(n^2), exact with zeros)."""

    n = x._shape[d]
    cols = []
    for k in range(n):
        mask = _arange(n, x) == k
        shape = [1] * x.ndim
        shape[d] = n
        xk = where(mask.reshape(shape), 1.0, x)
        prod = cumprod(xk, d)
        after = (_arange(n, x) >= k).reshape(shape).to(g.dtype)
        cols.append((g * prod * after).sum(d))
    return stack(cols, d)


@autocast_op("cumprod")
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

    n = t._shape[d]
    head = full(t._shape[:d] + (min(s, n),) + t._shape[d + 1 :], fill, dtype=t.dtype, device=t._device)
    return cat([head, t.narrow(d, 0, n - min(s, n))], d) if n > s else head


def _scan(x: Tensor, d: int, combine: Any, identity: Any) -> tuple[Tensor]:
    """Inclusive scan by doubling (Hillis-Steele): log2(n) steps of primitives, any backend."""
    out, s, n = x, 1, x._shape[d]
    while s < n:
        out = combine(_shifted(out, d, s, identity), out)
        s *= 2
    return (out,)


def _cum_extreme_scan(x: Tensor, d: int, is_max: bool) -> tuple[Tensor, Tensor]:
    """Running max/min with the index of its last occurrence (NaN sticks), by doubling."""

    n = x._shape[d]
    shape = [1] * x.ndim
    shape[d] = n
    v, i = x, _arange(n, x).reshape(shape).expand(x._shape)
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
            better = better | (isnan(ev) & ~isnan(v))
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

    return (zeros(shape, dtype=g.dtype, device=g._device).scatter_add(d, idx, g),)


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
        r = x.real if x.dtype.is_complex else x
        m = r.amax(d, keepdim=True)
        m = where(m.abs() == float("inf"), 0.0, m)
    return log(exp(x - m).cumsum(d)) + m
