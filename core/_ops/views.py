"""View ops: results alias their base on every backend and share its version counter.

Each view records its derivative beside it; slicing's backward scatters the gradient into
zeros through a node whose own backward slices again, so higher orders work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember.backends import DType
from ember.backends import dtypes as D

from .._creation import arange, zeros
from .._dispatch import call
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel
from ._args import int_tuple, invalid_combination
from ._common import norm_dim, numel, sum_to
from .inplace import mark_detached

PUBLIC = public(
    __name__,
    {
        "as_strided": op(method=True),
        "chunk": op(method=True),
        "detach": op(method=True, function=False),
        "expand": op(method=True, function=False),
        "expand_as": op(method=True, function=False),
        "flatten": op(method=True),
        "movedim": op("moveaxis", method=True),
        "narrow": op(method=True),
        "permute": op(method=True),
        "reshape": op(method=True),
        "select": op(method=True),
        "split": op(method=True),
        "squeeze": op(method=True),
        "t": op(method=True),
        "transpose": op("swapaxes", "swapdims", method=True),
        "unbind": op(method=True),
        "unflatten": op(method=True),
        "unsqueeze": op(method=True),
        "view": op(method=True, function=False),
    },
)
__all__ = [*PUBLIC, "basic_slice", "data_alias", "slice_backward"]


def make_view(
    base: Tensor, data: Any, shape: tuple[int, ...], node: str | None, rule: Any, ctx: Any
) -> Tensor:
    """Wrap ``data`` (aliasing ``base``) as a view tensor and record its node."""
    v = wrap(data, base._be, base._device, base.dtype, shape)
    bm = base._meta
    if bm is not None and bm.get("inference"):
        v._meta = {"inference": True}  # a view of an inference tensor is one, in any mode
    elif v._meta is not None:
        v._meta = None  # a view of a normal tensor made in inference mode stays normal
    v._vc = base._vc
    b = base._base
    v._base = base if b is None else b
    if node is not None and base._requires_grad and _grad.enabled:
        record(node, rule, v, (base,), (), ctx)
    return v


def _shape_arg(shape: Sequence[Any], fn: str = "view", arg: str = "size") -> tuple[int, ...]:
    seq = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    for s in seq:  # a plain loop: the common case (all ints) needs no generator frame
        if type(s) is not int:
            return int_tuple(fn, arg, shape)
    return tuple(seq)


def infer_shape(shape: tuple[int, ...], n: int) -> tuple[int, ...]:
    """Resolve one -1 in ``shape`` for ``n`` elements, with PyTorch's errors."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for i, s in enumerate(shape):
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
            known *= s
    if -1 in shape:
        if known == 0 or n % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {n}")
        shape = tuple(n // known if s == -1 else s for s in shape)
    elif known != n:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {n}")
    return shape


def _reshape_rule(n: Any, g: Tensor) -> tuple:
    return (g.reshape(n.ctx),)


def _view_dtype(input: Tensor, dtype: Any) -> Tensor:
    from .views_dtype import view_dtype  # cycle: views_dtype builds on make_view

    return view_dtype(input, dtype)


def view(input: Tensor, *shape: Any) -> Tensor:
    """A view with a new shape; raises when the layout would need a copy."""
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        if not isinstance(shape[0], DType) and not hasattr(shape[0], "__index__"):
            raise invalid_combination("view", shape)  # Tensor.view's form: no self
        return _view_dtype(input, shape[0])
    new = infer_shape(_shape_arg(shape), input.numel())
    data = call(input._be, "reshape", input._data, new)
    if data is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return make_view(input, data, new, "ViewBackward0", _reshape_rule, input._shape)


def reshape(input: Tensor, *shape: Any) -> Tensor:
    """``view`` when the layout allows, otherwise a copy."""
    new = infer_shape(_shape_arg(shape, "reshape", "shape"), input.numel())
    data = call(input._be, "reshape", input._data, new)
    if data is not None:
        return make_view(input, data, new, "ViewBackward0", _reshape_rule, input._shape)
    return view(input.clone(), new)


def _permute_rule(n: Any, g: Tensor) -> tuple:
    dims = n.ctx
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return (g.permute(inverse),)


def permute(input: Tensor, *dims: Any) -> Tensor:
    """Reorder dimensions: ``x.permute(2, 0, 1)``."""
    ds = tuple(norm_dim(d, input.ndim) for d in _shape_arg(dims, "permute", "dims"))
    if len(ds) != input.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
            f"of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to len(dims) = {len(ds)}"
        )
    if len(set(ds)) != len(ds):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _permuted(input, ds, "PermuteBackward0")


