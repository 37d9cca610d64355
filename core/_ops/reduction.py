"""Reductions (``keepdim=False`` by default, as PyTorch 0.2 made it), each with its rule:
sums, means, products, extremes, ``any``/``all``, variance, logsumexp and the nan-aware forms."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ember.backends import DType
from ember.backends import dtypes as D

from .. import _creation
from .._autocast_hook import autocast_op
from .._creation import arange
from .._dispatch import call, has_kernel
from .._dtype import get_default_dtype, pt_name
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel
from ._args import check_bool, check_tensor, invalid_combination, must_be
from ._common import broadcast_shape, norm_dim, norm_dims, numel, sum_to
from ._composite import NoRecord
from .join import cat
from .pointwise_binary import maximum, minimum
from .pointwise_unary import exp, isnan, log
from .select import where

PUBLIC = public(
    __name__,
    {
        "all": op(method=True),
        "amax": op(method=True),
        "amin": op(method=True),
        "aminmax": op(method=True),
        "any": op(method=True),
        "argmax": op(method=True),
        "argmin": op(method=True),
        "count_nonzero": op(method=True),
        "logsumexp": op(method=True),
        "max": op(method=True),
        "mean": op(method=True),
        "min": op(method=True),
        "nanmean": op(method=True),
        "nansum": op(method=True),
        "prod": op(method=True),
        "std": op(method=True),
        "std_mean": op(),
        "sum": op(method=True),
        "sum_to_size": op(method=True, function=False),
        "var": op(method=True),
        "var_mean": op(),
    },
)
__all__ = [*PUBLIC, "return_types"]


class return_types:
    """Named tuples returned by reductions with indices, as in ``torch.return_types``."""

    max = namedtuple("max", ["values", "indices"])
    min = namedtuple("min", ["values", "indices"])
    sort = namedtuple("sort", ["values", "indices"])
    topk = namedtuple("topk", ["values", "indices"])
    var_mean = namedtuple("var_mean", ["var", "mean"])
    std_mean = namedtuple("std_mean", ["std", "mean"])


def _out_shape(shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _unreduce(g: Tensor, shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> Tensor:
    """Broadcast a reduced gradient back to the input's shape."""
    if not keepdim and dims:
        g = g.reshape(_out_shape(shape, dims, True))
    return g.expand(shape)


def _reduce(op: str, x: Tensor, dims: tuple[int, ...], keepdim: bool, dtype: Any) -> Tensor:
    shape = _out_shape(x._shape, dims, keepdim)
    if not x._shape:  # a 0-d tensor reduces over nothing: a copy (cast always copies)
        return wrap(call(x._be, "cast", x._data, dtype), x._be, x._device, dtype, ())
    data = x._data if x.dtype is dtype else call(x._be, "cast", x._data, dtype)
    return wrap(call(x._be, op, data, dims, keepdim), x._be, x._device, dtype, shape)


def _dims(fn: str, input: Tensor, dim: Any, dtype: Any = None) -> tuple[int, ...]:
    """``norm_dims`` for the reductions PyTorch overloads (dims or names, with a dtype): a dim
    or dtype of the wrong type matches no overload, and PyTorch says so."""
    if dtype is not None and not isinstance(dtype, DType):
        raise invalid_combination(fn, (input,) if dim is None else (input, dim), {"dtype": dtype})
    try:
        return norm_dims(dim, input.ndim)
    except AttributeError:
        check_tensor(fn, "input", input, 1)  # not a Tensor: PyTorch's parser error
        raise
    except TypeError:
        raise invalid_combination(fn, (input, dim)) from None


def _sum_dtype(x: Tensor, dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    return D.int64 if x.dtype.category < 2 else x.dtype


def _sum_rule(n: Any, g: Tensor) -> tuple:
    shape, dims, keepdim, dtype = n.ctx
    return (_unreduce(g, shape, dims, keepdim).to(dtype),)


@autocast_op("sum")
def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum over ``dim`` (int or tuple; all dims when None). Integers sum in int64."""
    if keepdim is not False and keepdim is not True:
        check_bool("sum", "keepdim", keepdim)
    dims = _dims("sum", input, dim, dtype)
    out = _reduce("sum", input, dims, keepdim, _sum_dtype(input, dtype))
    if _grad.enabled and input._requires_grad:
        node = "SumBackward0" if dim is None else "SumBackward1"
        record(node, _sum_rule, out, (input,), (), (input._shape, dims, keepdim, input.dtype))
    return out


def _mean_rule(n: Any, g: Tensor) -> tuple:
    shape, dims, keepdim, count = n.ctx
    return (_unreduce(g, shape, dims, keepdim) / count,)


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Arithmetic mean over ``dim``; needs a floating or complex dtype."""
    _dims("mean", input, dim, dtype)
    dt = dtype or input.dtype
    if dt.category < 2:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {pt_name(input.dtype)}"
        )
    dims = norm_dims(dim, input.ndim)
    count = numel(tuple(input._shape[d] for d in dims if d < input.ndim))  # a scalar's dim 0 holds 1
    with NoRecord():
        out = _reduce("sum", input, dims, keepdim, dt) / (count if count else float("nan"))
    if _grad.enabled and input._requires_grad:
        node = "MeanBackward0" if dim is None else "MeanBackward1"
        record(node, _mean_rule, out, (input,), (), (input._shape, dims, keepdim, count))
    return out


