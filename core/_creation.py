"""Tensor creation: from data, filled, ranges; everything lands on the requested device."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from ember.backends import DType, UnsupportedDTypeError
from ember.backends import dtypes as D

from ._device import resolve
from ._dispatch import call, from_host
from ._dtype import get_default_dtype
from ._ops._args import check_dtype, check_number, check_tensor, int_tuple, invalid_combination, must_be
from ._public import op, public
from ._tensor import Tensor, wrap

PUBLIC = public(
    __name__,
    {
        "arange": op(),
        "as_tensor": op("asarray"),
        "empty": op(),
        "empty_like": op(),
        "eye": op(),
        "from_dlpack": op(),
        "from_numpy": op(),
        "full": op(),
        "full_like": op(),
        "linspace": op(),
        "logspace": op(),
        "ones": op(),
        "ones_like": op(),
        "scalar_tensor": op(),
        "tensor": op(),
        "zeros": op(),
        "zeros_like": op(),
    },
)
__all__ = [*PUBLIC, "asarray", "numpy_dtype"]

_NP_NAMES = {d: d.name for d in D.ALL_DTYPES}


def numpy_dtype(d: DType) -> np.dtype:
    """The NumPy dtype that carries ``d`` on the host (bfloat16 through ml_dtypes)."""
    if d is D.bfloat16:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(d.name)


def _from_np_dtype(nd: np.dtype) -> DType:
    if nd.name == "bfloat16":
        return D.bfloat16
    d = D.DTYPES_BY_NAME.get(nd.name)
    if d is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{nd.type.__name__}. The only supported types are: float64, "
            "float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
        )
    return d


def _check_dtype(lb: Any, dtype: DType) -> None:
    if dtype not in lb.backend.dtypes:
        names = ", ".join(d.name for d in D.ALL_DTYPES if d in lb.backend.dtypes)
        raise UnsupportedDTypeError(
            f"backend '{lb.name}' has no {dtype.name} support (supported: {names}); use another "
            "dtype or .to('cpu')"
        )


def _upload(host: np.ndarray, dtype: DType, device: Any, requires_grad: bool) -> Tensor:
    dev, lb = resolve(device)
    _check_dtype(lb, dtype)
    t = wrap(from_host(lb, host, dev.index or 0), lb, dev, dtype, tuple(host.shape))
    return _requiring_grad(t) if requires_grad else t


def _requiring_grad(t: Tensor) -> Tensor:
    """``t`` marked as requiring grad; factory functions word the error as PyTorch's do."""
    if t.dtype.category < 2:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t._requires_grad = True
    return t


def _infer(data: Any) -> np.ndarray:
    try:
        host = np.array(data)
    except ValueError as e:
        empty = _ragged(data)
        if empty is not None:
            return empty
        raise ValueError(f"expected a rectangular nested sequence: {e}") from None
    if host.dtype == object or host.dtype.kind in "USV":
        _check_leaves(data)  # only here: walking the data in Python costs
    if host.dtype == object:
        if isinstance(_first(data), int):
            raise ValueError("Overflow when unpacking long long")
        raise TypeError(f"Could not infer dtype of {type(_first(data)).__name__}")
    return host


def _leaves(data: Any) -> Any:
    if isinstance(data, (list, tuple)):
        for x in data:
            yield from _leaves(x)
    else:
        yield data


def _check_leaves(data: Any) -> None:
    """PyTorch's refusals of Python data that holds something other than numbers: strings are an
    invalid data type (a list of only strings has too many dimensions), anything else has no dtype."""
    if isinstance(data, np.ndarray) or hasattr(data, "__array__"):
        return
    leaves = list(_leaves(data))
    odd = [x for x in leaves if not isinstance(x, (bool, int, float, complex, np.generic))]
    if not odd:
        return
    if isinstance(odd[0], str):
        if isinstance(data, (list, tuple)) and len(odd) == len(leaves):
            raise ValueError("too many dimensions 'str'")
        raise TypeError("new(): invalid data type 'str'")
    raise RuntimeError(f"Could not infer dtype of {type(odd[0]).__name__}")


