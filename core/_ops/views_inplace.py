"""In-place view and shape ops: ``x.unsqueeze_(0)`` changes ``x``'s own geometry.

The tensor keeps its storage and identity; its native array is replaced by the view kernel's
result over the same storage. As PyTorch, each op bumps the version counter, refuses a leaf
(or a view of a leaf) that requires grad, and on a non-leaf records the view's node under
PyTorch's in-place name (``UnsqueezeBackward1``), whose input is the tensor's old history.

``resize_`` keeps the storage when the new size fits in what ember knows of it (the extent of
the tensor and of its base) and otherwise moves to a new storage holding the old storage's
prefix, as PyTorch's grown storage does; unlike PyTorch, other views of the old storage do
not follow it there.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from .._creation import zeros
from .._dispatch import call
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import relabel
from ._composite import NoRecord
from .convert import check_inplace, check_not_inference
from .views import as_strided, squeeze, t, transpose, unsqueeze

__all__ = [
    "INPLACE_VIEW_METHODS",
    "as_strided_",
    "bind",
    "resize_",
    "resize_as_",
    "squeeze_",
    "swapaxes_",
    "swapdims_",
    "t_",
    "transpose_",
    "unsqueeze_",
]


def _apply(self: Tensor, view_fn: Callable[..., Tensor], args: tuple, node: str) -> Tensor:
    """Make ``self`` the view ``view_fn(self, *args)``; record ``node`` on a non-leaf."""
    check_inplace(self)
    if _grad.enabled and self.requires_grad:
        # The node's input is ``self`` as it was: an alias carrying the old history.
        old = wrap(self._data, self._be, self._device, self.dtype, self._shape)
        old.grad_fn, old._requires_grad, old._vc = self.grad_fn, True, self._vc
        if self.grad_fn is None:
            old._meta = self._meta  # a leaf keeps its accumulator
        v = view_fn(old, *args)
        if v.grad_fn is not None and v.grad_fn is not self.grad_fn:
            relabel(v, node)
            self.grad_fn = v.grad_fn
    else:
        with NoRecord():
            v = view_fn(self, *args)
    self._data, self._shape = v._data, v._shape
    self._vc[0] += 1
    return self


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dimension at ``dim``, in place."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"unsqueeze_(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
    return _apply(self, unsqueeze, (dim,), "UnsqueezeBackward1")


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    """Drop size-1 dimensions (all, one, or a tuple of them), in place."""
    node = (
        "SqueezeBackward3"
        if dim is None
        else "SqueezeBackward4"
        if isinstance(dim, int)
        else "SqueezeBackward5"
    )
    return _apply(self, squeeze, (dim,), node)


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions, in place."""
    return _apply(self, transpose, (dim0, dim1), "TransposeBackward1")


def swapdims_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return transpose_(self, dim0, dim1)


swapaxes_ = swapdims_


def _t(x: Tensor) -> Tensor:
    if x.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return t(x)