def _prod_rule(n: Any, g: Tensor) -> tuple:
    x, _out, dims, keepdim = n.ctx

    # d out / d x_i is the product of the other elements: the product of those before it
    # times the product of those after it (exclusive scans), exact with zeros and
    # differentiable again (PyTorch's prod_safe_zeros_backward).
    if not dims or x.numel() == 0:
        return (_unreduce(g, x._shape, dims, keepdim) * (x * 0 + 1),)
    rest = [d for d in range(x.ndim) if d not in dims]
    order = rest + list(dims)
    moved = x.permute(order)
    lead = moved.shape[: len(rest)]
    flat = moved.reshape(*lead, -1)
    ones = flat.narrow(-1, 0, 1) * 0 + 1
    before = cat([ones, flat.narrow(-1, 0, flat.shape[-1] - 1)], -1).cumprod(-1)
    rev = flat.flip(-1)
    after = cat([ones, rev.narrow(-1, 0, rev.shape[-1] - 1)], -1).cumprod(-1).flip(-1)
    others = (before * after).reshape(moved.shape).permute(_inverse(order))
    return (_unreduce(g, x._shape, dims, keepdim) * others,)


def _inverse(order: list[int]) -> list[int]:
    inv = [0] * len(order)
    for i, d in enumerate(order):
        inv[d] = i
    return inv


