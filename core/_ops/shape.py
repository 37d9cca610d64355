"""Shape ops built on views, ``cat`` and indexing: flips, rolls, repeats, broadcasting,
splits, ``atleast_nd``, ``meshgrid`` and ``unfold``.

Most are compositions of differentiable ember ops, so their gradients come for free;
``unfold`` records its own node.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ember.backends import dtypes as D

from .._creation import arange, tensor, zeros
from .._dispatch import call
from .._dtype import pt_name as _pt
from .._public import op, public
from .._tensor import Tensor
from ._args import int_tuple, typename
from ._common import broadcast_shape, norm_dim
from .indexing_scatter import index_add
from .join import cat, hstack, vstack
from .views import expand, make_view, narrow

PUBLIC = public(
    __name__,
    {
        "atleast_1d": op(),
        "atleast_2d": op(),
        "atleast_3d": op(),
        "broadcast_tensors": op(),
        "broadcast_to": op(method=True),
        "column_stack": op(),
        "dsplit": op(method=True),
        "dstack": op(),
        "flip": op(),
        "fliplr": op(method=True),
        "flipud": op(method=True),
        "hsplit": op(method=True),
        "is_same_size": op(method=True),
        "meshgrid": op(),
        "narrow_copy": op(method=True),
        "ravel": op(method=True),
        "repeat": op(method=True, function=False),
        "repeat_interleave": op(method=True),
        "roll": op(method=True),
        "rot90": op(method=True),
        "tensor_split": op(method=True),
        "tile": op(method=True),
        "unfold": op(method=True, function=False),
        "vsplit": op(method=True),
    },
)
__all__ = [*PUBLIC, "row_stack"]


def _ints(args: tuple) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


def _arange(n: int, like: Tensor) -> Tensor:
    return arange(n, device=like._device)


def flip(input: Tensor, *dims: Any) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy, as in PyTorch).

    Example: ``ember.tensor([[1, 2], [3, 4]]).flip(0)`` is ``[[3, 4], [1, 2]]``.
    """
    given = [norm_dim(d, input.ndim) for d in _ints(dims)]
    for i, d in enumerate(given):
        if d in given[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    out = input
    for d in sorted(given):
        n = input._shape[d] if input.ndim else 1
        if n > 1:  # gather with a known-valid index: no bounds check, no host sync
            shape = [1] * input.ndim
            shape[d] = n
            idx = (n - 1 - _arange(n, input)).reshape(shape).expand(input._shape)
            out = out.gather(d, idx)
    return out.clone() if out is input else out


def fliplr(input: Tensor) -> Tensor:
    """Flip the columns (dimension 1); needs at least 2 dimensions."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input: Tensor) -> Tensor:
    """Flip the rows (dimension 0); needs at least 1 dimension."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def _roll1(x: Tensor, shift: int, d: int) -> Tensor:
    n = x._shape[d]
    if n == 0:
        return x.clone()
    s = shift % n
    if s == 0:
        return x.clone()
    return cat([narrow(x, d, n - s, s), narrow(x, d, 0, n - s)], d)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Rotate elements along ``dims`` by ``shifts`` (the flattened tensor when dims is None).

    Example: ``ember.roll(ember.arange(4), 1)`` is ``[3, 0, 1, 2]``.
    """
    for name, pos, v in (("shifts", 1, shifts), ("dims", 2, dims)):
        if v is not None and not isinstance(v, (int, Sequence)):
            raise TypeError(
                f"roll(): argument '{name}' (position {pos}) must be tuple of ints, not {type(v).__name__}"
            )
    sh = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if not sh:
        raise RuntimeError("`shifts` required")
    if dims is None or (not isinstance(dims, int) and not len(dims)):
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        return _roll1(input.reshape(-1), sh[0], 0).reshape(input._shape)
    ds = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(sh) != len(ds):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {ds[0]} but tensor has no dimensions")
    out = input
    for s, d in zip(sh, ds):
        out = _roll1(out, s, norm_dim(d, input.ndim))
    return out


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from the first toward the second)."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = norm_dim(dims[0], input.ndim), norm_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return flip(input, d1).transpose(d0, d1)
    if k == 2:
        return flip(input, d0, d1)
    if k == 3:
        return flip(input, d0).transpose(d0, d1)
    return input.clone()


def repeat(input: Tensor, *sizes: Any) -> Tensor:
    """Tile ``input`` ``sizes[i]`` times along each dimension (a copy)."""
    reps = int_tuple("repeat", "repeats", sizes)
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    shape = (1,) * (len(reps) - input.ndim) + input._shape
    target = [r * s for r, s in zip(reps, shape)]  # PyTorch checks the tiled size, so 0 * -1 passes
    bad = [t for t in target if t < 0]
    if bad:
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad[0]}: {target}")
    inter, big = [], []
    for r, s in zip(reps, shape):
        inter += [1, s]
        big += [r, s]
    x = input.reshape(tuple(inter)).expand(tuple(big))
    return x.contiguous().reshape(tuple(r * s for r, s in zip(reps, shape)))


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """``repeat`` with ``dims`` padded by leading ones to ``input``'s rank."""
    reps = int_tuple("tile", "dims", (dims,))
    reps = (1,) * (input.ndim - len(reps)) + reps
    return repeat(input, reps)


def repeat_interleave(
    input: Any, repeats: Any = None, dim: int | None = None, *, output_size: Any = None
) -> Tensor:
    """Repeat each element ``repeats`` times (an int or a tensor of counts per element)."""
    if repeats is None:  # repeat_interleave(counts): indices repeated by their counts
        counts = input
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _check_counts(counts)
        return repeat_interleave(_arange(counts.numel(), counts).to(counts.dtype), counts, 0)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else norm_dim(dim, input.ndim)
    if dim is not None and input.ndim == 0:  # PyTorch inserts the repeat axis at d + 1
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {d + 1})")
    if isinstance(repeats, int) and repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if isinstance(repeats, Tensor):
        _check_counts(repeats)
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.ndim <= 1:
        repeats = int(repeats.item())
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        if x.ndim == 0:
            x = x.reshape(1)
        sh = x._shape
        y = x.unsqueeze(d + 1).expand(sh[: d + 1] + (repeats,) + sh[d + 1 :])
        return y.contiguous().reshape(sh[:d] + (sh[d] * repeats,) + sh[d + 1 :])
    if repeats._shape[0] != x._shape[d]:
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {repeats._shape[0]} and input.size({d}) = {x._shape[d]}"
        )
    if repeats.numel() and int(repeats.amin().item()) < 0:
        raise RuntimeError("repeats can not be negative")
    idx = _counts_to_index(repeats)
    return x.index_select(d, idx)


