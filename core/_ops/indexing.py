"""``x[key]`` and ``x[key] = v``: basic indexing as views, advanced indexing as NumPy does.

The basic part (ints, slices, None, ...) always becomes a view through the ``slice``
primitive; integer-array and mask indices then go through the ``index``/``index_put``
composites, whose default decomposition uses ``gather``/``scatter``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ember.backends import dtypes as D

from .._creation import arange, tensor, zeros
from .._dispatch import call, has_kernel, to_host
from .._dtype import pt_name as _pt
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel
from ._common import broadcast_shape, norm_dim, numel, same_device
from ._composite import NoRecord
from .convert import assign, check_inplace
from .inplace import record_setitem
from .join import stack
from .pointwise_binary import _scalar_for
from .select import where
from .views import basic_slice, select

__all__ = [
    "gather",
    "getitem",
    "index_put",
    "index_put_",
    "index_select",
    "masked_fill",
    "nonzero",
    "scatter",
    "setitem",
]

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
    return int(t.amin().item()), int(t.amax().item())  # type: ignore[attr-defined]


def first_outside(t: Tensor, low: int, high: int) -> tuple[int, int] | None:
    """``(flat position, value)`` of the first entry of ``t`` outside ``[low, high)``, else None.

    A valid index costs one min/max; only the error path searches for the culprit to name it.
    """
    if not t.numel():
        return None
    lo, hi = index_range(t)
    if low <= lo and hi < high:
        return None
    a = np.asarray(to_host(t._be, t._data)).reshape(-1)
    pos = int(np.flatnonzero((a < low) | (a >= high))[0])
    return pos, int(a[pos])


def legacy_type_name(dtype: Any) -> str:
    """PyTorch's legacy tensor type name (``FloatTensor``), spelled with ember's prefix."""
    return f"ember.{_pt(dtype)}Tensor"


def _to_index_tensor(x: Tensor, k: Any) -> Tensor:

    if isinstance(k, Tensor):
        return k
    t = tensor(k, device=x._device)
    if t.numel() == 0:
        t = t.to(D.int64)
    return t


def _parse(x: Tensor, key: Any) -> tuple[tuple[Any, ...], tuple[int, ...], dict[int, Tensor]]:
    """(slice key for the basic view, the view's shape, {view dim: index tensor})."""
    if not isinstance(key, tuple):
        key = (key,)
    items: list[Any] = []
    empty: set[int] = set()  # positions of ``False`` keys: a new dim of size 0
    key = tuple(_as_mask(x, k) for k in key)
    for pos, k in enumerate(key):
        if isinstance(k, Tensor) and k.dtype is D.bool_:
            same_device(x, k, "index")
            if k.ndim == 0:  # x[True] adds a dim of 1, x[False] one of 0
                if not k.item():
                    empty.add(len(items))
                items.append(None)
                continue
            _check_mask(x, key, pos, k)
            items.extend(nonzero(k, as_tuple=True))
            continue
        items.append(k)
    consumed = sum(0 if (k is None or k is Ellipsis) else 1 for k in items)
    if consumed and x.ndim == 0:
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
            "to convert a 0-dim tensor to a number"
        )
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    slice_key: list[Any] = []
    shape: list[int] = []
    adv: dict[int, Tensor] = {}
    d = 0
    skipped = 0  # dims a second ``...`` stepped over (PyTorch moves its position on by as many)
    for i_item, k in enumerate(items):
        if skipped and k is not Ellipsis:
            raise IndexError(
                f"index {k!r} at dimension {d + skipped} is out of range for a tensor of dimension {x.ndim}"
            )
        if k is Ellipsis:
            if any(j is Ellipsis for j in items[:i_item]):
                skipped += x.ndim - consumed
                continue
            for _ in range(x.ndim - consumed):
                slice_key.append(slice(0, x._shape[d], 1))
                shape.append(x._shape[d])
                d += 1
        elif k is None:
            if i_item in empty:
                adv[len(shape)] = _empty_index(x)
            shape.append(1)
        elif isinstance(k, Tensor):
            if k.dtype.category != 1:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            slice_key.append(slice(0, x._shape[d], 1))
            adv[len(shape)] = k
            shape.append(x._shape[d])
            d += 1
        elif isinstance(k, slice):
            if k.step is not None and _int(k.step) == 0:
                raise ValueError("slice step cannot be zero")
            if k.step is not None and _int(k.step) < 0:
                raise ValueError("step must be greater than zero")
            s = slice(*slice(_opt(k.start), _opt(k.stop), _opt(k.step)).indices(x._shape[d]))
            slice_key.append(s)
            shape.append(len(range(s.start, s.stop, s.step)))
            d += 1
        else:
            i = _int(k)
            size = x._shape[d]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
            slice_key.append(i + size if i < 0 else i)
            d += 1
    while d < x.ndim:
        slice_key.append(slice(0, x._shape[d], 1))
        shape.append(x._shape[d])
        d += 1
    return tuple(slice_key), tuple(shape), adv


