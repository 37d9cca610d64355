"""The CPU kernel table: ember op name -> NumPy implementation.

Every ufunc is called with ``out=...`` so 0-d results stay arrays (NumPy would return a
scalar, which cannot be a view). Half types (float16, bfloat16) accumulate in float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from ember.backends import writes_out

from .dtypes import BF16, HALF, to_np
from .hostmem import cache
from .parallel import LARGE, run_ufunc
from .philox import philox

__all__ = ["KERNELS"]

_F32 = np.dtype(np.float32)
# PyTorch returns inf/nan silently; a per-call np.errstate would cost ~1 us on the hot path.
np.seterr(divide="ignore", invalid="ignore", over="ignore", under="ignore")


def _ufunc1(uf: np.ufunc) -> Callable[[np.ndarray], np.ndarray]:
    def k(x: np.ndarray) -> np.ndarray:
        if x.size >= LARGE:
            return run_ufunc(uf, (x,), x.shape, x.size)
        return uf(x, out=...)

    k.__name__ = uf.__name__
    k.ufunc = uf  # type: ignore[attr-defined]  # fuse.py calls it directly on small arrays
    return k


_PY_SCALARS = (bool, int, float, complex)
_ND = np.ndarray


def _ufunc2(uf: np.ufunc, mark: bool = True) -> Callable[..., np.ndarray]:
    """A binary kernel (marked ``writes_out``) or, with ``mark=False``, a compare kernel."""

    def k(a: Any, b: Any, out: np.ndarray | None = None) -> np.ndarray:
        if out is None and type(a) is _ND and a.size < LARGE:
            # the common small cases: two arrays, or an array and a scalar needing no pin
            tb = type(b)
            if tb is _ND or (tb is float and a.dtype not in BF16):
                return uf(a, b, out=...)
        # ml_dtypes' bfloat16 is not a NEP 50 "weak" partner for Python floats: pin the scalar.
        if type(b) in _PY_SCALARS and a.dtype in BF16:
            b = np.asarray(b, dtype=a.dtype)
        elif type(a) in _PY_SCALARS and b.dtype in BF16:
            a = np.asarray(a, dtype=b.dtype)
        if out is not None:
            if out.size >= LARGE and out.flags.c_contiguous:
                return run_ufunc(uf, (a, b), out.shape, out.size, out)
            return uf(a, b, out=out)
        x = a if type(a) is np.ndarray else b
        if type(x) is np.ndarray and x.size >= LARGE:
            return run_ufunc(uf, (a, b), x.shape, x.size)
        return uf(a, b, out=...)

    k.__name__ = uf.__name__
    k.ufunc = uf  # type: ignore[attr-defined]
    return writes_out(k) if mark else k


def full(shape: tuple[int, ...], value: Any, dtype: Any, index: int) -> np.ndarray:
    return np.full(shape, value, dtype=to_np(dtype))


def arange(start: Any, step: Any, n: int, dtype: Any, index: int) -> np.ndarray:
    nd = to_np(dtype)
    if nd.kind in "iub":
        return (np.arange(n, dtype=np.int64) * int(step) + int(start)).astype(nd)
    # PyTorch computes start + step * i as one fused multiply-add in double precision;
    # long double reproduces that rounding (plain float64 is off by an ulp now and then).
    wide = np.clongdouble if nd.kind == "c" else np.longdouble
    return (np.arange(n, dtype=wide) * wide(step) + wide(start)).astype(nd)


def cast(x: np.ndarray, dtype: Any) -> np.ndarray:
    nd = to_np(dtype)
    if nd.kind == "b":  # complex too: non-zero real or imaginary part (out=...: 0-d stays an array)
        return np.not_equal(x, 0, out=...)
    if x.dtype.kind == "c" and nd.kind != "c":
        x = x.real
    with np.errstate(invalid="ignore", over="ignore"):
        if nd in HALF and x.dtype.kind in "fiu" and x.dtype.itemsize > 4:
            # PyTorch rounds float64/int64 to a half type through float32 (c10::Half and
            # BFloat16 are built from a float): two roundings, which NumPy would do in one.
            x = x.astype(_F32)
        return x.astype(nd)


def assign(dst: np.ndarray, src: Any) -> None:
    np.copyto(dst, src, casting="unsafe")


def reshape(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    try:
        return x.reshape(shape, copy=False)  # the method: np.reshape's wrappers cost ~1 us
    except ValueError:
        return None


def permute(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    return x.transpose(dims)


_new_array = np.ndarray


def expand(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only broadcast view. A contiguous ``x`` (a bias, a reduced gradient) gets its
    strides here, ~1 us against ~6 us for ``np.broadcast_to``'s iterator machinery."""
    lead = len(shape) - x.ndim
    if lead < 0 or not x.flags.c_contiguous:
        return np.broadcast_to(x, shape)
    strides = [0] * lead
    for have, want, stride in zip(x.shape, shape[lead:], x.strides):
        if have == want:
            strides.append(stride)
        elif have == 1:
            strides.append(0)
        else:
            return np.broadcast_to(x, shape)  # NumPy's error for a shape that does not broadcast
    out = _new_array(shape, x.dtype, x, 0, tuple(strides))
    out.setflags(write=False)
    return out