def _permuted(input: Tensor, ds: tuple[int, ...], node: str) -> Tensor:
    """The view of ``input`` with its dimensions in the (checked) order ``ds``."""
    data = call(input._be, "permute", input._data, ds)
    shape = input._shape
    return make_view(input, data, tuple([shape[d] for d in ds]), node, _permute_rule, ds)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view)."""
    n = len(input._shape)
    if n == 0:
        norm_dim(dim0, 0, "transpose", "dim0", 2), norm_dim(dim1, 0, "transpose", "dim1", 3)
        return make_view(input, input._data, (), None, None, None)
    dims = list(range(n))
    a, b = norm_dim(dim0, n, "transpose", "dim0", 2), norm_dim(dim1, n, "transpose", "dim1", 3)
    dims[a], dims[b] = dims[b], dims[a]
    return _permuted(input, tuple(dims), "TransposeBackward0")


def t(input: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dimensions."""
    n = len(input._shape)
    if n == 2:
        return _permuted(input, (1, 0), "TBackward0")
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return relabel(input.view(input._shape), "TBackward0")


def _expand_rule(n: Any, g: Tensor) -> tuple:
    return (sum_to(g, n.ctx),)


def expand(input: Tensor, *sizes: Any) -> Tensor:
    """Broadcast size-1 dimensions to ``sizes`` without copying (-1 keeps a size)."""
    target = _shape_arg(sizes, "expand", "size")
    n, m = len(target), input.ndim
    if n < m:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(input._shape)}}}, size={list(target)}): the number of "
            f"sizes provided ({n}) must be greater or equal to the number of dimensions in the tensor ({m})"
        )
    out = []
    for i, s in enumerate(target):
        j = i - (n - m)
        cur = input._shape[j] if j >= 0 else None
        if s == -1:
            if cur is None:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                )
            s = cur
        if cur is not None and cur != s and cur != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(target)}.  Tensor sizes: {list(input._shape)}"
            )
        out.append(s)
    shape = tuple(out)
    if shape == input._shape:
        return make_view(input, input._data, shape, "ExpandBackward0", _expand_rule, input._shape)
    data = call(input._be, "expand", input._data, shape)
    return make_view(input, data, shape, "ExpandBackward0", _expand_rule, input._shape)


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, other._shape)


def _reshape_to(input: Tensor, shape: tuple[int, ...], node: str) -> Tensor:
    data = call(input._be, "reshape", input._data, shape)
    return make_view(input, data, shape, node, _reshape_rule, input._shape)


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """Drop size-1 dimensions (all, one, or a tuple of them)."""
    if dim is None:
        dims = {i for i, s in enumerate(input._shape) if s == 1}
    else:
        if not isinstance(dim, (int, tuple, list)):
            raise invalid_combination("squeeze", (input, dim))
        ds = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = {norm_dim(d, input.ndim) for d in ds}
        dims = {d for d in dims if input._shape and input._shape[d] == 1}
    shape = tuple(s for i, s in enumerate(input._shape) if i not in dims)
    # PyTorch's overloads: squeeze(), squeeze(dim), squeeze(dims)
    node = (
        "SqueezeBackward0"
        if dim is None
        else "SqueezeBackward1"
        if isinstance(dim, int)
        else "SqueezeBackward2"
    )
    return _reshape_to(input, shape, node)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dimension at ``dim``."""
    d = norm_dim(dim, input.ndim + 1, "unsqueeze", "dim", 2)
    shape = input._shape[:d] + (1,) + input._shape[d:]
    return _reshape_to(input, shape, "UnsqueezeBackward0")


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim..end_dim`` into one (a view when possible)."""
    s = norm_dim(start_dim, input.ndim, "flatten", "start_dim", 2)
    e = norm_dim(end_dim, input.ndim, "flatten", "end_dim", 3)
    if input.ndim == 0:
        return reshape(input, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input._shape[:s] + (numel(input._shape[s : e + 1]),) + input._shape[e + 1 :]
    return reshape(input, shape)


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dimension ``dim`` into ``sizes``."""
    if input.ndim == 0:
        raise RuntimeError(
            "unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions"
        )
    d = norm_dim(dim, input.ndim)
    sizes = int_tuple("unflatten", "sizes", (sizes,), 2)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = numel(tuple(s for s in sizes if s != -1))
    size = input._shape[d]
    if sizes.count(-1) <= 1 and (known * (size // known if -1 in sizes and known else 1) != size):
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
            f"({size}) in the input tensor"
        )
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
    inner = infer_shape(sizes, size)
    return reshape(input, input._shape[:d] + inner + input._shape[d + 1 :])


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """Move dimensions ``source`` to positions ``destination``."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    n = input.ndim
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
            f"the same number of dims as destination ({list(dst)} dims)"
        )
    src = tuple(norm_dim(s, n) for s in src)
    dst = tuple(norm_dim(d, n) for d in dst)
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if n == 0:
        return reshape(input, ())
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order)