def _as_mask(x: Tensor, k: Any) -> Any:
    """Sequences become index tensors; Python bools and uint8 tensors become bool masks."""
    if isinstance(k, bool):
        return tensor(k, device=x._device)
    if isinstance(k, (list, tuple)) or (hasattr(k, "__array__") and not isinstance(k, Tensor)):
        k = _to_index_tensor(x, k)
        if k.dtype.category == 2:  # PyTorch truncates a sequence of floats to int64
            k = k.to(D.int64)
    if isinstance(k, Tensor) and k.dtype is D.uint8:
        return k != 0  # PyTorch still accepts (deprecated) uint8 masks
    return k


def _check_mask(x: Tensor, key: tuple, pos: int, mask: Tensor) -> None:
    """A mask must match the shape of the dims it covers (PyTorch's IndexError otherwise)."""
    before = key[:pos]
    if any(k is Ellipsis for k in before):
        after = key[pos + 1 :]
        start = x.ndim - mask.ndim - sum(_dims_of(k) for k in after)
    else:
        start = sum(_dims_of(k) for k in before)
    for j, size in enumerate(mask._shape):
        d = start + j
        if d >= x.ndim or x._shape[d] != size:
            raise IndexError(
                f"The shape of the mask {list(mask._shape)} at index {j} does not match the shape of the "
                f"indexed tensor {list(x._shape)} at index {d}"
            )


def _dims_of(k: Any) -> int:
    if k is None or k is Ellipsis:
        return 0
    if isinstance(k, Tensor) and k.dtype is D.bool_:
        return k.ndim
    return 1


def _empty_index(x: Tensor) -> Tensor:

    return zeros(0, dtype=D.int64, device=x._device)


def _opt(v: Any) -> Any:
    return None if v is None else _int(v)


def _int(v: Any) -> int:
    if isinstance(v, bool):
        raise TypeError("bool is not supported as a slice bound or index here")
    if isinstance(v, int):
        return v
    if hasattr(v, "__index__"):
        return v.__index__()
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
        f"(got {type(v).__name__})"
    )


def _checked(view: Tensor, adv: dict[int, Tensor]) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    """Index arrays per view dim (None where not indexed), wrapped and bounds-checked."""
    bshape: tuple[int, ...] = ()
    for t in adv.values():
        same_device(view, t, "index")
        if t.dtype not in INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        bshape = broadcast_shape(bshape, t._shape)
    arrays: list[Any] = [None] * view.ndim
    for nth, (d, t) in enumerate(adv.items()):
        if not isinstance(adv, Bounded):
            t = _wrapped(t, view._shape[d], nth)
        t = t.to(D.int64)
        arrays[d] = t.expand(bshape)._data if t._shape != bshape else t._data
    return tuple(arrays), bshape


def _wrapped(t: Tensor, size: int, nth: int) -> Tensor:
    """``t`` with negative entries counted from the end; PyTorch names the ``nth`` index tensor."""
    if not t.numel():
        return t
    lo, hi = index_range(t)
    if lo < -size or hi >= size:
        bad = first_outside(t, -size, size)
        raise IndexError(f"index {bad[1]} is out of bounds for dimension {nth} with size {size}")  # type: ignore[index]
    return where(t < 0, t + size, t) if lo < 0 else t


