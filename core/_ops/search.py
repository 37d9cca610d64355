"""Counting and searching: ``bincount``, ``histc``, ``unique``, ``unique_consecutive``,
``searchsorted``, ``bucketize``, ``isin``, ``nonzero``, ``nonzero_static`` and ``unravel_index`` (sort,
compare and ``scatter_add``; ``unique`` with a ``dim`` works on host rows)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from ember.backends import dtypes as D

from .._creation import arange, full, tensor, zeros
from .._dispatch import call, has_kernel, to_host
from .._dtype import pt_name
from .._public import op, public
from .._tensor import Tensor, wrap
from ._args import check_bool, invalid_combination
from ._common import norm_dim
from ._composite import not_implemented_for
from .join import cat, stack
from .pointwise_binary import result_type
from .pointwise_unary import floor
from .select import where

PUBLIC = public(
    __name__,
    {
        "bincount": op(method=True),
        "bucketize": op(),
        "histc": op(method=True),
        "isin": op(),
        "nonzero": op(method=True),
        "nonzero_static": op(method=True),
        "searchsorted": op(),
        "unique": op(method=True),
        "unique_consecutive": op(method=True),
        "unravel_index": op(),
    },
)
__all__ = [*PUBLIC]


def _arange(n: int, like: Tensor) -> Tensor:
    return arange(n, device=like._device)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Counts (or summed ``weights``) of each non-negative integer in the 1-D ``input``."""

    if input.dtype.category != 1 or input.dtype is D.bool_:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{pt_name(input.dtype)}'")
    if input.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.numel() and int(input.amin().item()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    n = max(int(input.amax().item()) + 1 if input.numel() else 0, minlength)
    idx = input.to(D.int64)
    if weights is not None and (weights.ndim != 1 or weights._shape[0] != input._shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None:
        return zeros(n, dtype=D.int64, device=input._device).scatter_add(0, idx, idx * 0 + 1)
    wd = weights.dtype if weights.dtype in (D.float32, D.float64) else D.float64
    return zeros(n, dtype=wd, device=input._device).scatter_add(0, idx, weights.to(wd))


def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    """Histogram of ``bins`` equal-width bins over ``[min, max]`` (the data range when equal)."""

    if input.dtype.category < 2:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{pt_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"ember.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and input.numel():
        lo, hi = float(input.amin().item()), float(input.amax().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("ember.histc: max must be larger than min")
    x = input.reshape(-1).detach()
    inside = (x >= lo) & (x <= hi)
    b = floor((x - lo) * (bins / (hi - lo))).to(D.int64).clamp(0, bins - 1)
    b = where(inside, b, 0)
    return zeros(bins, dtype=input.dtype, device=input._device).scatter_add(0, b, inside.to(input.dtype))


# -- unique ------------------------------------------------------------------------------------
def _unique_flat(x: Tensor, sort: bool, return_inverse: bool, return_counts: bool) -> Any:
    flat = x.reshape(-1).detach()
    n = flat.numel()
    if sort:
        s = flat.sort()
        vals, order = s.values, s.indices
    else:
        vals, order = flat, _arange(n, x)
    if n == 0:
        starts = zeros(0, dtype=D.bool_, device=x._device)
    else:
        first = zeros(1, dtype=D.bool_, device=x._device) | True
        starts = cat([first, vals[1:] != vals[:-1]])
    uniq = vals[starts]
    outs = [uniq]
    if return_inverse:
        group = starts.to(D.int64).cumsum(0) - 1
        inv = zeros(n, dtype=D.int64, device=x._device).scatter(0, order, group)
        outs.append(inv.reshape(x._shape))
    if return_counts:
        pos = starts.nonzero().reshape(-1)
        ends = cat([pos[1:], zeros(1, dtype=D.int64, device=x._device) + n]) if n else pos
        outs.append(ends - pos)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _unique_dim(x: Tensor, dim: int, consecutive: bool, return_inverse: bool, return_counts: bool) -> Any:
    d = norm_dim(dim, x.ndim)
    host = np.moveaxis(x.detach().cpu().numpy(), d, 0)
    rows = host.reshape(host.shape[0], -1)
    if consecutive:
        keep = np.ones(len(rows), bool)
        keep[1:] = np.any(rows[1:] != rows[:-1], axis=1)
        inv = np.cumsum(keep) - 1
        counts = np.diff(np.append(np.flatnonzero(keep), len(rows)))
        uniq = host[keep]
    else:
        _, first, inv, counts = np.unique(
            rows, axis=0, return_index=True, return_inverse=True, return_counts=True
        )
        uniq = host[first]
    outs = [tensor(np.moveaxis(uniq, 0, d).copy(), dtype=x.dtype, device=x._device)]
    if return_inverse:
        outs.append(tensor(inv.reshape(-1), dtype=D.int64, device=x._device))
    if return_counts:
        outs.append(tensor(counts, dtype=D.int64, device=x._device))
    return outs[0] if len(outs) == 1 else tuple(outs)


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: Any = None,
) -> Any:
    """The distinct elements (sorted), with the inverse mapping and counts if asked."""

    not_implemented_for("unique", input, "complex")
    if dim is not None:
        return _unique_dim(input, dim, False, return_inverse, return_counts)
    return _unique_flat(input, True, return_inverse, return_counts)


def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: Any = None
) -> Any:
    """Collapse runs of equal consecutive elements (or slices along ``dim``)."""
    if dim is not None:
        return _unique_dim(input, dim, True, return_inverse, return_counts)
    return _unique_flat(input, False, return_inverse, return_counts)


# -- binary search -------------------------------------------------------------------------------
def searchsorted(
    sorted_sequence: Tensor,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """Insertion indices of ``input`` into the last dim of ``sorted_sequence`` (left or right)."""

    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"ember.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(
                "side and right can't be set to opposites, got side of left while right was True"
            )
        right = side == "right"

    not_implemented_for("searchsorted_out_cpu", sorted_sequence, "bool")
    seq = sorted_sequence
    if sorter is not None:
        seq = seq.gather(-1, sorter)
    scalar = not isinstance(input, Tensor)
    v = tensor(input, dtype=seq.dtype, device=seq._device) if scalar else input
    if seq.ndim > 1 and seq._shape[:-1] != v._shape[:-1]:
        raise RuntimeError(
            "ember.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
            f"boundaries tensor and input value tensor must match, but we got boundaries tensor {list(seq._shape)} "
            f"and input value tensor {list(v._shape)}"
        )
    if seq.ndim <= 1:
        out = _merge_ranks(seq.reshape(1, -1), v.reshape(1, -1), right).reshape(v._shape)
    else:
        rows = seq.reshape(-1, seq._shape[-1])
        out = _merge_ranks(rows, v.reshape(rows._shape[0], -1), right).reshape(v._shape)
    return out.to(D.int32 if out_int32 else D.int64)


def _merge_ranks(seq: Tensor, v: Tensor, right: bool) -> Tensor:
    """For each row, the number of ``seq`` entries before each value (< it, or <= if ``right``).

    One stable sort of the concatenation: values placed after the sequence land after equal
    entries (right), values placed before land before them (left). O((n+m) log(n+m)).
    """

    dt = result_type(seq, v)
    n, m = seq._shape[-1], v._shape[-1]
    s, x = seq.detach().to(dt), v.detach().to(dt)
    keys = cat([s, x], -1) if right else cat([x, s], -1)
    order = keys.sort(-1, stable=True).indices
    is_val = (order >= n) if right else (order < m)
    before = (~is_val).to(D.int64).cumsum(-1)
    slot = where(is_val, order - n if right else order, m)
    out = zeros((seq._shape[0], m + 1), dtype=D.int64, device=seq._device)
    return out.scatter(-1, slot, before)[:, :m]


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """Index of the bucket of each element of ``input`` given sorted 1-D ``boundaries``."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` occurs in ``test_elements``."""
    if isinstance(elements, str) or isinstance(test_elements, str):
        raise invalid_combination("isin", (elements, test_elements))

    like = elements if isinstance(elements, Tensor) else test_elements
    e = elements if isinstance(elements, Tensor) else tensor(elements, device=like._device)
    t = test_elements if isinstance(test_elements, Tensor) else tensor(test_elements, device=like._device)
    t = t.reshape(-1)
    if t.numel() == 0:
        found = zeros(e._shape, dtype=D.bool_, device=e._device)
    else:
        s = t.sort().values
        pos = searchsorted(s, e).clamp(max=s.numel() - 1)
        found = s.gather(0, pos.reshape(-1)).reshape(e._shape) == e
    return ~found if invert else found


def unravel_index(indices: Any, shape: Sequence[int] | int) -> tuple[Tensor, ...]:
    """Coordinates in ``shape`` of flat ``indices`` (one tensor per dimension)."""

    dims = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    idx = indices if isinstance(indices, Tensor) else tensor(indices)
    if idx.dtype.category != 1 or idx.dtype is D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {idx.dtype.name}")
    total = 1
    for s in dims:
        total *= s
    rest = idx.to(D.int64) % max(total, 1)
    out = []
    for s in reversed(dims):
        out.append(rest % s)
        rest = rest // s
    return tuple(reversed(out))


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero(input)`` cut or padded (with ``fill_value`` rows) to exactly ``size`` rows."""

    nz = nonzero(input)
    if nz._shape[0] >= size:
        return nz[:size]
    pad = full((size - nz._shape[0], nz._shape[1]), fill_value, dtype=D.int64, device=input._device)
    return cat([nz, pad], 0)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Coordinates of non-zero elements: ``(count, ndim)`` int64, or one tensor per dim."""
    if has_kernel(input._be, "nonzero"):
        data = call(input._be, "nonzero", input._data)
        out = wrap(data, input._be, input._device, D.int64, _nonzero_shape(input, data))
    else:
        out = _nonzero_decomposed(input)
    if as_tuple is not False and as_tuple is not True:
        check_bool("nonzero", "as_tuple", as_tuple)
    if as_tuple:
        if input.ndim == 0:
            return (out.reshape(-1),)
        return tuple(out[:, d] for d in range(input.ndim))
    return out


def _nonzero_shape(input: Tensor, data: Any) -> tuple[int, ...]:
    # The count is data-dependent: only the kernel's result knows it.
    return tuple(to_host(input._be, data).shape)


def _nonzero_decomposed(input: Tensor) -> Tensor:
    """Stream compaction with ``cumsum`` and ``scatter``: works on every backend."""

    flat = (input != 0).reshape(-1).to(D.int64)
    n = flat.numel()
    pos = flat.cumsum(0)
    count = int(pos[-1].item()) if n else 0
    slot = (pos - 1) * flat + count * (1 - flat)
    packed = zeros(count + 1, dtype=D.int64, device=input._device).scatter(
        0, slot, arange(n, device=input._device)
    )
    lin = packed[:count]
    coords = []
    for size in reversed(input._shape or (1,)):
        coords.append(lin % size)
        lin = lin // size
    coords.reverse()
    if not input._shape:
        return zeros((count, 0), dtype=D.int64, device=input._device)
    return coords[0].unsqueeze(1) if len(coords) == 1 else _stack_cols(coords)


def _stack_cols(cols: list[Tensor]) -> Tensor:
    return stack(cols, 1)