def _check_counts(repeats: Tensor) -> None:
    if repeats.dtype not in (D.int64, D.int32):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_pt(repeats.dtype)}'")
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")


def _counts_to_index(counts: Tensor) -> Tensor:
    """[2, 0, 1] -> [0, 0, 2]: each position repeated by its count."""

    c = counts.to(D.int64)
    total = int(c.sum().item()) if c.numel() else 0
    if total == 0:
        return zeros(0, dtype=D.int64, device=counts._device)
    starts = (c.cumsum(0) - c)[c > 0]
    groups = (c > 0).nonzero().reshape(-1)
    prev = cat([tensor([0], device=counts._device), groups[:-1]])
    marks = zeros(total, dtype=D.int64, device=counts._device)
    marks = marks.index_put((starts,), groups - prev, accumulate=True)
    return marks.cumsum(0)


def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """``input.expand(size)``."""
    return expand(input, tuple(size))


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Views of ``tensors`` expanded to their common broadcast shape."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    shape: tuple[int, ...] = ()
    for t in ts:
        shape = broadcast_shape(shape, t._shape)
    return tuple(expand(t, shape) for t in ts)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``n`` nearly equal views, or at the given indices, along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = norm_dim(dim, input.ndim)
    size = input._shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        ios = int(ios.item()) if ios.ndim == 0 else [int(v) for v in ios.tolist()]
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(size, ios)
        bounds, start = [], 0
        for i in range(ios):
            stop = start + q + (1 if i < r else 0)
            bounds.append((start, stop))
            start = stop
    else:
        cuts = [0] + [min(max(i + size if i < 0 else i, 0), size) for i in ios] + [size]
        bounds = [(a, max(a, b)) for a, b in itertools.pairwise(cuts)]
    return tuple(narrow(input, d, a, b - a) for a, b in bounds)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack along the third dimension (inputs made at least 3-D)."""
    ts = [_atleast_3d(t) for t in tensors]
    return cat(ts, 2)


def _atleast_3d(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:
        return t.reshape(1, -1, 1)
    if t.ndim == 2:
        return t.unsqueeze(-1)
    return t


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack 1-D tensors as columns (and 2-D ones side by side)."""
    ts = [t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors]
    return hstack(ts)