def _result_shape(shape: tuple[int, ...], dims: list[int], bshape: tuple[int, ...]) -> tuple[int, ...]:
    rest = [s for i, s in enumerate(shape) if i not in dims]
    consecutive = dims == list(range(dims[0], dims[0] + len(dims)))
    if consecutive:
        return tuple(rest[: dims[0]]) + bshape + tuple(rest[dims[0] :])
    return bshape + tuple(rest)


def _index_rule(n: Any, g: Tensor) -> tuple:
    shape, _, adv = n.ctx

    out = zeros(shape, dtype=g.dtype, device=g._device)
    return (index_put(out, adv, g, accumulate=True),)


def _advanced(view: Tensor, adv: dict[int, Tensor]) -> Tensor:
    indices, bshape = _checked(view, adv)
    dims = sorted(adv)
    shape = _result_shape(view._shape, dims, bshape)
    if has_kernel(view._be, "index"):
        data = call(view._be, "index", view._data, indices)
    else:
        data = _index_decomposed(view, indices, dims, bshape, shape)
    out = wrap(data, view._be, view._device, view.dtype, shape)
    if _grad.enabled and view.requires_grad:
        be, dev = view._be, view._device
        seen = Bounded({d: wrap(indices[d], be, dev, D.int64, bshape) for d in dims})  # backward: no re-check
        record("IndexBackward0", _index_rule, out, (view,), (), (view._shape, indices, seen))
    return out


def _moved_in_place(dims: list[int]) -> bool:
    """True when NumPy keeps consecutive advanced dims in place, away from the front.

    (Comparing shapes is not enough: a (2, 2) result looks the same either way.)
    """
    return dims[0] > 0 and dims == list(range(dims[0], dims[0] + len(dims)))