def slice_(x: np.ndarray, key: tuple[Any, ...]) -> np.ndarray:
    return x[key + (Ellipsis,)]


def as_strided(x: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> np.ndarray:
    root = x
    while isinstance(root.base, np.ndarray):
        root = root.base
    size = x.itemsize
    flat = root.reshape(-1) if root.flags.c_contiguous else root.ravel(order="K")
    return np.ndarray(
        shape,
        dtype=x.dtype,
        buffer=flat,
        offset=offset * size,
        strides=tuple(s * size for s in strides),
    )


def bitcast(x: np.ndarray, dtype: Any) -> np.ndarray:
    # NumPy's own rule is PyTorch's: another itemsize rescales the (stride-1) last axis.
    return x.view(to_np(dtype))


def _scipy_erf(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf as _erf

    if x.dtype in HALF:
        return np.asarray(_erf(x.astype(_F32))).astype(x.dtype)  # a 0-d input gives a scalar
    return _erf(x, out=...)


def _check_int_divisor(a: Any, b: Any) -> None:
    if isinstance(a, np.ndarray) and a.size == 0:
        return
    if isinstance(b, np.ndarray) and b.dtype.kind in "iu" and b.size and not b.all():
        raise RuntimeError("ZeroDivisionError")
    if isinstance(b, int) and not isinstance(b, bool) and b == 0:
        raise RuntimeError("ZeroDivisionError")


def floordiv(a: Any, b: Any) -> np.ndarray:
    _check_int_divisor(a, b)
    return _FLOORDIV(a, b)


def remainder(a: Any, b: Any) -> np.ndarray:
    _check_int_divisor(a, b)
    return _REMAINDER(a, b)


_REMAINDER = _ufunc2(np.remainder)
_FLOORDIV = _ufunc2(np.floor_divide)
_POWER = _ufunc2(np.power)


def pow_(a: Any, b: Any) -> np.ndarray:
    if isinstance(b, np.ndarray) and b.dtype.kind == "i" and b.size and b.min() < 0:
        return _int_pow_negative(a, b)
    try:
        return _POWER(a, b)
    except ValueError as e:  # NumPy's "Integers to negative integer powers ..."
        raise RuntimeError(str(e)) from None


def _int_pow_negative(a: Any, b: np.ndarray) -> np.ndarray:
    # Integer a ** negative b truncates toward zero: 1 for a == 1, +-1 for a == -1, else 0.
    a = np.broadcast_to(np.asarray(a, dtype=b.dtype), b.shape)
    pos = np.power(a, np.maximum(b, 0), out=...)
    neg = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0)).astype(b.dtype)
    return np.where(b < 0, neg, pos)


def where(c: np.ndarray, a: Any, b: Any) -> np.ndarray:
    # A scalar branch takes the array branch's dtype (NumPy would promote it).
    if type(a) in _PY_SCALARS:
        a = np.asarray(a, dtype=b.dtype)
    elif type(b) in _PY_SCALARS:
        b = np.asarray(b, dtype=a.dtype)
    return np.where(c, a, b)