# -- slicing -------------------------------------------------------------------------------
def slice_backward(
    g: Tensor, shape: tuple[int, ...], key: tuple[Any, ...], view_shape: tuple[int, ...]
) -> Tensor:
    """Zeros of ``shape`` with ``g`` written at ``key``; differentiable (its rule slices)."""

    out = zeros(shape, dtype=g.dtype, device=g._device)
    region = call(out._be, "slice", out._data, key)
    src = call(g._be, "reshape", g._data, _kept_shape(shape, key))
    if src is None:
        src = call(g._be, "reshape", g.clone()._data, _kept_shape(shape, key))
    call(out._be, "assign", region, src)
    if _grad.enabled and g.requires_grad:
        record("SliceBackwardBackward0", _reslice_rule, out, (g,), (), (key, view_shape))
    return out


def _kept_shape(shape: tuple[int, ...], key: tuple[Any, ...]) -> tuple[int, ...]:
    out = []
    for s, k in zip(shape, key):
        if isinstance(k, slice):
            out.append(len(range(k.start, k.stop, k.step)))
    return tuple(out) + shape[len(key) :]


def _reslice_rule(n: Any, g: Tensor) -> tuple:
    key, view_shape = n.ctx
    return (basic_slice(g, key, view_shape),)


def _slice_rule(n: Any, g: Tensor) -> tuple:
    shape, key, view_shape = n.ctx
    return (slice_backward(g, shape, key, view_shape),)


def basic_slice(input: Tensor, key: tuple[Any, ...], out_shape: tuple[int, ...]) -> Tensor:
    """The view ``input[key]`` for a normalised key (ints and step>0 slices), reshaped."""
    data = call(input._be, "slice", input._data, key)
    kept = _kept_shape(input._shape, key)
    if kept != out_shape:
        data = call(input._be, "reshape", data, out_shape)
    node = "SelectBackward0" if any(isinstance(k, int) for k in key) else "SliceBackward0"
    return make_view(input, data, out_shape, node, _slice_rule, (input._shape, key, out_shape))


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """Elements ``start .. start+length`` of dimension ``dim`` (a view)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = norm_dim(dim, input.ndim)
    size = input._shape[d]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < 0:
        start += size
    if not (0 <= start <= size) or length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    key = (slice(None),) * d + (slice(start, start + length, 1),)
    key = _normalise_slices(input._shape, key)
    shape = input._shape[:d] + (length,) + input._shape[d + 1 :]
    return basic_slice(input, key, shape)


def _normalise_slices(shape: tuple[int, ...], key: tuple[Any, ...]) -> tuple[Any, ...]:
    out = []
    for s, k in zip(shape, key):
        if isinstance(k, slice):
            out.append(slice(*k.indices(s)))
        else:
            out.append(k)
    return tuple(out)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` of dimension ``dim``, with that dimension removed."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = norm_dim(dim, input.ndim)
    size = input._shape[d]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input._shape)} at dimension {d}"
        )
    i = index + size if index < 0 else index
    key = _normalise_slices(input._shape, (slice(None),) * d + (i,))
    return basic_slice(input, key, input._shape[:d] + input._shape[d + 1 :])


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """All slices along ``dim``, as views."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = norm_dim(dim, input.ndim)
    return tuple(select(input, d, i) for i in range(input._shape[d]))


