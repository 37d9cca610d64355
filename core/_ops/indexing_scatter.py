"""Indexing ops built on ``index_put``, ``gather`` and ``nonzero``: ``index_add``/``copy``/
``fill``/``reduce``, masked selects, ``take``, ``put``, slice scatters and ``scatter_reduce``.

``scatter_reduce`` is a composite op: a backend may register a kernel; otherwise ``sum``
decomposes into ``scatter`` and the other reductions run on the CPU backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._creation import full, ones, ones_like, tensor, zeros_like
from .._dispatch import has_kernel
from .._dtype import pt_name as _pt
from .._public import op, public
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from ._common import broadcast_shape, norm_dim, same_device
from ._composite import NoRecord, run_composite
from .gather_scatter import (
    INDEX_DTYPES,
    Bounded,
    checked_index,
    first_outside,
    gather_checked,
    scatter_checked,
)
from .indexing import getitem, index_put, select_rows
from .search import nonzero
from .select import where

PUBLIC = public(
    __name__,
    {
        "argwhere": op(method=True),
        "index_add": op(method=True, inplace=True),
        "index_copy": op(method=True, inplace=True),
        "index_fill": op(method=True, inplace=True),
        "index_reduce": op(method=True, inplace=True),
        "masked_scatter": op(method=True, inplace=True),
        "masked_select": op(method=True),
        "put": op(method=True, inplace=True),
        "scatter_reduce": op(method=True, inplace=True),
        "select_scatter": op(method=True),
        "slice_scatter": op(method=True),
        "take": op(method=True),
        "take_along_dim": op(method=True),
    },
)
__all__ = [*PUBLIC, "scatter_multiply"]


def _key(d: int, index: Tensor) -> Bounded:
    return Bounded({d: index})


# -- the index_* family: PyTorch 2.13's rules differ per op, one small function each --------
def _index_dtype(name: str, index: Any) -> None:
    """``index_add_``/``index_reduce_`` take int32 or int64."""
    if not isinstance(index, Tensor) or index.dtype not in INDEX_DTYPES:
        got = _pt(index.dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: {got}")


def _long_only(name: str, index: Any) -> None:
    """``index_copy_`` takes int64 only."""
    if not isinstance(index, Tensor) or index.dtype is not D.int64:
        got = _pt(index.dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {got}")


def _fill_dtype(name: str, index: Any) -> None:
    """``index_fill_`` takes int64 only, and says so with an IndexError."""
    if not isinstance(index, Tensor) or index.dtype is not D.int64:
        raise IndexError(f"{name}(): Expected dtype int64 for index.")


def _vector(name: str, input: Tensor, dim: int, index: Tensor) -> tuple[Tensor, int, Tensor]:
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    same_device(input, index, name)
    x = input.reshape(1) if input.ndim == 0 else input
    return x, norm_dim(dim, x.ndim), index.reshape(-1)


def _add_bounds(x: Tensor, d: int, index: Tensor) -> None:
    """``index_add_``: PyTorch's scatter_add path (int64, outer or inner dim of a 2-d+ tensor)
    names the index; its other path only says it is out of range."""
    bad = first_outside(index, 0, x._shape[d])
    if bad is None:
        return
    if index.dtype is D.int64 and x.ndim > 1 and d in (0, x.ndim - 1):
        raise RuntimeError(f"index {bad[1]} is out of bounds for dimension {d} with size {x._shape[d]}")
    raise IndexError("index out of range in self")


def _copy_bounds(x: Tensor, d: int, index: Tensor) -> None:
    bad = first_outside(index, 0, x._shape[d])
    if bad is not None:
        raise IndexError(
            f"index_copy_(): index {bad[1]} is out of bounds for dimension {d} with size {x._shape[d]}"
        )


def _reduce_bounds(x: Tensor, d: int, index: Tensor) -> None:
    if first_outside(index, 0, x._shape[d]) is not None:
        raise IndexError("index out of range in self")


def _fill_wrapped(x: Tensor, d: int, index: Tensor) -> Tensor:
    """``index_fill_`` alone of the family counts negative indices from the end."""
    size = x._shape[d]
    bad = first_outside(index, -size, size)
    if bad is not None:
        raise IndexError(f"index {bad[1]} is out of bounds for dimension {d} with size {size}")
    return index % size if index.numel() else index


def _index_add_shapes(x: Tensor, d: int, idx: Tensor, source: Tensor) -> None:
    """PyTorch's checks on ``source``, in its order: dtype, count along ``d``, other sizes."""
    if source.dtype is not x.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_pt(x.dtype)}) and source ({_pt(source.dtype)}) must have the same scalar type"
        )
    along = source._shape[d] if source.ndim > d else 1
    if idx.numel() != (1 if source.ndim == 0 else along):
        raise RuntimeError(
            f"index_add_(): Number of indices ({idx.numel()}) should be equal to source.size(dim): "
            f"({along}), for dim: {d}"
        )
    if source.ndim and any(s != t for i, (s, t) in enumerate(zip(x._shape, source._shape)) if i != d):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(x._shape)} source.shape = {list(source._shape)}"
        )


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim`` (duplicates sum)."""
    _index_dtype("index_add_", index)
    if index.ndim > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
            f"{_pt(index.dtype)} and size: {list(index._shape)}"
        )
    x, d, idx = _vector("index_add_", input, dim, index)
    _index_add_shapes(x, d, idx, source)
    _add_bounds(x, d, idx)
    src = source if alpha == 1 else source * alpha
    src = src.reshape(1) if src.ndim == 0 else src
    if src.dtype is not x.dtype:
        src = src.to(x.dtype)
    return index_put(x, _key(d, idx), src, accumulate=True).reshape(input._shape)


@autocast_op("index_copy")
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with the slices of ``source`` written at ``index`` along ``dim``."""
    _long_only("index_copy_", index)
    x, d, idx = _vector("index_copy_", input, dim, index)
    _copy_bounds(x, d, idx)
    src = source.reshape(1) if source.ndim == 0 else source
    n_src = src._shape[d] if d < src.ndim else 1
    if idx.numel() != n_src:
        raise IndexError(
            f"index_copy_(): Number of indices ({idx.numel()}) should be equal to source.size(dim) ({n_src})"
        )
    if src.dtype is not x.dtype:
        raise RuntimeError(
            f"index_copy_(): self and source expected to have the same dtype, but got "
            f"(self) {_pt(x.dtype)} and (source) {_pt(src.dtype)}"
        )
    return index_put(x, _key(d, idx), src).reshape(input._shape)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with ``value`` at ``index`` along ``dim``."""
    _fill_dtype("index_fill_", index)
    x, d, idx = _vector("index_fill_", input, dim, index)
    idx = _fill_wrapped(x, d, idx)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s)."
            )
        value = value.to(x.dtype)
    return index_put(x, _key(d, idx), value).reshape(input._shape)


def index_reduce(
    input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """``scatter_reduce`` of whole slices: ``source``'s slice i reduces into ``input``'s slice index[i]."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}."
        )
    _index_dtype("index_reduce_", index)
    x, d, idx = _vector("index_reduce_", input, dim, index)
    _reduce_bounds(x, d, idx)
    same_device(x, source, "index_reduce_")
    if source.dtype is not x.dtype:
        raise RuntimeError(
            f"index_reduce_(): self ({_pt(x.dtype)}) and source ({_pt(source.dtype)}) must have the same scalar type"
        )
    shape = [1] * x.ndim
    shape[d] = idx.numel()
    full = idx.to(D.int64).reshape(shape).expand(source._shape).contiguous()
    return _scatter_reduce_checked(x, d, full, source, reduce, include_self).reshape(input._shape)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """A 1-D tensor of the elements of ``input`` where ``mask`` (broadcast) is True."""
    if mask.dtype is not D.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shape(mask._shape, input._shape)  # PyTorch's order, for its error text
    x = input.expand(shape) if input._shape != shape else input
    m = mask.expand(shape) if mask._shape != shape else mask
    if not shape:
        return getitem(x.reshape(1), m.reshape(1))
    return getitem(x, m)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` whose True-``mask`` positions take ``source``'s elements in order."""
    if mask.dtype is not D.bool_:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {_pt(mask.dtype)}"
        )
    if source.dtype is not input.dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but got {input.dtype.name} and {source.dtype.name}"
        )
    shape = broadcast_shape(input._shape, mask._shape)
    x = input.expand(shape).contiguous() if input._shape != shape else input
    m = mask.expand(shape) if mask._shape != shape else mask
    if not shape:
        x, m = x.reshape(1), m.reshape(1)
    where_ = nonzero(m, as_tuple=True)
    count = where_[0].numel()
    if count > source.numel():
        raise RuntimeError("masked_scatter: Number of elements of source < number of ones in mask")
    vals = source.reshape(-1)[:count]
    return index_put(x, Bounded(enumerate(where_)), vals).reshape(shape)  # nonzero's are in range


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: a ``(count, ndim)`` tensor of coordinates."""
    return nonzero(input)


def flat_index(name: str, flat: Tensor, index: Tensor) -> Bounded:
    """``take``/``put_``'s index into the 1-D ``flat``: int64, in ``[-n, n)``, made non-negative."""
    _long_only(name, index)
    same_device(flat, index, name)
    n = flat._shape[0]
    if n == 0 and index.numel():
        raise IndexError(f"{name}(): tried to take from an empty tensor")
    bad = first_outside(index, -n, n)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad[1]} on a tensor of {n} elements.")
    return Bounded({0: index % n if index.numel() else index})


def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened ``input`` at ``index`` (negative indices count from the end)."""
    flat = input.reshape(-1)
    return select_rows(flat, flat_index("take", flat, index)[0])


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` with ``indices`` broadcast against ``input`` in all dims but ``dim``.

    As in PyTorch 2.13, with ``dim`` given the indices are taken modulo the size of ``dim``
    (so ``-1`` is the last entry, and so is ``size - 1 + k * size``); without it they are
    ``gather``'s on the flattened input and must lie in ``[0, numel)``.
    """
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    if indices.dtype is not D.int64:
        raise RuntimeError(
            f"ember.take_along_dim(): dtype of indices should be Long but got {_pt(indices.dtype)}"
        )
    d = norm_dim(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError(
            "ember.take_along_dim(): input and indices should have the same number of dimensions, "
            f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices"
        )
    si, sx = list(input._shape), list(indices._shape)
    si[d] = sx[d] = 1
    b = broadcast_shape(tuple(si), tuple(sx))
    xs = b[:d] + (input._shape[d],) + b[d + 1 :]
    ix = b[:d] + (indices._shape[d],) + b[d + 1 :]
    if input._shape[d] == 0 or not indices.numel():
        return input.expand(xs).gather(d, indices.expand(ix))
    wrapped = indices % input._shape[d]
    return gather_checked(input.expand(xs), d, wrapped.expand(ix))


# -- scatter_reduce ------------------------------------------------------------------------
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_rule(n: Any, g: Tensor) -> tuple:
    (x, index, src, d, reduce, include_self), out, _ = n.ctx
    need = n.needs_input_grad
    if reduce in ("sum", "mean"):
        count = _counts(x, d, index, include_self) if reduce == "mean" else None
        gs = g / count if count is not None else g
        gx = gs if include_self else gs.scatter(d, index, 0.0)
        return (gx if need[0] else None, None, gs.gather(d, index) if need[2] else None)
    if reduce == "prod":
        safe_x = where(x == 0, 1.0, x)
        gx = where(x == 0, 0.0, g * out / safe_x) if include_self else g.scatter(d, index, 0.0)
        picked = (g * out).gather(d, index)
        gsrc = where(src == 0, 0.0, picked / where(src == 0, 1.0, src))
        return (gx if need[0] else None, None, gsrc if need[2] else None)
    value = out.gather(d, index)
    self_hit = (x == out).to(g.dtype) if include_self else _untouched(x, d, index, g.dtype)
    src_hit = (src == value).to(g.dtype)
    ties = self_hit.scatter_add(d, index, src_hit)
    share = g / ties
    return (
        self_hit * share if need[0] else None,
        None,
        src_hit * share.gather(d, index) if need[2] else None,
    )


def _untouched(x: Tensor, d: int, index: Tensor, dtype: Any) -> Tensor:
    return ones_like(x, dtype=dtype).scatter(d, index, 0.0)


def _counts(x: Tensor, d: int, index: Tensor, include_self: bool) -> Tensor:
    base = zeros_like(x, dtype=D.float64 if x.dtype is D.float64 else x.dtype)
    hits = base.scatter_add(d, index, ones(index._shape, dtype=base.dtype, device=x._device))
    total = hits + 1 if include_self else hits

    return where(total == 0, 1.0, total).to(x.dtype)


def _scatter_sum_mean(
    x: Tensor, d: int, index: Tensor, src: Tensor, reduce: str, include_self: bool
) -> Tensor:
    """The decomposition for sum and mean: the ``scatter`` primitive's add mode, no host copy."""

    base = x if include_self else scatter_checked(x, d, index, 0, None)
    part = src[tuple(slice(0, s) for s in index._shape)] if src.ndim else src
    total = scatter_checked(base, d, index, part, "add")
    if reduce == "sum":
        return total
    ones_ = ones(index._shape, dtype=D.int64, device=x._device)
    hits = scatter_checked(zeros_like(x, dtype=D.int64), d, index, ones_, "add")
    count = (hits + 1 if include_self else hits).clamp(min=1)
    if x.dtype.category < 2:
        return (total // count).to(x.dtype)
    return (total / count).to(x.dtype)


def scatter_reduce(
    input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` with sum/prod/mean/amax/amin.

    ``include_self=False`` ignores ``input``'s values at the scattered positions. Example:
    ``ember.zeros(3).scatter_reduce(0, ember.tensor([0, 0, 2]), ember.tensor([1., 2., 3.]), "amax")``
    is ``[2., 0., 3.]``.
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's older names
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if isinstance(index, Tensor) and index.dtype in INDEX_DTYPES:
        same_device(input, src, "scatter_reduce")
        if src.dtype is not input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d, index = checked_index(input, dim, index, "scatter")
    return _scatter_reduce_checked(input, d, index, src, reduce, include_self)


def _scatter_reduce_checked(
    input: Tensor, d: int, index: Tensor, src: Tensor, reduce: str, include_self: bool
) -> Tensor:
    """``scatter_reduce`` on an int64 ``index`` in ``[0, size)`` and a known reduction."""
    with NoRecord():
        if not has_kernel(input._be, "scatter_reduce") and reduce in ("sum", "mean"):
            out = _scatter_sum_mean(input, d, index, src, reduce, bool(include_self))
        else:
            out = run_composite(
                "scatter_reduce", (input, index, src), (d, reduce, bool(include_self)), input.dtype
            )
    if _grad.enabled and (input.requires_grad or src.requires_grad):
        record(
            "ScatterReduceBackward0",
            _scatter_reduce_rule,
            out,
            (input, index, src),
            (),
            ((input, index, src, d, reduce, bool(include_self)), out, None),
        )
    return out


def scatter_multiply(input: Tensor, dim: int, index: Tensor, src: Any) -> Tensor:
    """``scatter(..., reduce='multiply')`` (``index`` checked by ``scatter``): multiply ``input`` at
    ``index`` by ``src``."""

    if not isinstance(src, Tensor):
        src = full(index._shape, src, dtype=input.dtype, device=input._device)
    else:
        src = src[tuple(slice(0, s) for s in index._shape)] if src.ndim else src.expand(index._shape)
    return _scatter_reduce_checked(input, dim, index, src.to(input.dtype), "prod", True)


def _index_vector(like: Tensor, values: Sequence[int]) -> Tensor:
    return tensor(list(values), dtype=D.int64, device=like._device)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``index`` of dimension ``dim``."""

    d = norm_dim(dim, input.ndim)
    size = input._shape[d]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    i = index % size
    return index_copy(input, d, _index_vector(input, [i]), src.unsqueeze(d).to(input.dtype))


def slice_scatter(
    input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``start:end:step`` of dimension ``dim``."""

    d = norm_dim(dim, input.ndim)
    rows = range(*slice(start, end, step).indices(input._shape[d]))
    return index_copy(input, d, _index_vector(input, rows), src.to(input.dtype))


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source`` written (or added) at flat positions ``index``."""

    flat = input.reshape(-1)
    idx = flat_index("put_", flat, index.reshape(-1) if isinstance(index, Tensor) else index)
    return index_put(flat, idx, source.reshape(-1).to(input.dtype), accumulate).reshape(input._shape)
