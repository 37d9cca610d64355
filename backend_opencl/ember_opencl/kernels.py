"""The OpenCL kernel table: ember op name -> kernel (the families live in their modules).

Elementwise kernels read and write float16/bfloat16 directly (dtypes.load/store). The other
families compute half types in float32, as the CPU backend does (its ``HALF`` paths): the
inputs are cast to float32 on the device, the float32 kernel runs, and the results are
rounded back once (``_via_float32``), so those kernels need no per-dtype code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.backends import DTYPES_BY_NAME, DType
from ember.backends.ops import BINARY, UNARY

from . import attention, nn, nn_backward, optim, rnn, scan, views
from . import elementwise as ew
from . import indexing as ix
from . import matmul as mm
from . import random as rnd
from . import reduce as rd
from . import sort as st
from .clarray import CLArray
from .cmatmul import complex_matmul
from .dtypes import HALF_DTYPES, kind

__all__ = ["KERNELS"]

_UNARY_COMPOSITES = ("ceil", "trunc", "round", "sign", "sigmoid", "log1p", "expm1")
_F32 = DTYPES_BY_NAME["float32"]


def _back(r: Any, half: DType) -> Any:
    if isinstance(r, CLArray):
        return ew.cast(r, half) if r.dtype == _F32 else r
    if isinstance(r, tuple):
        return tuple(_back(v, half) for v in r)
    return r


def _via_float32(fn: Callable[..., Any], writes: tuple[int, ...] = ()) -> Callable[..., Any]:
    """``fn`` computing float16/bfloat16 arrays in float32; ``writes``: in-place arguments."""

    def k(*args: Any) -> Any:
        half = next((a.dtype for a in args if isinstance(a, CLArray) and a.dtype in HALF_DTYPES), None)
        if half is None:
            return fn(*args)
        wide = [ew.cast(a, _F32) if isinstance(a, CLArray) and a.dtype in HALF_DTYPES else a for a in args]
        r = fn(*wide)
        for i in writes:
            if isinstance(args[i], CLArray):
                ew.assign(args[i], wide[i])
        return _back(r, half)

    k.__name__ = fn.__name__
    return k


def _real_only(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` refusing complex input (ordering ops: complex numbers have no order)."""

    def k(x: CLArray, *args: Any) -> Any:
        if kind(x.dtype) == "c":
            raise TypeError(
                f"{fn.__name__}: backend 'opencl' has no {x.dtype.name} kernel (complex has no order)"
            )
        return fn(x, *args)

    k.__name__ = fn.__name__
    return k


def _matmul(a: CLArray, b: CLArray) -> CLArray:
    return complex_matmul(a, b) if kind(a.dtype) == "c" else mm.matmul(a, b)


KERNELS: dict[str, Callable[..., Any]] = {
    "full": ew.full,
    "arange": ew.arange,
    "cast": ew.cast,
    "assign": ew.assign,
    "reshape": views.reshape,
    "permute": views.permute,
    "expand": views.expand,
    "slice": views.slice_,
    "as_strided": views.as_strided,
    "bitcast": views.bitcast,
    **{op: ew.unary(op) for op in UNARY + _UNARY_COMPOSITES},
    **{op: ew.binary(op) for op in BINARY},
    "remainder": ew.binary("remainder", mark=False),  # a composite: writes_out is for primitives
    "add_scaled": ew.add_scaled,
    "eq": ew.compare("eq"),
    "lt": ew.compare("lt"),
    "le": ew.compare("le"),
    "where": ew.where,
    "sum": _via_float32(rd.reducer("sum")),
    "prod": _via_float32(rd.reducer("prod")),
    "amax": _via_float32(rd.reducer("amax")),
    "amin": _via_float32(rd.reducer("amin")),
    "argmax": _via_float32(_real_only(rd.argreducer("argmax"))),
    "argmin": _via_float32(_real_only(rd.argreducer("argmin"))),
    "cumsum": _via_float32(scan.cumsum),
    "softmax": _via_float32(scan.softmax),
    "log_softmax": _via_float32(scan.log_softmax),
    "matmul": _via_float32(_matmul),
    "gather": ix.gather,
    "scatter": ix.scatter,
    "cat": ix.cat,
    "philox": rnd.philox,
    "sort": _via_float32(_real_only(st.sort)),
    "clone": ew.clone,
    "conv2d": _via_float32(nn.conv2d),
    "max_pool2d": _via_float32(nn.max_pool2d),
    "avg_pool2d": _via_float32(nn.avg_pool2d),
    "conv2d_input_grad": _via_float32(nn_backward.conv2d_input_grad),
    "conv2d_weight_grad": _via_float32(nn_backward.conv2d_weight_grad),
    "max_pool2d_backward": _via_float32(nn_backward.max_pool2d_backward),
    "avg_pool2d_backward": _via_float32(nn_backward.avg_pool2d_backward),
    "sgd_update": _via_float32(optim.sgd_update, (0, 2)),
    "adam_update": _via_float32(optim.adam_update, (0, 2, 3, 4)),
    "lstm_layer": _via_float32(rnn.lstm_layer),
    "lstm_layer_backward": _via_float32(rnn.lstm_layer_backward),
    "gru_layer": _via_float32(rnn.gru_layer),
    "gru_layer_backward": _via_float32(rnn.gru_layer_backward),
    "rnn_layer": _via_float32(rnn.rnn_layer),
    "rnn_layer_backward": _via_float32(rnn.rnn_layer_backward),
    "sdpa": _via_float32(attention.sdpa),
    "sdpa_backward": _via_float32(attention.sdpa_backward),
}
