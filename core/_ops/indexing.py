"""``x[key]`` and ``x[key] = v``: basic indexing as views, advanced indexing as NumPy does.

The basic part (ints, slices, None, ...) always becomes a view through the ``slice``
primitive; integer-array and mask indices then go through the ``index``/``index_put``
composites, whose default decomposition uses ``gather``/``scatter``.
"""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._creation import tensor, zeros
from .._dispatch import call, has_kernel
from .._dtype import pt_name as _pt
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel
from ._common import broadcast_shape, norm_dim, numel, same_device, sum_to
from ._composite import NoRecord
from .convert import assign, check_inplace, inplace
from .gather_scatter import INDEX_DTYPES, Bounded, first_outside, gather_checked, index_signs
from .inplace import record_setitem
from .pointwise_binary import _scalar_for
from .search import nonzero
from .select import where
from .views import basic_slice, select

PUBLIC = public(
    __name__,
    {
        "index_put": op(method=True),
        "index_put_": op(method=True, function=False),
        "index_select": op(method=True),
    },
)
__all__ = [*PUBLIC, "getitem", "setitem"]


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
            if k.step is not None and _opt(k.step) == 0:
                raise ValueError("slice step cannot be zero")
            if k.step is not None and _opt(k.step) < 0:
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
    if v is not None and not isinstance(v, int) and not hasattr(v, "__index__"):
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    return None if v is None else _int(v)


def _int(v: Any) -> int:
    if isinstance(v, bool):
        raise TypeError("bool is not supported as a slice bound or index here")
    if isinstance(v, int):
        return v
    if hasattr(v, "__index__"):
        return v.__index__()
    if isinstance(v, str):  # PyTorch tries a str key as data for an index tensor
        raise TypeError("new(): invalid data type 'str'")
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
    negative, bad = index_signs(t, size)
    if bad is not None:
        raise IndexError(f"index {bad[1]} is out of bounds for dimension {nth} with size {size}")
    return where(t < 0, t + size, t) if negative else t


def _result_shape(shape: tuple[int, ...], dims: list[int], bshape: tuple[int, ...]) -> tuple[int, ...]:
    rest = [s for i, s in enumerate(shape) if i not in dims]
    consecutive = dims == list(range(dims[0], dims[0] + len(dims)))
    if consecutive:
        return tuple(rest[: dims[0]]) + bshape + tuple(rest[dims[0] :])
    return bshape + tuple(rest)


def _index_rule(n: Any, g: Tensor) -> tuple:
    shape, _, adv = n.ctx

    out = zeros(shape, dtype=g.dtype, device=g._device)
    if _grad.enabled and g.requires_grad:  # create_graph: the recorded, differentiable form
        return (index_put(out, adv, g, accumulate=True),)
    return (index_put_(out, adv, g, accumulate=True),)  # into the fresh zeros: no copy of them


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
    got = gather_checked(flat, 0, idx).reshape(bshape + rest_shape)
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
    if isinstance(value, Tensor) and not advanced and value._device is not x._device:
        value = value.to(x._device)  # basic-index assignment is a copy_, which crosses devices
    if isinstance(value, Tensor):
        same_device(x, value, "index_put_")
        v = value if value.dtype is x.dtype else value.to(x.dtype)
        if v._shape != shape:
            if len(v._shape) > len(shape) or (advanced and not _expandable(v._shape, shape)):
                v = _squeeze_lead(v, shape)
            else:
                v = v.expand(shape)  # basic indexing words a mismatch as expand does
        return v._data

    if value is None or isinstance(value, (list, tuple, str, dict, set)):
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
    if _grad.enabled and x._requires_grad and x.grad_fn is None and _slices_first(key):
        # PyTorch writes through the view that the ints and slices select first
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    _check_inplace(x)
    slice_key, shape, adv = _parse(x, key)
    view = basic_slice(x.detach(), slice_key, shape)
    if not adv:
        assign(view, _value_data(x, value, shape))
    else:
        if not (isinstance(value, Tensor) and not value._shape and _is_mask(key)):
            _check_source_dtype(x, value)  # only a 0-d value under one mask is a (casting) masked_fill
        _index_put_into(view, adv, value, accumulate=False)
    x._vc[0] += 1
    if _grad.enabled:
        record_setitem(x, key, value)


def _slices_first(key: Any) -> bool:
    """Does ``key`` hold an int or a slice (so PyTorch indexes a view before writing)?"""
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, slice) or (isinstance(k, int) and not isinstance(k, bool)) for k in parts)


def _is_mask(key: Any) -> bool:
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    return isinstance(key, Tensor) and key.dtype is D.bool_


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
    if _grad.enabled and (x.requires_grad or getattr(values, "requires_grad", False)):
        # recorded as index_put's node through the in-place machinery (old value kept, views rebased)
        return inplace(index_put)(x, adv, values, accumulate)
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


def _values_grad(g: Tensor, vshape: tuple[int, ...]) -> Tensor:
    """The gathered gradient summed back to the (broadcast) values' shape."""
    if g.ndim < len(vshape):  # values with extra leading 1s
        g = g.reshape((1,) * (len(vshape) - g.ndim) + g._shape)
    return sum_to(g, vshape)


def _index_put_out_rule(n: Any, g: Tensor) -> tuple:
    adv, accumulate, vshape = n.ctx
    key = _key_from(adv, g.ndim)
    gv = _values_grad(getitem(g, key), vshape) if n.needs_input_grad[1] else None
    if accumulate:
        return (g, gv)
    gx = g.clone()
    index_put_(gx.detach(), adv, 0.0)
    return (gx, gv)


@autocast_op("index_put")
def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """Out of place ``index_put_``: a copy of ``input`` with ``values`` written at ``indices``."""
    adv = _adv_from(indices)
    with NoRecord():
        out = input.clone()
        index_put_(out, adv, values, accumulate)
    if _grad.enabled and (input.requires_grad or getattr(values, "requires_grad", False)):
        vshape = values._shape if isinstance(values, Tensor) else ()
        record("IndexPutBackward0", _index_put_out_rule, out, (input, values), (), (adv, accumulate, vshape))
    return out


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """Entries of ``input`` at ``index`` (a vector or 0-d, int32 or int64, no negatives) along ``dim``."""
    if not isinstance(index, Tensor) or index.dtype not in INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = norm_dim(dim, input.ndim)
    x = input.reshape(1) if input.ndim == 0 else input
    size = x._shape[d]
    bad = first_outside(index, 0, size)
    if bad is not None:
        if d == 1 and input.ndim >= 2:  # PyTorch's CPU kernel for dim 1 words it this way
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad[1]} axis_dim={size}")
        raise IndexError("index out of range in self")
    out = _advanced(x, Bounded({d: index.reshape(-1)}))
    return relabel(out.reshape(()) if input.ndim == 0 else out, "IndexSelectBackward0")


def select_rows(weight: Tensor, index: Tensor) -> Tensor:
    """``weight[index]`` for an int32/int64 ``index`` already checked to lie in ``[0, len(weight))``."""
    return _advanced(weight, Bounded({0: index}))
