"""Backends broken in ways only edge samples reveal (``--ember-plugin broken_samples:X``).

Each is the CPU backend with one kernel subtly wrong: right on small, contiguous, tame
inputs and wrong at an offset, a size, a dtype limit, a signed zero, a NaN, an empty batch,
a duplicate index or a state that only changes over several steps. The self-test
(``test_selftest_samples.py``) asserts the suite names the op for each.
"""

from __future__ import annotations

from typing import Any

import ember.backends as eb
import ml_dtypes
import numpy as np
from broken_backends import BrokenPlugin

_THRESHOLD = 4096


def _root(x: np.ndarray) -> np.ndarray:
    while isinstance(x.base, np.ndarray):
        x = x.base
    return x


def _offset(x: np.ndarray) -> int:
    return x.__array_interface__["data"][0] - _root(x).__array_interface__["data"][0]


def _exp_offset(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["exp"]

    def exp(x: Any) -> Any:
        # A strided view read from the start of its buffer: the storage offset dropped.
        if not x.flags.c_contiguous and _offset(x) and min(x.strides, default=0) >= 0:
            root = _root(x)
            x = np.ndarray(x.shape, x.dtype, buffer=root, offset=0, strides=x.strides)
        return orig(x)

    return {"exp": exp}


def _add_big(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["add"]

    def add(a: Any, b: Any) -> Any:
        out = orig(a, b)
        if out.size > _THRESHOLD:  # a vector tail loop that drops its last element's result
            out.reshape(-1)[-1] = out.reshape(-1)[0]
        return out

    return {"add": add}


def _cast_int64_via_int32(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["cast"]

    def cast(x: Any, dtype: Any) -> Any:
        if dtype.name == "int64" and x.dtype.kind == "f":
            return orig(orig(x, eb.DTYPES_BY_NAME["int32"]), dtype)  # wraps beyond 2**31
        return orig(x, dtype)

    return {"cast": cast}


def _cast_bf16_truncate(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["cast"]

    def cast(x: Any, dtype: Any) -> Any:
        if dtype.name == "bfloat16" and x.dtype.kind == "f" and x.dtype != ml_dtypes.bfloat16:
            bits = np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
            return bits.view(np.float32).astype(ml_dtypes.bfloat16)  # exact: chops the low bits
        return orig(x, dtype)

    return {"cast": cast}


def _int8_saturates(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["add"]

    def add(a: Any, b: Any) -> Any:
        out = orig(a, b)
        if out.dtype == np.int8:
            wide = np.asarray(a, np.int16) + np.asarray(b, np.int16)
            return np.asarray(np.clip(wide, -128, 127).astype(np.int8))
        return out

    return {"add": add}


def _abs_keeps_negative_zero(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["abs"]

    def abs_(x: Any) -> Any:
        out = orig(x)
        if out.dtype.kind == "f" or out.dtype == ml_dtypes.bfloat16:
            return np.asarray(np.where(x == 0, x, out))
        return out

    return {"abs": abs_}


def _sort_nan_first(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["sort"]

    def sort(x: Any, dim: int, descending: bool) -> Any:
        if x.dtype.kind != "f" and x.dtype != ml_dtypes.bfloat16:
            return orig(x, dim, descending)
        keys = np.where(np.isnan(x), -np.inf, x.astype(np.float64))  # NaN treated as the smallest
        _, idx = orig(keys, dim, descending)
        return np.take_along_axis(x, idx, axis=dim), idx

    return {"sort": sort}


def _conv_batch0(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["conv2d"]

    def conv2d(x: Any, w: Any, *params: Any) -> Any:
        if x.shape[0] == 0:
            raise ValueError("conv2d: empty batch")
        return orig(x, w, *params)

    return {"conv2d": conv2d}


def _scatter_0d(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["scatter"]

    def scatter(x: Any, dim: int, index: Any, src: Any, reduce: Any) -> Any:
        if x.ndim == 0:
            raise IndexError("scatter: dimension out of range for a 0-d array")
        return orig(x, dim, index, src, reduce)

    return {"scatter": scatter}


def _index_put_dups_once(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["index_put"]

    def index_put(x: Any, indices: Any, values: Any, accumulate: bool) -> None:
        if accumulate and sum(i is not None for i in indices) >= 2:
            key = tuple(slice(None) if i is None else i for i in indices)
            x[key] += values  # buffered: a duplicated point gets one of its values
            return None
        return orig(x, indices, values, accumulate)

    return {"index_put": index_put}


def _adam_no_max(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["adam_update"]

    def adam_update(p: Any, g: Any, m: Any, v: Any, vmax: Any, *params: Any) -> None:
        # The step uses the right maximum, but the running max is never written back.
        return orig(p, g, m, v, None if vmax is None else vmax.copy(), *params)

    return {"adam_update": adam_update}


def _softmax_half_accumulates(k: dict[str, Any]) -> dict[str, Any]:
    orig = k["softmax"]

    def softmax(x: Any, dim: int) -> Any:
        if x.dtype != np.float16 or x.ndim == 0:
            return orig(x, dim)
        e = np.exp(x - x.max(axis=dim, keepdims=True))  # float16 throughout
        total = np.take(np.add.accumulate(e, axis=dim, dtype=np.float16), [-1], axis=dim)
        return np.asarray(e / total) if e.shape[dim] else e

    return {"softmax": softmax}


exp_offset = BrokenPlugin("broken_exp_offset", _exp_offset)
add_big = BrokenPlugin("broken_add_big", _add_big)
cast_int64_via_int32 = BrokenPlugin("broken_cast_i64", _cast_int64_via_int32)
cast_bf16_truncate = BrokenPlugin("broken_cast_bf16", _cast_bf16_truncate)
int8_saturates = BrokenPlugin("broken_int8_add", _int8_saturates)
abs_negative_zero = BrokenPlugin("broken_abs_zero", _abs_keeps_negative_zero)
sort_nan_first = BrokenPlugin("broken_sort_nan", _sort_nan_first)
conv_batch0 = BrokenPlugin("broken_conv_batch0", _conv_batch0)
scatter_0d = BrokenPlugin("broken_scatter_0d", _scatter_0d)
index_put_dups_once = BrokenPlugin("broken_index_put_acc", _index_put_dups_once)
adam_no_max = BrokenPlugin("broken_adam_amsgrad", _adam_no_max)
softmax_half = BrokenPlugin("broken_softmax_half", _softmax_half_accumulates)
