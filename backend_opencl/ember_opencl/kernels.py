"""The OpenCL kernel table: ember op name -> kernel (the families live in their modules)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.backends.ops import BINARY, UNARY

from . import elementwise as ew
from . import indexing as ix
from . import matmul as mm
from . import nn, optim, scan, views
from . import random as rnd
from . import reduce as rd
from . import sort as st

__all__ = ["KERNELS"]

_UNARY_COMPOSITES = ("ceil", "trunc", "round", "sign", "sigmoid", "log1p", "expm1")

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
    "eq": ew.compare("eq"),
    "lt": ew.compare("lt"),
    "le": ew.compare("le"),
    "where": ew.where,
    "sum": rd.reducer("sum"),
    "prod": rd.reducer("prod"),
    "amax": rd.reducer("amax"),
    "amin": rd.reducer("amin"),
    "argmax": rd.argreducer("argmax"),
    "argmin": rd.argreducer("argmin"),
    "cumsum": scan.cumsum,
    "softmax": scan.softmax,
    "log_softmax": scan.log_softmax,
    "matmul": mm.matmul,
    "gather": ix.gather,
    "scatter": ix.scatter,
    "cat": ix.cat,
    "philox": rnd.philox,
    "sort": st.sort,
    "clone": ew.clone,
    "conv2d": nn.conv2d,
    "max_pool2d": nn.max_pool2d,
    "avg_pool2d": nn.avg_pool2d,
    "sgd_update": optim.sgd_update,
    "adam_update": optim.adam_update,
}