def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Views of pieces of ``split_size`` (the last may be smaller) or of the given sizes."""
    if input.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = norm_dim(dim, input.ndim)
    size = input._shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
            )
        sizes = [min(step, size - i) for i in range(0, size, step)] if size else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                f"dimension {d}), but got split_sizes={sizes}"
            )
    out, start = [], 0
    for s in sizes:
        out.append(narrow(input, d, start, s))
        start += s
    return tuple(out)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``chunks`` nearly equal views."""
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    size = input._shape[norm_dim(dim, input.ndim)]
    step = -(-size // chunks) if size else 1
    return split(input, step, dim)


def _reach(size: Sequence[int], stride: Sequence[int], off: int) -> tuple[int, int] | None:
    """The lowest and one past the highest storage element a geometry touches (None if empty)."""
    if any(s == 0 for s in size):
        return None
    return off, off + sum((s - 1) * st for s, st in zip(size, stride)) + 1


def _may_overlap(size: Sequence[int], stride: Sequence[int]) -> bool:
    """False only when no two elements of the geometry can share a storage element."""
    reach = 0
    for st, s in sorted((st, s) for s, st in zip(size, stride) if s > 1):
        if st <= reach:
            return True
        reach += (s - 1) * st
    return False


def _as_strided_rule(n: Any, g: Tensor) -> tuple:
    """PyTorch's as_strided_backward: scatter-add ``g`` into a zero storage, read the input's
    geometry back (averaged where the input's own elements share storage), in ember ops so
    that higher orders differentiate it."""
    in_geo, out_geo = n.ctx
    r_in, r_out = _reach(*in_geo), _reach(*out_geo)
    if r_in is None or r_out is None:
        return (zeros(in_geo[0], dtype=g.dtype, device=g._device),)
    lo, hi = min(r_in[0], r_out[0]), max(r_in[1], r_out[1])
    pos = arange(hi - lo, dtype=D.int64, device=g._device)
    out_idx = as_strided(pos, out_geo[0], out_geo[1], out_geo[2] - lo).reshape(-1)
    storage = zeros(hi - lo, dtype=g.dtype, device=g._device).index_add(0, out_idx, g.reshape(-1))
    in_idx = as_strided(pos, in_geo[0], in_geo[1], in_geo[2] - lo)
    if _may_overlap(in_geo[0], in_geo[1]):
        flat = in_idx.reshape(-1)
        ones_ = zeros(flat._shape, dtype=g.dtype, device=g._device) + 1
        count = zeros(hi - lo, dtype=g.dtype, device=g._device).index_add(0, flat, ones_)
        storage = storage / count.clamp(min=1)
    return (storage.take(in_idx),)


def as_strided(
    input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Tensor:
    """A view with explicit sizes and strides (in elements) over ``input``'s storage."""
    off = input.storage_offset() if storage_offset is None else storage_offset
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    data = call(input._be, "as_strided", input._data, size, stride, off)
    geo = ((input._shape, tuple(input.stride()), input.storage_offset()), (size, stride, off))
    return make_view(input, data, size, "AsStridedBackward0", _as_strided_rule, geo)


def data_alias(input: Tensor) -> Tensor:
    """``t.data``, as PyTorch's: the same memory as a new tensor outside autograd, not a view and
    with a version counter of its own, so an update through it (an optimizer's
    ``p.data.add_(...)``) never invalidates what the graph saved of ``t``."""
    v = wrap(input._data, input._be, input._device, input.dtype, input._shape)
    m = input._meta
    v._meta = {"inference": True} if m is not None and m.get("inference") else None
    return v


def detach(input: Tensor) -> Tensor:
    """A view of the same data that is cut off from the graph."""

    return mark_detached(make_view(input, input._data, input._shape, None, None, None))