def _ragged(data: Any) -> np.ndarray | None:
    """Raise PyTorch's error for nested data that is not rectangular: the sizes come from the
    chain of first elements, then each sequence is checked in order, as PyTorch stores them.
    When those sizes hold no element PyTorch stores nothing, so checks nothing: the empty
    array of that shape is returned (``[[], [1]]`` is a 2x0 tensor)."""
    sizes = []
    x = data
    while isinstance(x, (list, tuple)):
        sizes.append(len(x))
        if not x:
            break
        x = x[0]
    leaves = list(_leaves(data))
    if any(isinstance(v, str) for v in leaves):
        raise TypeError("new(): invalid data type 'str'")
    if 0 in sizes:
        kind = np.complex128 if any(isinstance(v, complex) for v in leaves) else np.float64
        return np.empty(sizes, dtype=kind)
    floats = any(isinstance(v, float) for v in leaves)

    def walk(x: Any, dim: int) -> None:
        if dim == len(sizes):
            if isinstance(x, (list, tuple)):
                kind = type(x).__name__
                raise TypeError(
                    f"must be real number, not {kind}"
                    if floats
                    else f"'{kind}' object cannot be interpreted as an integer"
                )
            return
        if not isinstance(x, (list, tuple)):
            raise TypeError("not a sequence")
        if len(x) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(x)})")
        for v in x:
            walk(v, dim + 1)

    walk(data, 0)
    return None


def _first(data: Any) -> Any:
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return data


def _default_for(host: np.ndarray, data: Any) -> DType:
    kind = host.dtype.kind
    if isinstance(data, np.ndarray) or (hasattr(data, "dtype") and not isinstance(data, (list, tuple))):
        return _from_np_dtype(host.dtype)
    if kind == "b":
        return D.bool_
    if kind in "iu":
        return D.int64
    if kind == "f":
        return get_default_dtype()
    if kind == "c":
        return D.complex128 if get_default_dtype() is D.float64 else D.complex64
    return _from_np_dtype(host.dtype)


def _convert(host: np.ndarray, dtype: DType, checked: bool = True) -> np.ndarray:
    """Convert Python data to ``dtype``; out-of-range integers raise as in PyTorch.

    ``checked=False`` for NumPy arrays, which PyTorch casts (wrapping) without a check.
    """
    if checked and dtype.category == 1 and host.dtype.kind in "iub" and host.size:
        info = np.iinfo(numpy_dtype(dtype))
        lo, hi = host.min(), host.max()
        # PyTorch lets negative values wrap into uint8 (two's complement) but not large ones.
        low_ok = lo >= info.min or dtype is D.uint8
        if not low_ok or hi > info.max:
            if dtype is D.int64:
                raise ValueError("Overflow when unpacking long long")
            raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
    if dtype.category == 1 and host.dtype.kind == "f" and host.size and not _floats_fit(host, dtype, checked):
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
    if checked and host.dtype.kind == "c" and dtype.category in (1, 2) and host.size:
        # Python's own conversions refuse, as PyTorch's element-by-element copy does
        raise TypeError(
            "must be real number, not complex"
            if dtype.category == 2
            else "'complex' object cannot be interpreted as an integer"
        )
    if host.dtype.kind == "c" and dtype.category < 3:
        host = host != 0 if dtype is D.bool_ else host.real
    with np.errstate(over="ignore"):  # float64 -> float32 overflow gives inf, as in PyTorch
        return np.array(host, dtype=numpy_dtype(dtype), order="C", copy=True)


def _floats_fit(host: np.ndarray, dtype: DType, checked: bool) -> bool:
    """Finite, and (for Python data) inside the integer type's range before truncation."""
    if not np.isfinite(host).all():
        return False
    if not checked:
        return True
    info = np.iinfo(numpy_dtype(dtype))
    return bool(host.max() <= info.max) and bool(host.min() >= info.min)  # in float, as PyTorch