def t_(self: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dimensions, in place."""
    return _apply(self, _t, (), "TBackward1")


def _extent(x: Tensor) -> int:
    """One past the last storage element ``x`` reaches (its offset when it is empty)."""
    strides, off = x._be.backend.layout(x._data)
    if 0 in x._shape:
        return off
    return off + 1 + sum((s - 1) * st for s, st in zip(x._shape, strides))


# What a tensor reached before ``resize_``/``as_strided_`` narrowed it: its storage is still
# there. Keyed by id (a Tensor's ``==`` is elementwise), each entry dropped when its tensor dies.
_REACHED: dict[int, tuple[weakref.ref, int]] = {}


def _remember(x: Tensor, cap: int) -> None:
    key = id(x)

    def forget(_ref: weakref.ref) -> None:
        _REACHED.pop(key, None)

    _REACHED[key] = (weakref.ref(x, forget), cap)


def _capacity(x: Tensor) -> int:
    """Storage elements known to exist: what ``x``, its base and its past geometry reach."""
    entry = _REACHED.get(id(x))
    known = max(_extent(x), entry[1] if entry is not None and entry[0]() is x else 0)
    base = x._base
    return max(known, _extent(base)) if base is not None else known


def _ints(name: str, arg: str, seq: Any, pos: int) -> tuple[int, ...]:
    items = seq
    if not isinstance(items, (tuple, list)) or any(
        isinstance(s, bool) or not isinstance(s, int) for s in items
    ):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {pos}) must be tuple of ints, not {type(seq).__name__}"
        )
    return tuple(int(s) for s in items)


def _size_args(name: str, sizes: tuple[Any, ...]) -> tuple[int, ...]:
    if not sizes:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, int):
            raise TypeError(
                f"{name}(): argument 'size' (position 1) must be tuple of ints, not {type(s).__name__}"
            )
    if any(s < 0 for s in sizes):
        raise RuntimeError("numel: integer multiplication overflow")
    return tuple(int(s) for s in sizes)


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _resize(self: Tensor, shape: tuple[int, ...]) -> Tensor:
    check_not_inference(self)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if shape == self._shape:
        return self  # PyTorch keeps the strides and does not bump the version
    off = self._be.backend.layout(self._data)[1]
    n = _numel(shape)
    need = off + n
    cap = _capacity(self)
    if need <= cap:
        self._data = call(self._be, "as_strided", self._data, shape, _contiguous_strides(shape), off)
        _remember(self, cap)
    else:
        # A new storage holding the old one's elements, with ``self`` at the same offset.
        new = zeros((need,), dtype=self.dtype, device=self._device)._data  # ember reads no garbage
        kept = min(cap, need)
        if kept > 0:
            old = call(self._be, "as_strided", self._data, (kept,), (1,), 0)
            call(self._be, "assign", call(self._be, "slice", new, (slice(0, kept, 1),)), old)
        self._data = call(self._be, "as_strided", new, shape, _contiguous_strides(shape), off)
        self._base = None
    self._shape = shape
    self._vc[0] += 1
    return self


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give ``self`` the contiguous shape ``sizes``; grows the storage when it does not fit."""
    return _resize(self, _size_args("resize_", sizes))


def resize_as_(self: Tensor, the_template: Any, memory_format: Any = None) -> Tensor:
    """``resize_`` to ``the_template``'s shape."""
    if not isinstance(the_template, Tensor):
        raise TypeError(
            "resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
            f"{type(the_template).__name__}"
        )
    return _resize(self, the_template._shape)


def _checked_strided(
    x: Tensor, size: tuple[int, ...], stride: tuple[int, ...], offset: int | None, cap: int
) -> Tensor:
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError("numel: integer multiplication overflow")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}"
        )
    off = x._be.backend.layout(x._data)[1] if offset is None else int(offset)
    if off < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {off}")
    need = off if 0 in size else off + 1 + sum((s - 1) * st for s, st in zip(size, stride))
    if need > cap:
        item = x.dtype.itemsize
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and itemsize "
            f"{item} requiring a storage size of {need * item} are out of bounds for storage of size "
            f"{cap * item}"
        )
    return as_strided(x, size, stride, off)


def as_strided_(
    self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Tensor:
    """Give ``self`` explicit sizes, strides and offset (in elements) over its storage."""
    sz, st = _ints("as_strided_", "size", size, 1), _ints("as_strided_", "stride", stride, 2)
    cap = _capacity(self)  # of ``self``: on a graph the view is taken of an alias without a base
    _apply(self, _checked_strided, (sz, st, storage_offset, cap), "AsStridedBackward1")
    _remember(self, cap)
    return self


INPLACE_VIEW_METHODS: dict[str, Any] = {
    "unsqueeze_": unsqueeze_,
    "squeeze_": squeeze_,
    "t_": t_,
    "transpose_": transpose_,
    "swapdims_": swapdims_,
    "swapaxes_": swapaxes_,
    "resize_": resize_,
    "resize_as_": resize_as_,
    "as_strided_": as_strided_,
}


def bind(cls: type) -> None:
    """Attach the methods above to ``cls`` (the Tensor class)."""
    for name, fn in INPLACE_VIEW_METHODS.items():
        setattr(cls, name, fn)