def _index_decomposed(view: Tensor, indices: tuple, dims: list[int], bshape: tuple, shape: tuple) -> Any:
    """``index`` through permute, a linear index and ``gather`` (any backend)."""
    be, dev = view._be, view._device
    rest = [i for i in range(view.ndim) if i not in dims]
    v2 = view.detach().permute(dims + rest).contiguous()
    adv_sizes = [view._shape[d] for d in dims]
    rest_shape = tuple(view._shape[d] for d in rest)
    lin = None
    for d, size in zip(dims, adv_sizes):
        t = wrap(indices[d], be, dev, D.int64, bshape)
        lin = t if lin is None else lin * size + t
    n = numel(bshape)
    flat = v2.reshape((numel(tuple(adv_sizes)),) + rest_shape)
    idx = lin.reshape((n,) + (1,) * len(rest_shape)).expand((n,) + rest_shape)  # type: ignore[union-attr]
    got = gather_checked(flat, 0, idx).reshape(bshape + rest_shape)  # type: ignore[arg-type]
    if _moved_in_place(dims):  # consecutive advanced dims not at the front: move them back
        first = dims[0]
        nb = len(bshape)
        order = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, nb + len(rest_shape)))
        got = got.permute(order)
    return got.contiguous()._data


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]`` with PyTorch's (NumPy's) semantics."""
    if isinstance(key, int) and not isinstance(key, bool) and x.ndim:
        size = x._shape[0]  # the common x[i] fast path
        if not -size <= key < size:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {size}")

        return select(x, 0, key)
    slice_key, shape, adv = _parse(x, key)
    view = basic_slice(x, slice_key, shape) if slice_key or shape != x._shape else x.view(x._shape)
    if not adv:
        return view
    return _advanced(view, adv)


def _value_data(x: Tensor, value: Any, shape: tuple[int, ...], advanced: bool = False) -> Any:
    if isinstance(value, Tensor) and not value._shape and value.is_cpu and not x.is_cpu:
        value = value.item()  # a 0-d CPU tensor is a scalar on every device, as in PyTorch
    if isinstance(value, Tensor):
        same_device(x, value, "index_put_")
        v = value if value.dtype is x.dtype else value.to(x.dtype)
        if v._shape != shape:
            if len(v._shape) > len(shape) or (advanced and not _expandable(v._shape, shape)):
                v = _squeeze_lead(v, shape)
            else:
                v = v.expand(shape)  # basic indexing words a mismatch as expand does
        return v._data

    if isinstance(value, (list, tuple)):
        raise TypeError(f"can't assign a {type(value).__name__} to a ember.{_pt(x.dtype)}Tensor")
    return _scalar_for(value, x.dtype)


def _expandable(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    return len(src) <= len(dst) and all(s in (1, t) for s, t in zip(reversed(src), reversed(dst)))


def _squeeze_lead(v: Tensor, shape: tuple[int, ...]) -> Tensor:
    lead = max(len(v._shape) - len(shape), 0)
    if any(s != 1 for s in v._shape[:lead]) or not _expandable(v._shape[lead:], shape):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(v._shape)} cannot be broadcast to indexing result of shape {list(shape)}"
        )
    return v.reshape(v._shape[lead:]).expand(shape)


def _check_inplace(x: Tensor) -> None:

    check_inplace(x)


def setitem(x: Tensor, key: Any, value: Any) -> None:
    """``x[key] = value``: writes through to ``x`` (and any tensor it is a view of)."""
    _check_inplace(x)
    slice_key, shape, adv = _parse(x, key)
    view = basic_slice(x.detach(), slice_key, shape)
    if not adv:
        assign(view, _value_data(x, value, shape))
    else:
        _index_put_into(view, adv, value, accumulate=False)
    x._vc[0] += 1
    if _grad.enabled:
        record_setitem(x, key, value)


def _index_put_into(view: Tensor, adv: dict[int, Tensor], value: Any, accumulate: bool) -> None:
    indices, bshape = _checked(view, adv)
    dims = sorted(adv)
    shape = _result_shape(view._shape, dims, bshape)
    vals = _value_data(view, value, shape, advanced=True)
    if has_kernel(view._be, "index_put"):
        call(view._be, "index_put", view._data, indices, vals, accumulate)
        return
    _index_put_decomposed(view, indices, dims, bshape, shape, vals, accumulate)


def _index_put_decomposed(
    view: Tensor, indices: tuple, dims: list[int], bshape: tuple, shape: tuple, vals: Any, accumulate: bool
) -> None:
    """``index_put`` through a linear index and ``scatter`` on a contiguous copy."""
    be, dev = view._be, view._device
    rest = [i for i in range(view.ndim) if i not in dims]
    v2 = view.permute(dims + rest)
    adv_sizes = [view._shape[d] for d in dims]
    rest_shape = tuple(view._shape[d] for d in rest)
    lin = None
    for d, size in zip(dims, adv_sizes):
        t = wrap(indices[d], be, dev, D.int64, bshape)
        lin = t if lin is None else lin * size + t
    n, r = numel(bshape), numel(rest_shape)
    if isinstance(vals, (bool, int, float, complex)):
        src: Any = vals
    else:
        vt = wrap(vals, be, dev, view.dtype, shape)
        if _moved_in_place(dims):
            first, nb = dims[0], len(bshape)
            order = list(range(first, first + nb)) + list(range(first)) + list(range(first + nb, len(shape)))
            vt = vt.permute(order)
        src = vt.reshape(n, r)._data
    flat = v2.contiguous().reshape(numel(tuple(adv_sizes)), r)
    idx = lin.reshape(n, 1).expand(n, r)._data  # type: ignore[union-attr]
    out = call(be, "scatter", flat._data, 0, idx, src, "add" if accumulate else None)
    call(be, "assign", v2._data, call(be, "reshape", out, v2._shape))


def _key_from(adv: dict[int, Tensor], ndim: int) -> tuple:
    return tuple(adv.get(d, slice(None)) for d in range(ndim))


def index_put_(x: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """In place: ``x[indices] = values`` (``+=`` with ``accumulate``, duplicates summed)."""
    adv = _adv_from(indices)
    _check_source_dtype(x, values)
    _check_inplace(x)
    _index_put_into(x.detach(), adv, values, accumulate)
    x._vc[0] += 1
    return x


def _check_source_dtype(x: Tensor, values: Any) -> None:
    """index_put(_) never casts a tensor source (``x[i] = v`` does), as in PyTorch."""
    if isinstance(values, Tensor) and values.dtype != x.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, "
            f"got {_pt(x.dtype)} for the destination and {_pt(values.dtype)} for the source."
        )


def _adv_from(indices: Any) -> dict[int, Tensor]:
    """``{dim: index}`` from ``index_put_``'s sequence; a bool (or uint8) mask covers its dims."""
    if isinstance(indices, dict):
        return indices
    adv: dict[int, Tensor] = {}
    d = 0
    for t in indices:
        if isinstance(t, Tensor) and t.dtype in (D.bool_, D.uint8):
            for part in nonzero(t != 0 if t.dtype is D.uint8 else t, as_tuple=True):
                adv[d] = part
                d += 1
            continue
        if t is not None:
            adv[d] = t
        d += 1
    return adv