def tensor(
    data: Any, *, dtype: DType | None = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A new tensor holding a copy of ``data`` (numbers, nested lists, arrays, tensors).

    Example: ``ember.tensor([[1., 2.], [3., 4.]], requires_grad=True)``.
    """
    if isinstance(data, Tensor):
        src = data.detach()
        out = src.to(device=device if device is not None else src.device, dtype=dtype or src.dtype).clone()
        return _requiring_grad(out) if requires_grad else out
    if isinstance(data, (list, tuple)) and data and _has_tensors(data):
        data = _tensors_to_lists(data)
    host = _infer(data)
    dt = dtype or _default_for(host, data)
    if not isinstance(dt, DType):
        raise TypeError(f"tensor(): argument 'dtype' must be ember.dtype, not {type(dt).__name__}")
    return _upload(_convert(host, dt, not isinstance(data, np.ndarray)), dt, device, requires_grad)


def _has_tensors(data: Any) -> bool:
    return any(
        isinstance(x, Tensor) or (isinstance(x, (list, tuple)) and x and _has_tensors(x)) for x in data
    )


def _tensors_to_lists(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_lists(x) for x in data]
    return data


def scalar_tensor(value: Any, *, dtype: DType | None = None, device: Any = None) -> Tensor:
    return tensor(value, dtype=dtype or get_default_dtype(), device=device)


def as_tensor(data: Any, dtype: DType | None = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory with a tensor or CPU array when nothing changes."""
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data.device, dtype=dtype or data.dtype)
    if isinstance(data, np.ndarray) and (dtype is None or numpy_dtype(dtype) == data.dtype):
        dev, _ = resolve(device)
        if dev.type == "cpu":
            return from_numpy(data).to(dev)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``ndarray`` (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dt = _from_np_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making a "
            "copy of your array  with array.copy().) "
        )
    dev, lb = resolve("cpu")
    return wrap(from_host(lb, ndarray, 0), lb, dev, dt, tuple(ndarray.shape))


def from_dlpack(ext: Any) -> Tensor:
    """A tensor sharing memory with any object that implements ``__dlpack__`` (host memory)."""
    return from_numpy(np.from_dlpack(ext))


def _size(size: Sequence[Any], fn: str = "zeros") -> tuple[int, ...]:
    """Varargs sizes or one sequence of them, with the errors of PyTorch's parser (``fn``)."""
    if len(size) == 1 and type(size[0]).__name__ == "Size":
        size = tuple(size[0])
    shape = int_tuple(fn, "size", size)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _fill(shape: tuple[int, ...], value: Any, dtype: DType, device: Any, requires_grad: bool) -> Tensor:
    dev, lb = resolve(device)
    _check_dtype(lb, dtype)
    from ._ops.pointwise_binary import _scalar_for

    t = wrap(call(lb, "full", shape, _scalar_for(value, dtype), dtype, dev.index or 0), lb, dev, dtype, shape)
    return _requiring_grad(t) if requires_grad else t