def _reducer(uf: np.ufunc) -> Callable[[np.ndarray, tuple[int, ...], bool], np.ndarray]:
    def k(x: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
        if x.dtype in HALF:
            r = uf.reduce(x, axis=dims, dtype=_F32, keepdims=keepdim, out=...)
            return r.astype(x.dtype)
        # The result keeps the input dtype (NumPy would widen small integers).
        r = uf.reduce(x, axis=dims, dtype=x.dtype, keepdims=keepdim, out=...)
        return r if type(r) is np.ndarray else np.asarray(r)  # a 0-d input gives a NumPy scalar

    return k


def argmax(x: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    if x.dtype in HALF:
        x = x.astype(_F32)
    if dim is None:
        r = np.asarray(np.argmax(x))
        return r.reshape((1,) * x.ndim) if keepdim else r
    return np.asarray(np.argmax(x, axis=dim, keepdims=keepdim))


def cumsum(x: np.ndarray, dim: int) -> np.ndarray:
    if x.dtype in HALF:
        return np.cumsum(x, axis=dim, dtype=_F32).astype(x.dtype)
    return np.cumsum(x, axis=dim, dtype=x.dtype)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype in HALF:
        return np.matmul(a.astype(_F32), b.astype(_F32)).astype(a.dtype)
    if a.ndim >= 2 and b.ndim >= 2 and a.dtype == b.dtype:
        # a large result (a decoder's logits) from the buffer cache: no page faults each step
        shape = (*np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), a.shape[-2], b.shape[-1])
        return np.matmul(a, b, out=cache.empty(shape, a.dtype))
    return np.matmul(a, b, out=...)


def _grid(index: np.ndarray, dim: int) -> tuple[np.ndarray, ...]:
    if index.size and index.min() < 0:
        raise IndexError(f"index {int(index.min())} is out of bounds: indices must not be negative")
    # np.ogrid's open grids, built directly (np.ogrid's Python machinery costs ~25 us a call)
    nd = index.ndim
    grids = []
    for d, size in enumerate(index.shape):
        if d == dim:
            grids.append(index)
        else:
            grids.append(np.arange(size).reshape((1,) * d + (size,) + (1,) * (nd - d - 1)))
    return tuple(grids)


def gather(x: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    if x.ndim == 0:  # every index must be 0; the result has the index's shape
        if index.size and (index.min() < 0 or index.max() > 0):
            raise IndexError(f"index {int(index.max())} is out of bounds for dimension 0 with size 1")
        return np.full(index.shape, x, dtype=x.dtype)
    if index.size and index.min() < 0:
        raise IndexError(f"index {int(index.min())} is out of bounds: indices must not be negative")
    # ``index`` may be shorter than ``x`` in the other dimensions: read that corner of ``x``.
    corner = tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(index.shape))
    return np.take_along_axis(x[corner], index, axis=dim)


def scatter(x: np.ndarray, dim: int, index: np.ndarray, src: Any, reduce: str | None) -> np.ndarray:
    out = cache.empty(x.shape, x.dtype)  # large (a loss's gradient) from the buffer cache
    np.copyto(out, x)
    if x.ndim == 0:  # a 0-d src too: it is the one value written
        out, index = out.reshape(1), index.reshape(-1)
        src = src.reshape(1) if isinstance(src, np.ndarray) else src
    if isinstance(src, np.ndarray):
        src = src[tuple(slice(0, s) for s in index.shape)]
    if index.size == 0:
        return out.reshape(x.shape)
    grid = _grid(index, dim)
    if reduce == "add":
        np.add.at(out, grid, src)
    else:
        out[grid] = src
    return out.reshape(x.shape)


def sort(x: np.ndarray, dim: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    keys = x.astype(_F32) if x.dtype in HALF else x
    if descending:
        n = x.shape[dim] if x.ndim else 1
        rev = np.flip(keys, axis=dim) if x.ndim else keys
        idx = np.flip(
            n - 1 - np.argsort(rev, axis=dim if x.ndim else None, kind="stable"), axis=dim if x.ndim else None
        )
    else:
        idx = np.argsort(keys, axis=dim if x.ndim else None, kind="stable")
    idx = idx.astype(np.int64, copy=False)
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    return np.take_along_axis(x, idx, axis=dim), idx


def cat(arrays: list[np.ndarray], dim: int) -> np.ndarray:
    return np.concatenate(arrays, axis=dim)


# Composite overrides: NumPy has accurate or faster direct forms.
def clone(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True, order="C")


def amin(x: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    return _reducer(np.minimum)(x, dims, keepdim)


def argmin(x: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    if x.dtype in HALF:
        x = x.astype(_F32)
    if dim is None:
        r = np.asarray(np.argmin(x))
        return r.reshape((1,) * x.ndim) if keepdim else r
    return np.asarray(np.argmin(x, axis=dim, keepdims=keepdim))


def _index_key(indices: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(slice(None) if i is None else i for i in indices)


def index(x: np.ndarray, indices: tuple[Any, ...]) -> np.ndarray:
    return np.asarray(x[_index_key(indices)])


def index_put(x: np.ndarray, indices: tuple[Any, ...], values: Any, accumulate: bool) -> None:
    key = _index_key(indices)
    if accumulate:
        np.add.at(x, key, values)
    else:
        x[key] = values


def nonzero(x: np.ndarray) -> np.ndarray:
    return np.argwhere(x).astype(np.int64, copy=False)


def _sign(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "b":
        return x.copy()
    if x.dtype.kind == "f" or x.dtype in HALF:  # PyTorch's (x > 0) - (x < 0): NaN gives 0
        return np.asarray((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype))
    return np.sign(x, out=...)


def _round_half_even(x: np.ndarray) -> np.ndarray:
    return np.rint(x, out=...)


KERNELS: dict[str, Callable[..., Any]] = {
    "full": full,
    "arange": arange,
    "philox": philox,
    "cast": cast,
    "assign": assign,
    "reshape": reshape,
    "permute": permute,
    "expand": expand,
    "slice": slice_,
    "as_strided": as_strided,
    "bitcast": bitcast,
    "neg": _ufunc1(np.negative),
    "abs": _ufunc1(np.absolute),
    "exp": _ufunc1(np.exp),
    "log": _ufunc1(np.log),
    "sqrt": _ufunc1(np.sqrt),
    "sin": _ufunc1(np.sin),
    "cos": _ufunc1(np.cos),
    "tanh": _ufunc1(np.tanh),
    "erf": _scipy_erf,
    "floor": _ufunc1(np.floor),
    "add": _ufunc2(np.add),
    "sub": _ufunc2(np.subtract),
    "mul": _ufunc2(np.multiply),
    "div": _ufunc2(np.true_divide),
    "floordiv": floordiv,
    "pow": pow_,
    "maximum": _ufunc2(np.maximum),
    "minimum": _ufunc2(np.minimum),
    "bitwise_and": _ufunc2(np.bitwise_and),
    "bitwise_or": _ufunc2(np.bitwise_or),
    "bitwise_xor": _ufunc2(np.bitwise_xor),
    "eq": _ufunc2(np.equal, mark=False),
    "lt": _ufunc2(np.less, mark=False),
    "le": _ufunc2(np.less_equal, mark=False),
    "where": where,
    "sum": _reducer(np.add),
    "prod": _reducer(np.multiply),
    "amax": _reducer(np.maximum),
    "argmax": argmax,
    "cumsum": cumsum,
    "matmul": matmul,
    "gather": gather,
    "scatter": scatter,
    "sort": sort,
    "cat": cat,
    # composites
    "clone": clone,
    "ceil": _ufunc1(np.ceil),
    "trunc": _ufunc1(np.trunc),
    "round": _round_half_even,
    "sign": _sign,
    "log1p": _ufunc1(np.log1p),
    "expm1": _ufunc1(np.expm1),
    "remainder": remainder,
    "amin": amin,
    "argmin": argmin,
    "index": index,
    "index_put": index_put,
    "nonzero": nonzero,
}

from .math_kernels import MATH_KERNELS

KERNELS.update(MATH_KERNELS)

from .nn_kernels import (
    avg_pool2d,
    conv2d,
    log_softmax,
    log_softmax_backward,
    max_pool2d,
    relu_backward,
    softmax,
    softmax_backward,
)

KERNELS.update(
    {
        "conv2d": conv2d,
        "max_pool2d": max_pool2d,
        "avg_pool2d": avg_pool2d,
        "softmax": softmax,
        "log_softmax": log_softmax,
        "softmax_backward": softmax_backward,
        "log_softmax_backward": log_softmax_backward,
        "relu_backward": relu_backward,
    }
)

from .grad_kernels import avg_pool2d_backward, conv2d_input_grad, conv2d_weight_grad, max_pool2d_backward

KERNELS.update(
    {
        "conv2d_input_grad": conv2d_input_grad,
        "conv2d_weight_grad": conv2d_weight_grad,
        "max_pool2d_backward": max_pool2d_backward,
        "avg_pool2d_backward": avg_pool2d_backward,
    }
)

from .fma import FMA_KERNELS
from .foreach_kernels import FOREACH_KERNELS
from .layer_norm_kernels import LAYER_NORM_KERNELS
from .optim_kernels import OPTIM_KERNELS

KERNELS.update(FMA_KERNELS)
KERNELS.update(OPTIM_KERNELS)
KERNELS.update(FOREACH_KERNELS)
KERNELS.update(LAYER_NORM_KERNELS)

from .attention_kernels import sdpa, sdpa_backward

KERNELS.update({"sdpa": sdpa, "sdpa_backward": sdpa_backward})

from .rnn_kernels import RNN_KERNELS

KERNELS.update(RNN_KERNELS)