# -- unfold (sliding windows as a view) ----------------------------------------------------
def _unfold_rule(n: Any, g: Tensor) -> tuple:
    shape, d, size, step = n.ctx
    return (_unfold_backward(g, shape, d, size, step),)


def _unfold_backward(g: Tensor, shape: tuple[int, ...], d: int, size: int, step: int) -> Tensor:
    nwin = g._shape[d] if g.ndim > len(shape) - 1 and shape else 1
    if not shape:
        return g.reshape(())
    idx = (_arange(nwin, g) * step).reshape(-1, 1) + _arange(size, g).reshape(1, -1)
    moved = g.movedim(-1, d + 1)
    flat = moved.reshape(shape[:d] + (nwin * size,) + shape[d + 1 :])
    return index_add(zeros(shape, dtype=g.dtype, device=g._device), d, idx.reshape(-1), flat)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """All windows of ``size`` with stride ``step`` along ``dimension``, as a new last dim (a view).

    Example: ``ember.arange(5).unfold(0, 2, 2)`` is ``[[0, 1], [2, 3]]``.
    """
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if input.ndim == 0:
        if size > 1:
            raise RuntimeError(f"maximum size for tensor at dimension 0 is 1 but size is {size}")
        return input.reshape(1)
    d = norm_dim(dimension, input.ndim)
    length = input._shape[d]
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    nwin = (length - size) // step + 1
    strides = input.stride()
    shape = input._shape[:d] + (nwin,) + input._shape[d + 1 :] + (size,)
    st = strides[:d] + (strides[d] * step,) + strides[d + 1 :] + (strides[d],)
    data = call(input._be, "as_strided", input._data, shape, st, input.storage_offset())
    return make_view(input, data, shape, "UnfoldBackward0", _unfold_rule, (input._shape, d, size, step))


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors; ``indexing='xy'`` swaps the first two outputs' axes."""
    ts = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else list(tensors)
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(
                f"ember.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}D"
            )
    ts = [t.reshape(-1) for t in ts]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t._shape[0] for t in ts)
    n = len(ts)
    outs = [t.reshape((1,) * i + (-1,) + (1,) * (n - i - 1)).expand(shape) for i, t in enumerate(ts)]
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)


row_stack = vstack


def _each(tensors: tuple, fn: Any) -> Any:
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(fn(t) for t in ts)
    return out[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else out


def _check_each(tensors: tuple) -> None:
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    for i, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {typename(t)}")


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dimension."""
    _check_each(tensors)
    return _each(tensors, lambda t: t.reshape(1) if t.ndim == 0 else t)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dimensions (1-D ones become rows)."""
    _check_each(tensors)
    return _each(tensors, lambda t: t.reshape(1, -1) if t.ndim < 2 else t)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dimensions (as ``numpy.atleast_3d``)."""

    def up(t: Tensor) -> Tensor:
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.reshape(1, -1, 1)
        return t.unsqueeze(-1) if t.ndim == 2 else t

    return _each(tensors, up)


def ravel(input: Tensor) -> Tensor:
    """The flattened tensor (a view when possible)."""
    return input.reshape(-1)


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` as a new tensor."""
    return input.narrow(dim, start, length).clone()


def _split_even(name: str, input: Tensor, ios: Any, dim: int, need: int) -> tuple[Tensor, ...]:
    if input.ndim < need:
        raise RuntimeError(
            f"ember.{name} requires a tensor with at least {need} dimension, but got a tensor with {input.ndim} dimensions!"
        )
    if isinstance(ios, int) and input._shape[dim] % ios:
        raise RuntimeError(
            f"ember.{name} attempted to split along dimension {dim}, but the size of the dimension "
            f"{input._shape[dim]} is not divisible by the split_size {ios}!"
        )
    return tensor_split(input, ios, dim)


def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dimension 1 (0 for 1-D tensors)."""
    return _split_even("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dimension 0 (needs at least 2 dimensions)."""
    return _split_even("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dimension 2 (needs at least 3 dimensions)."""
    return _split_even("dsplit", input, indices_or_sections, 2, 3)


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape."""
    return input._shape == other._shape