def zeros(*size: Any, dtype: DType | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros: ``ember.zeros(2, 3)``."""
    check_dtype("zeros", "dtype", dtype)
    return _fill(_size(size, "zeros"), 0, dtype or get_default_dtype(), device, requires_grad)


def ones(*size: Any, dtype: DType | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones: ``ember.ones(2, 3)``."""
    check_dtype("ones", "dtype", dtype)
    return _fill(_size(size, "ones"), 1, dtype or get_default_dtype(), device, requires_grad)


def empty(*size: Any, dtype: DType | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (ember fills it with zeros: no undefined reads)."""
    check_dtype("empty", "dtype", dtype)
    _size(size, "empty")
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(
    size: Sequence[int],
    fill_value: Any,
    *,
    dtype: DType | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype follows the value's kind by default."""
    if isinstance(fill_value, Tensor) and fill_value.ndim == 0:
        fill_value = fill_value.item()
    if isinstance(fill_value, Tensor) or not isinstance(fill_value, (bool, int, float, complex)):
        raise TypeError(
            f"full(): argument 'fill_value' (position 2) must be Number, not {type(fill_value).__name__}"
        )
    check_dtype("full", "dtype", dtype)
    if dtype is None:
        from ._dtype import scalar_dtype

        dtype = scalar_dtype(fill_value)
    shape = _size((size,), "full")
    _check_fits(fill_value, dtype, math.prod(shape))
    if dtype.name == "bool":
        fill_value = bool(fill_value)
    elif isinstance(fill_value, complex) and not dtype.is_complex:
        fill_value = fill_value.real  # its imaginary part is 0: _check_fits refused any other
    return _fill(shape, fill_value, dtype, device, requires_grad)


# the C++ types PyTorch names when a fill value does not fit, and their ranges
_INT_RANGES = {
    "uint8": ("uint8_t", 0, 2**8 - 1),
    "int8": ("int8_t", -(2**7), 2**7 - 1),
    "int16": ("int16_t", -(2**15), 2**15 - 1),
    "int32": ("int", -(2**31), 2**31 - 1),
    "int64": ("int64_t", -(2**63), 2**63 - 1),
}
# the largest finite value of each float type, by the C++ name PyTorch's error gives
_FLOAT_MAX = {
    "float16": ("c10::Half", 65504.0),
    "bfloat16": ("c10::BFloat16", 3.3895313892515355e38),
    "float32": ("float", 3.4028234663852886e38),
    "float64": ("double", math.inf),
}


def _check_fits(value: Any, dtype: DType, numel: int) -> None:
    """PyTorch's checked conversion of a fill value: ints must hold it, a float type a finite one,
    and no real type takes a complex value. Filling one element goes through ``double`` for the
    16-bit floats (its overflow is inf, its complex error names double), as PyTorch's does."""
    if dtype.is_complex or dtype.name == "bool":
        return
    real = value.real if isinstance(value, complex) and not value.imag else value
    if dtype.name in _INT_RANGES:
        ctype, lo, hi = _INT_RANGES[dtype.name]
        if isinstance(real, complex) or not math.isfinite(real) or not lo <= real <= hi:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return
    ctype, top = _FLOAT_MAX.get(dtype.name, ("double", math.inf))
    if numel == 1 and dtype.name in ("float16", "bfloat16"):
        ctype, top = "double", math.inf
    if isinstance(real, complex) or (math.isfinite(real) and abs(real) > top):
        raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")


def _like(fn: str, t: Tensor, dtype: DType | None, device: Any) -> tuple[DType, Any]:
    if not isinstance(t, Tensor) or (dtype is not None and not isinstance(dtype, DType)):
        check_tensor(fn, "input", t, 1)
        check_dtype(fn, "dtype", dtype)
    return dtype or t.dtype, device if device is not None else t._device


def zeros_like(
    input: Tensor, *, dtype: DType | None = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    dt, dev = _like("zeros_like", input, dtype, device)
    return _fill(input._shape, 0, dt, dev, requires_grad)


def ones_like(
    input: Tensor, *, dtype: DType | None = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    dt, dev = _like("ones_like", input, dtype, device)
    return _fill(input._shape, 1, dt, dev, requires_grad)


def empty_like(
    input: Tensor, *, dtype: DType | None = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    _like("empty_like", input, dtype, device)
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: DType | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    dt, dev = _like("full_like", input, dtype, device)
    check_number("full_like", "fill_value", fill_value, 2)
    return _fill(input._shape, fill_value, dt, dev, requires_grad)


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: DType | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Values ``start, start+step, ...`` below ``end``: ``ember.arange(5)``."""
    if dtype is not None and not isinstance(dtype, DType):
        given = (start,) if end is None else (start, end) if step == 1 else (start, end, step)
        raise invalid_combination("arange", given, {"dtype": dtype})
    if end is None:
        check_number("arange", "end", start, 1)
        start, end = 0, start
    else:
        for pos, (name, v) in enumerate((("start", start), ("end", end), ("step", step)), 1):
            check_number("arange", name, v, pos)
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if dtype is D.bool_:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if dtype is D.int64 and all(isinstance(v, (int, float)) and math.isfinite(v) for v in vals):
        # PyTorch truncates the bounds and step to int64 first (other int types count in double)
        start, end, step = (int(v) for v in vals)
        if step == 0:
            raise ValueError("step must be nonzero")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        dtype = get_default_dtype() if any(isinstance(v, float) for v in vals) else D.int64
    if (end - start) / step > 2**63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    n = max(0, math.ceil((end - start) / step))
    dev, lb = resolve(device)
    _check_dtype(lb, dtype)
    t = wrap(call(lb, "arange", start, step, n, dtype, dev.index or 0), lb, dev, dtype, (n,))
    return _requiring_grad(t) if requires_grad else t


def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: DType | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise invalid_combination("linspace", (start, end, steps))
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or get_default_dtype()
    return _upload(_linspace_host(start, end, steps, dtype), dtype, device, requires_grad)


def _linspace_host(start: Any, end: Any, steps: int, dtype: DType) -> np.ndarray:
    """PyTorch's CPU formula, to the last bit in the common cases: ``start + step*i`` for
    the first half of the points and ``end - step*(steps-1-i)`` for the rest."""
    nd = numpy_dtype(dtype)
    i = np.arange(steps)
    half = steps // 2 if steps > 1 else 1  # one step gives ``start``
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype.category < 2:  # integers: bounds truncated first, the step in double
            s, e = float(np.trunc(start)), float(np.trunc(end))
            step = (e - s) / (steps - 1) if steps > 1 else 0.0
            first = np.longdouble(step) * i + np.longdouble(s)  # fused, as PyTorch's compiled loop
            host = np.trunc(np.where(i < half, first, e - step * (steps - 1 - i)))
        elif nd.itemsize == 2:  # float16, bfloat16: every operation rounds to the dtype
            host = _linspace_half(start, end, steps, i, half, nd)
        else:  # the step in the dtype, each point one fused multiply-add (long double)
            wide = np.clongdouble if dtype.is_complex else np.longdouble
            st, s, e = _step_in(start, end, steps, nd)
            host = np.where(i < half, wide(st) * i + wide(s), wide(e) - wide(st) * (steps - 1 - i))
    return np.array(host, dtype=nd, order="C")


def _step_in(start: Any, end: Any, steps: int, nd: np.dtype) -> tuple[Any, Any, Any]:
    s, e = nd.type(start), nd.type(end)
    return (nd.type((e - s) / nd.type(steps - 1)) if steps > 1 else nd.type(0)), s, e


def _linspace_half(start: Any, end: Any, steps: int, i: np.ndarray, half: int, nd: np.dtype) -> np.ndarray:
    def r(x: Any) -> np.ndarray:
        return np.asarray(x, dtype=np.float32).astype(nd).astype(np.float32)

    s, e = r(start), r(end)
    step = r((e - s) / np.float32(steps - 1)) if steps > 1 else np.float32(0)
    return np.where(i < half, r(s + r(step * r(i))), r(e - r(step * r(steps - 1 - i))))


def logspace(
    start: Any,
    end: Any,
    steps: int,
    base: float = 10.0,
    *,
    dtype: DType | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    dtype = dtype or get_default_dtype()
    lin = linspace(start, end, steps, dtype=D.float64, device="cpu").numpy()
    host = np.power(base, lin).astype(numpy_dtype(dtype))
    return _upload(host, dtype, device, requires_grad)


def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: DType | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The identity matrix (``n`` x ``m``)."""
    for pos, (name, v) in enumerate((("n", n), ("m", m)), 1):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise must_be("eye", name, "int", v, pos)
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    check_dtype("eye", "dtype", dtype)
    dtype = dtype or get_default_dtype()
    host = np.eye(n, n if m is None else m, dtype=numpy_dtype(dtype))
    return _upload(host, dtype, device, requires_grad)


def _rebuild(host: np.ndarray, dtype_name: str, device: str, requires_grad: bool) -> Tensor:
    """Unpickling: a tensor from host data, placed back on its device."""
    return tensor(host, dtype=D.DTYPES_BY_NAME[dtype_name], device=device, requires_grad=requires_grad)