@autocast_op("prod")
def prod(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Product over ``dim`` (one int, or all dims when None)."""
    dims = _dims("prod", input, dim, dtype)
    out = _reduce("prod", input, dims, keepdim, _sum_dtype(input, dtype))
    if _grad.enabled and input._requires_grad:
        record(
            "ProdBackward0" if dim is None else "ProdBackward1",
            _prod_rule,
            out,
            (input,),
            (),
            (input, out, dims, keepdim),
        )
    return out


def _is_all(dim: Any) -> bool:
    return dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)


def _check_nonempty(name: str, x: Tensor, dims: tuple[int, ...], whole: bool) -> None:
    if whole and x.numel() == 0:
        if name.startswith("arg"):  # PyTorch words (and types) the arg-reductions' error apart
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for d in dims:
        if x._shape and x._shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _check_given_dims(name: str, x: Tensor, dim: Any) -> None:
    """amax/amin name the first empty dim as the user wrote it (-1 stays -1), unlike max/argmax."""
    for d in (dim,) if isinstance(dim, int) else tuple(dim):
        if x._shape and x._shape[norm_dim(d, x.ndim)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _extreme_rule(n: Any, g: Tensor) -> tuple:
    x, out, dims, keepdim = n.ctx
    full = _unreduce(out, x._shape, dims, keepdim)
    mask = (x == full).to(g.dtype)
    count = mask.sum(dims, keepdim=True) if dims else mask
    return (_unreduce(g, x._shape, dims, keepdim) * mask / count,)


def _extreme(op: str, node: str, input: Tensor, dim: Any, keepdim: bool, name: str = "") -> Tensor:
    if input.dtype.is_complex:
        kernel = {"amax": "max_values_cpu", "amin": "min_values_cpu"}[op] if not name else f"{name}_all"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{pt_name(input.dtype)}'")
    if dim is not None and not isinstance(dim, (int, tuple, list)):
        raise must_be(name or op, "dim", "tuple of ints", dim, 2)
    if not _is_all(dim):  # before norm_dims: PyTorch reports an empty dim ahead of a repeated one
        _check_given_dims(name or op, input, dim)
    dims = norm_dims(dim, input.ndim)
    _check_nonempty(name or op, input, dims, _is_all(dim))
    if op == "amin" and not has_kernel(input._be, "amin"):
        with NoRecord():
            out = _flip_order(_reduce("amax", _flip_order(input), dims, keepdim, input.dtype))
    else:
        out = _reduce(op, input, dims, keepdim, input.dtype)
    if _grad.enabled and input._requires_grad:
        record(node, _extreme_rule, out, (input,), (), (input, out, dims, keepdim))
    return out


def _flip_order(x: Tensor) -> Tensor:
    """An order-reversing bijection: -x for floats, ~x for integers, not-x for bool."""
    if x.dtype.category >= 2:
        return -x
    return ~x


def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Maximum over ``dim`` (all dims by default); NaN propagates."""
    return _extreme("amax", "AmaxBackward0", input, dim, keepdim)


def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Minimum over ``dim`` (all dims by default); NaN propagates."""
    return _extreme("amin", "AminBackward0", input, dim, keepdim)


def _arg(op: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    if input.dtype.is_complex:
        raise RuntimeError(f"{op}(): does not support complex input")
    if dim is None:
        _check_nonempty(op, input, (), True)
        d = None
        shape: tuple[int, ...] = (1,) * input.ndim if keepdim else ()
    else:
        d = norm_dim(dim, input.ndim, op, "dim", 2)
        _check_nonempty(op, input, (d,) if input._shape else (), False)
        shape = _out_shape(input._shape, (d,), keepdim) if input._shape else ()
        if not input._shape:
            d = None
    if not has_kernel(input._be, op):  # argmin without a kernel: argmax of an order-reversed copy
        with NoRecord():
            return _arg("argmax", _flip_order(input), dim, keepdim)
    return wrap(call(input._be, op, input._data, d, keepdim), input._be, input._device, D.int64, shape)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the first maximum (over the flattened tensor when ``dim`` is None)."""
    _no_bool("argmax", input)
    return _arg("argmax", input, dim, keepdim)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the first minimum."""
    _no_bool("argmin", input)
    return _arg("argmin", input, dim, keepdim)


def _no_bool(op: str, input: Tensor) -> None:
    """PyTorch's argmax/argmin refuse bool (its max(dim) on bool, which picks indices too, does not)."""
    if input.dtype is D.bool_:
        raise RuntimeError(f"{op}(): does not support bool input")


def _indexed_rule(n: Any, g: Tensor) -> tuple:
    x, idx, d, keepdim = n.ctx

    if not keepdim and x._shape:
        g, idx = g.unsqueeze(d), idx.unsqueeze(d)
    return (_creation.zeros_like(x, dtype=g.dtype).scatter(d, idx, g),)


def _max_min(which: str, input: Tensor, dim: Any, keepdim: bool, other: Any) -> Any:
    if isinstance(dim, Tensor):
        return (maximum if which == "max" else minimum)(input, dim)
    if other is not None:
        return (maximum if which == "max" else minimum)(input, other)
    op = "amax" if which == "max" else "amin"
    if dim is None:
        return _extreme(op, "MaxBackward1" if which == "max" else "MinBackward1", input, None, False, which)
    d = norm_dim(dim, input.ndim)
    _check_nonempty(which, input, (d,), False)
    with NoRecord():
        values = (amax if which == "max" else amin)(input, dim, keepdim)
        indices = _arg("argmax" if which == "max" else "argmin", input, dim, keepdim)
    if _grad.enabled and input._requires_grad:
        d = norm_dim(dim, input.ndim)
        record(
            "MaxBackward0" if which == "max" else "MinBackward0",
            _indexed_rule,
            values,
            (input,),
            (),
            (input, indices, d, keepdim),
        )
    return getattr(return_types, which)(values, indices)


def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    """Whole-tensor max, ``(values, indices)`` along ``dim``, or elementwise with a tensor."""
    return _max_min("max", input, dim, keepdim, other)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    """Whole-tensor min, ``(values, indices)`` along ``dim``, or elementwise with a tensor."""
    return _max_min("min", input, dim, keepdim, other)


def _to_bool(x: Tensor) -> Tensor:
    return x if x.dtype is D.bool_ else x != 0


def _any(b: Tensor, dim: Any, keepdim: bool) -> Tensor:
    if b.numel() == 0:
        return _reduce("sum", b, norm_dims(dim, b.ndim), keepdim, D.int64) != 0
    return _reduce("amax", b, norm_dims(dim, b.ndim), keepdim, D.bool_)


def _like_uint8(input: Tensor, out: Tensor) -> Tensor:
    # PyTorch keeps uint8 for any/all of uint8 tensors (a legacy of masks being uint8).
    return out.to(D.uint8) if input.dtype is D.uint8 else out


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """True where any element over ``dim`` is non-zero."""
    return _like_uint8(input, _any(_to_bool(input), dim, keepdim))


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """True where every element over ``dim`` is non-zero."""
    return _like_uint8(input, ~_any(~_to_bool(input), dim, keepdim))


def _correction(unbiased: Any, correction: Any) -> float:
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def var(
    input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None
) -> Tensor:
    """Variance with Bessel's ``correction`` (1 by default) over ``dim``."""
    if isinstance(unbiased, (int, tuple, list)) and not isinstance(unbiased, bool):
        dim, unbiased = unbiased, None  # var(x, 0) positional dim, as PyTorch accepts
    c = _correction(unbiased, correction)
    if input.dtype.category < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = norm_dims(dim, input.ndim)
    n = numel(tuple(input._shape[d] for d in dims if d < input.ndim))
    centred = input - mean(input, dims, keepdim=True)
    sq = (centred * centred.conj_physical()).real if input.dtype.is_complex else centred * centred
    denom = n - c
    return relabel(sum(sq, dims, keepdim) / (denom if denom > 0 else float("nan")), "VarBackward0")


def std(
    input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None
) -> Tensor:
    """Standard deviation: ``sqrt(var(...))``; its gradient is 0 where the spread is 0 (PyTorch's
    ``std_backward``), not ``0 * inf = nan``."""
    return relabel(_spread_sqrt(var(input, dim, unbiased, keepdim, correction=correction)), "StdBackward0")


def _spread_sqrt(v: Tensor) -> Tensor:
    """``sqrt(v)`` whose gradient is 0 where ``v == 0`` (PyTorch's ``std_backward``)."""
    zero = v == 0
    return v.masked_fill(zero, 1.0).sqrt().masked_fill(zero, 0.0)


def var_mean(
    input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None
) -> Any:
    """``(var, mean)`` over ``dim`` in one call."""
    if isinstance(unbiased, (int, tuple, list)) and not isinstance(unbiased, bool):
        dim, unbiased = unbiased, None
    v = var(input, dim, unbiased, keepdim, correction=correction)
    return return_types.var_mean(v, mean(input, dim, keepdim))


def std_mean(
    input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None
) -> Any:
    v, m = var_mean(input, dim, unbiased, keepdim, correction=correction)
    return return_types.std_mean(_spread_sqrt(v), m)


_RETURN_TYPES: dict[str, Any] = {
    n: namedtuple(n, ["values", "indices"])
    for n in ("median", "nanmedian", "kthvalue", "mode", "cummax", "cummin")
}


def _ret(name: str, values: Tensor, indices: Tensor) -> Any:
    return _RETURN_TYPES[name](values, indices)


aminmax_t = namedtuple("aminmax", ["min", "max"])


def _float(x: Tensor) -> Tensor:
    return x.to(get_default_dtype()) if x.dtype.category < 2 else x


def _arange(n: int, like: Tensor) -> Tensor:
    return arange(n, device=like._device)


@autocast_op("logsumexp")
def logsumexp(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input), dim))`` computed stably (shifted by the max).

    Example: ``ember.logsumexp(ember.tensor([1000., 1000.]), 0)`` is ``1000 + log 2``.
    """
    x = _float(input)
    dims = norm_dims(dim, x.ndim)
    if x.numel() == 0:
        return log(exp(x).sum(dims, keepdim=keepdim))
    with NoRecord():
        r = x.real if x.dtype.is_complex else x
        m = r.amax(dims, keepdim=True) if x.ndim else r
        m = where(m.abs() == float("inf"), 0.0, m)
    out = log(exp(x - m).sum(dims, keepdim=True)) + m
    return out.squeeze(dims) if not keepdim and dims else out


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum treating NaN as zero."""
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    x = where(isnan(input), 0, input) if input.dtype.category >= 2 else input
    return x.sum(dim, keepdim, dtype=dtype)


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Mean of the non-NaN elements."""
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if input.dtype.category < 2:
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got {input.dtype.name}"
        )
    count = (~isnan(input)).sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


# -- counting ------------------------------------------------------------------------------------
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """Number of non-zero elements over ``dim``."""
    return (input != 0).sum(dim)


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
        mn, mx = input.amin(), input.amax()
        if keepdim:
            mn, mx = mn.reshape((1,) * input.ndim), mx.reshape((1,) * input.ndim)
        return aminmax_t(mn, mx)
    return aminmax_t(input.amin(dim, keepdim), input.amax(dim, keepdim))


def sum_to_size(input: Tensor, *size: Any) -> Tensor:
    """Sum broadcast dimensions away so the result has shape ``size``."""

    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    try:
        ok = broadcast_shape(shape, input._shape) == input._shape
    except RuntimeError:
        ok = False
    if not ok:
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(input._shape)}}}.")

    return sum_to(input, shape)
