"""Shared pieces of op implementations: broadcasting, casting, shape reduction for grads."""

from __future__ import annotations

from typing import Any

from ember.backends import DType

from .._dispatch import call
from .._tensor import Tensor, wrap
from ._args import check_tensor, must_be

__all__ = [
    "broadcast_shape",
    "cast_data",
    "expand_data",
    "is_tensor",
    "norm_dim",
    "norm_dims",
    "numel",
    "same_device",
    "sum_to",
]

_BCAST: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, ...]] = {}


def _broadcast_uncached(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i in range(n - 1, -1, -1):  # from the last dim, so the error names the one PyTorch names
        x, y = pa[i], pb[i]
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                f"at non-singleton dimension {i}"
            )
    return tuple(reversed(out))


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two shapes, with PyTorch's error text; cached (the hot path)."""
    key = (a, b)
    r = _BCAST.get(key)
    if r is None:
        r = _broadcast_uncached(a, b)
        if len(_BCAST) < 4096:
            _BCAST[key] = r
    return r


def expand_data(t: Tensor, shape: tuple[int, ...]) -> Any:
    """The native array of ``t`` broadcast to ``shape`` (a view, no copy)."""
    if t._shape == shape:
        return t._data
    return call(t._be, "expand", t._data, shape)


def cast_data(t: Tensor, dtype: DType) -> Any:
    if t.dtype is dtype:
        return t._data
    return call(t._be, "cast", t._data, dtype)


def same_device(a: Tensor, b: Tensor, op: str) -> None:
    try:
        same = a._device is b._device
    except AttributeError:  # not a Tensor: PyTorch's parser error, paid only on this path
        check_tensor(op, "input", a, 1)
        check_tensor(op, "other", b, 2)
        raise
    if not same:
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, "
            f"{a._device} and {b._device}! (when checking arguments for {op})"
        )


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def norm_dim(d: int, ndim: int, fn: str = "", arg: str = "dim", pos: int | None = None) -> int:
    """``d`` in ``[0, ndim)``; ``fn``/``arg``/``pos`` name the argument in PyTorch's type error."""
    n = max(ndim, 1)
    if not isinstance(d, int):
        if fn:
            raise must_be(fn, arg, "int", d, pos)
        raise TypeError(f"dim must be an int, got {type(d).__name__}")
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d + n if d < 0 else d


def norm_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """Sorted non-negative axes for a reduction; ``None`` or ``()`` means all of them."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, int):
        return (norm_dim(dim, ndim),)
    dims = [norm_dim(d, ndim) for d in dim]
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(sorted(dims))


def sum_to(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum a broadcast gradient back down to an input's ``shape``."""
    if g._shape == shape:
        return g
    lead = len(g._shape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and g._shape[i + lead] != 1
    )
    out = g.sum(dims, keepdim=True) if dims else g
    if lead:
        out = out.reshape(shape)
    return out


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def new_like(t: Tensor, data: Any, dtype: DType, shape: tuple[int, ...]) -> Tensor:
    return wrap(data, t._be, t._device, dtype, shape)