def _index_put_out_rule(n: Any, g: Tensor) -> tuple:
    adv, accumulate = n.ctx
    key = _key_from(adv, g.ndim)
    gv = getitem(g, key) if n.needs_input_grad[1] else None
    if accumulate:
        return (g, gv)
    gx = g.clone()
    index_put_(gx.detach(), adv, 0.0)
    return (gx, gv)


def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """Out of place ``index_put_``: a copy of ``input`` with ``values`` written at ``indices``."""
    adv = _adv_from(indices)
    with NoRecord():
        out = input.clone()
        index_put_(out, adv, values, accumulate)
    if _grad.enabled and (input.requires_grad or getattr(values, "requires_grad", False)):
        record("IndexPutBackward0", _index_put_out_rule, out, (input, values), (), (adv, accumulate))
    return out


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Coordinates of non-zero elements: ``(count, ndim)`` int64, or one tensor per dim."""
    if has_kernel(input._be, "nonzero"):
        data = call(input._be, "nonzero", input._data)
        out = wrap(data, input._be, input._device, D.int64, _nonzero_shape(input, data))
    else:
        out = _nonzero_decomposed(input)
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
    d, index = checked_index(input, dim, index, "gather")
    return gather_checked(input, d, index)


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
    d, index = checked_index(input, dim, index, "scatter")
    if src is None:
        src = value
    if reduce == "multiply":
        from .indexing_scatter import scatter_multiply  # cycle: ember._ops.indexing_scatter

        return scatter_multiply(input, d, index, src)
    if reduce not in (None, "add"):
        raise RuntimeError(
            f"reduce argument must be either add or multiply, got {reduce} (only 'add' is supported yet)"
        )
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


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``scatter`` that sums duplicate indices."""
    return relabel(scatter(input, dim, index, src, reduce="add"), "ScatterAddBackward0")


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """Entries of ``input`` at ``index`` (a vector or 0-d, int32 or int64, no negatives) along ``dim``."""
    if not isinstance(index, Tensor) or index.dtype not in INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = norm_dim(dim, input.ndim)
    x = input.reshape(1) if input.ndim == 0 else input  # type: ignore[attr-defined]
    size = x._shape[d]
    bad = first_outside(index, 0, size)
    if bad is not None:
        if d == 1 and input.ndim >= 2:  # PyTorch's CPU kernel for dim 1 words it this way
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad[1]} axis_dim={size}")
        raise IndexError("index out of range in self")
    out = _advanced(x, Bounded({d: index.reshape(-1)}))  # type: ignore[attr-defined]
    return relabel(out.reshape(()) if input.ndim == 0 else out, "IndexSelectBackward0")


def select_rows(weight: Tensor, index: Tensor) -> Tensor:
    """``weight[index]`` for an int32/int64 ``index`` already checked to lie in ``[0, len(weight))``."""
    return _advanced(weight, Bounded({0: index}))


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with ``value`` where ``mask`` is True (mask broadcasts)."""

    if mask.dtype is not D.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype.name}"
        )
    return relabel(
        where(mask, value if not isinstance(value, Tensor) else value.to(input.dtype), input),
        "MaskedFillBackward0",
    )
