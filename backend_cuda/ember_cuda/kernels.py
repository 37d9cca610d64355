"""The CUDA kernel table: ember op name -> kernel (the families live in their modules).

Every kernel runs with the device of its first array argument current (``on_device``), so
arrays on ``cuda:1`` work; creation kernels and philox switch to their index themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.backends.ops import BINARY, UNARY

from . import elementwise as ew
from . import fused, optim, pool, views
from . import indexing as ix
from . import random as rnd
from . import reduce as rd
from . import sort as st
from .attention import ATTENTION_KERNELS
from .matmul import matmul
from .rnn import RNN_KERNELS
from .runtime import on_device
from .special import SPECIAL_KERNELS

__all__ = ["KERNELS"]

_UNARY_COMPOSITES = ("ceil", "trunc", "round", "sign", "sigmoid", "log1p", "expm1")

_TABLE: dict[str, Callable[..., Any]] = {
    "full": ew.full,
    "arange": ew.arange,
    "philox": rnd.philox,
    "cast": ew.cast,
    "assign": ew.assign,
    "reshape": views.reshape,
    "permute": views.permute,
    "expand": views.expand,
    "slice": views.slice_,
    "as_strided": views.as_strided,
    "bitcast": views.bitcast,
    **{op: ew.unary(op) for op in UNARY + _UNARY_COMPOSITES},
    **{op: ew.binary(op) for op in BINARY + ("remainder",)},
    "add_scaled": ew.add_scaled,
    "eq": ew.binary("eq"),
    "lt": ew.binary("lt"),
    "le": ew.binary("le"),
    "where": ew.where,
    "sum": rd.reducer("sum"),
    "prod": rd.reducer("prod"),
    "amax": rd.reducer("amax"),
    "amin": rd.reducer("amin"),
    "argmax": rd.argreducer("argmax"),
    "argmin": rd.argreducer("argmin"),
    "cumsum": rd.cumsum,
    "matmul": matmul,
    "gather": ix.gather,
    "scatter": ix.scatter,
    "sort": st.sort,
    "cat": ix.cat,
    "nonzero": ix.nonzero,
    "clone": ew.clone,
    "softmax": fused.softmax,
    "log_softmax": fused.log_softmax,
    "conv2d": pool.conv2d,
    "max_pool2d": pool.max_pool2d,
    "avg_pool2d": pool.avg_pool2d,
    "sgd_update": optim.sgd_update,
    "adam_update": optim.adam_update,
    **SPECIAL_KERNELS,
    **RNN_KERNELS,
    **ATTENTION_KERNELS,
}
# Creation kernels take the device index; views and host-side work need no device switch.
_NO_SWITCH = {"full", "arange", "philox", "reshape", "permute", "expand", "slice", "as_strided", "bitcast"}

KERNELS: dict[str, Callable[..., Any]] = {
    op: fn if op in _NO_SWITCH else on_device(fn) for op, fn in _TABLE.items()
}
