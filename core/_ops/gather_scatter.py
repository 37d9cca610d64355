"""Index-driven reads and writes along a dimension: ``gather``, ``scatter``, ``scatter_add`` and
``masked_fill`` with their rules and checked forms, and the index checks every indexing op
shares (``INDEX_DTYPES``, ``first_outside``, ``Bounded``)."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._creation import zeros
from .._dispatch import call, host_test, to_host
from .._dtype import c_name
from .._dtype import pt_name as _pt
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel
from ._args import invalid_combination
from ._common import norm_dim, same_device
from .pointwise_binary import _scalar_for
from .select import where

PUBLIC = public(
    __name__,
    {
        "gather": op(method=True),
        "masked_fill": op(method=True, inplace=True),
        "scatter": op(method=True, inplace=True),
        "scatter_add": op(method=True, inplace=True),
    },
)
__all__ = ["gather", "masked_fill", "scatter"]


INDEX_DTYPES = (D.int64, D.int32)

_HOST_CHECK = 4096  # an index this small is checked on the host: one copy beats two reductions

_LIST_CHECK = 32  # and this small in Python: NumPy's min/max cost ~2.5 us each on a few elements


class Bounded(dict):
    """``{dim: int64 index}`` already checked and made non-negative by the op that built it,
    so ``index_put`` does not check it a second time (validate once, at the boundary)."""


def index_range(t: Tensor) -> tuple[int, int]:
    """``(min, max)`` of a non-empty integer tensor: the one cheap check every index gets."""
    n = t.numel()
    if n <= _LIST_CHECK:
        values = to_host(t._be, t._data).ravel().tolist()
        return min(values), max(values)
    if n <= _HOST_CHECK:
        a = to_host(t._be, t._data)
        return int(a.min()), int(a.max())
    return int(t.amin().item()), int(t.amax().item())


def first_outside(t: Tensor, low: int, high: int) -> tuple[int, int] | None:
    """``(flat position, value)`` of the first entry of ``t`` outside ``[low, high)``, else None.

    A valid index costs one min/max; only the error path searches for the culprit to name it.
    Up to ``_HOST_CHECK`` entries it is one host test (``ember.compile`` then guards on "all
    in range", not on the indices themselves).
    """
    if not t.numel():
        return None
    if t.numel() <= _HOST_CHECK:
        return host_test(t._be, t._data, functools.partial(_outside_on_host, low, high))  # type: ignore[no-any-return]
    lo, hi = index_range(t)
    if low <= lo and hi < high:
        return None
    return _outside_on_host(low, high, to_host(t._be, t._data))


def _outside_on_host(low: int, high: int, a: Any) -> tuple[int, int] | None:
    a = np.asarray(a).reshape(-1)
    if not a.size:
        return None
    if a.size <= _LIST_CHECK:
        values = a.tolist()
        lo, hi = min(values), max(values)
    else:
        lo, hi = int(a.min()), int(a.max())
    if low <= lo and hi < high:
        return None
    pos = int(np.flatnonzero((a < low) | (a >= high))[0])
    return pos, int(a[pos])


def index_signs(t: Tensor, size: int) -> tuple[bool, tuple[int, int] | None]:
    """(whether ``t`` has a negative entry, the first entry outside ``[-size, size)`` or None):
    what wrapping negative indices needs, in one host test for ``ember.compile``'s guard."""
    if t.numel() <= _HOST_CHECK:
        return host_test(t._be, t._data, functools.partial(_signs_on_host, size))  # type: ignore[no-any-return]
    lo, hi = index_range(t)
    bad = None if -size <= lo and hi < size else first_outside(t, -size, size)
    return lo < 0, bad


def _signs_on_host(size: int, a: Any) -> tuple[bool, tuple[int, int] | None]:
    a = np.asarray(a).reshape(-1)
    return bool(a.size and int(a.min()) < 0), _outside_on_host(-size, size, a)


def legacy_type_name(dtype: Any) -> str:
    """PyTorch's legacy tensor type name (``FloatTensor``), spelled with ember's prefix."""
    return f"ember.{_pt(dtype)}Tensor"


# -- gather / scatter ----------------------------------------------------------------------
def checked_index(input: Tensor, dim: int, index: Tensor, name: str) -> tuple[int, Tensor]:
    """``(dim, int64 index)`` for gather/scatter: int32 or int64, in ``[0, size)`` (no negatives)."""
    if not isinstance(index, Tensor) or index.dtype not in INDEX_DTYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    same_device(input, index, name)
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        which = "input" if name == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {which} tensor")
    d = norm_dim(dim, input.ndim)
    size = input._shape[d] if input._shape else 1
    bad = first_outside(index, 0, size)
    if bad is not None:
        raise RuntimeError(f"index {bad[1]} is out of bounds for dimension {d} with size {size}")
    return d, index.to(D.int64)


def _gather_rule(n: Any, g: Tensor) -> tuple:
    shape, d, index = n.ctx

    return (zeros(shape, dtype=g.dtype, device=g._device).scatter_add(d, index, g), None)


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and alike for other dims)."""
    if isinstance(index, Tensor) and not index.numel():  # PyTorch checks nothing more: nothing is read
        norm_dim(dim, input.ndim)
        return relabel(input.reshape(-1)[:0].reshape(index._shape), "GatherBackward0")  # type: ignore[attr-defined]
    d, index = checked_index(input, dim, index, "gather")
    _fits(input, d, index, None, True)
    return gather_checked(input, d, index)


def _fits(input: Tensor, d: int, index: Tensor, src: Any, gather: bool) -> None:
    """PyTorch's shape check: ``index`` no larger than ``input`` off ``d`` (nor than a ``src``
    tensor anywhere); an empty index is never checked."""
    if not index.numel() or index.ndim != input.ndim:
        return
    over = [i for i in range(index.ndim) if i != d and index._shape[i] > input._shape[i]]
    if isinstance(src, Tensor) and src.ndim == index.ndim:
        over += [i for i in range(index.ndim) if index._shape[i] > src._shape[i]]
    if not over:
        return
    words = (
        f"index {list(index._shape)} to be no larger than self {list(input._shape)} apart from dimension {d}"
    )
    if gather:
        raise RuntimeError(f"Size does not match at dimension {min(over)} expected {words}")
    tail = f" and to be no larger size than src {list(src._shape)}" if isinstance(src, Tensor) else ""
    raise RuntimeError(f"Expected {words}{tail}")


def gather_checked(input: Tensor, d: int, index: Tensor) -> Tensor:
    """``gather`` on an int64 ``index`` already known to lie in ``[0, size)``."""
    data = call(input._be, "gather", input._data, d, index._data)
    out = wrap(data, input._be, input._device, input.dtype, index._shape)
    if _grad.enabled and input.requires_grad:
        record("GatherBackward0", _gather_rule, out, (input, index), (), (input._shape, d, index))
    return out


def _scatter_rule(n: Any, g: Tensor) -> tuple:
    d, index, reduce, src_is_tensor = n.ctx
    gx = g if reduce == "add" else g.scatter(d, index, 0.0)
    gs = g.gather(d, index) if src_is_tensor and n.needs_input_grad[2] else None
    return (gx, None, gs)


def scatter(
    input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None, reduce: str | None = None
) -> Tensor:
    """A copy of ``input`` with ``src`` (tensor or scalar) written at ``index`` along ``dim``."""
    if isinstance(index, Tensor) and not index.numel():  # nothing written: PyTorch checks only dim
        norm_dim(dim, input.ndim)
        return relabel(input.clone(), "ScatterAddBackward0" if reduce == "add" else "ScatterBackward0")  # type: ignore[attr-defined]
    d, index = checked_index(input, dim, index, "scatter")
    if src is None:
        src = value
    if isinstance(src, Tensor) and src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _fits(input, d, index, src, False)
    if reduce == "multiply":
        from .indexing_scatter import scatter_multiply  # cycle: ember._ops.indexing_scatter

        return scatter_multiply(input, d, index, src)
    if reduce not in (None, "add"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    return scatter_checked(input, d, index, src, reduce)


def scatter_checked(input: Tensor, d: int, index: Tensor, src: Any, reduce: str | None) -> Tensor:
    """``scatter`` (``reduce`` None or "add") on an int64 ``index`` known to lie in ``[0, size)``."""
    if isinstance(src, Tensor):
        same_device(input, src, "scatter")
        s = src._data if src.dtype is input.dtype else src.to(input.dtype)._data
    else:
        s = _scalar_for(src, input.dtype)
    data = call(input._be, "scatter", input._data, d, index._data, s, reduce)
    out = wrap(data, input._be, input._device, input.dtype, input._shape)
    if _grad.enabled and (input.requires_grad or getattr(src, "requires_grad", False)):
        record(
            "ScatterBackward0",
            _scatter_rule,
            out,
            (input, index, src),
            (),
            (d, index, reduce, isinstance(src, Tensor)),
        )
    return out


@autocast_op("scatter_add")
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``scatter`` that sums duplicate indices."""
    if not isinstance(src, Tensor):
        raise TypeError(
            f"scatter_add(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}"
        )
    return relabel(scatter(input, dim, index, src, reduce="add"), "ScatterAddBackward0")


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with ``value`` where ``mask`` is True (mask broadcasts)."""

    if mask.dtype is not D.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {c_name(mask.dtype)}"
        )
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        value = value.to(input.dtype)
    else:
        if not isinstance(value, (bool, int, float, complex)):
            raise invalid_combination("masked_fill", (mask, value))  # the method's form: no self
        value = _fill_scalar(value, input.dtype)
    return relabel(where(mask, value, input), "MaskedFillBackward0")


def _fill_scalar(value: Any, dtype: Any) -> Any:
    """A Python fill value converted to ``dtype`` as PyTorch's masked_fill does: the result keeps
    the tensor's dtype (1.5 into int64 is 1), and a complex value has no real type to go to."""
    if dtype.is_complex:
        return value
    if isinstance(value, complex):
        kind = {"float32": "float", "float64": "double"}.get(dtype.name, dtype.name)
        raise RuntimeError(f"value cannot be converted to type {kind} without overflow")  # noqa: TRY004
    if dtype is D.bool_:
        return bool(value)
    if dtype.category < 2 and isinstance(value, float) and math.isfinite(value):
        return int(value)
    return value
