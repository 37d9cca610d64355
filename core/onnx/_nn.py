"""Builders for the layers' functional ops: linear, conv, pooling, normalization, embedding,
and indexing (``Tensor.__getitem__``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from ember._creation import numpy_dtype
from ember.jit import Node, Value

from ._basic import out, raise_unsupported, scalar, x_of
from ._context import Context

INT64_MAX = np.iinfo(np.int64).max


def linear_names(cx: Context, x: str, w: Value, b: Value | None) -> str:
    """x @ w.T + b (MatMul on a transposed weight: any leading dims, dynamic ones included)."""
    y = cx.op("MatMul", [x, cx.op("Transpose", [cx.name_of(w)], perm=[1, 0])])
    return y if b is None else cx.op("Add", [y, cx.name_of(b)])


def linear(cx: Context, n: Node) -> str:
    x, w, b = x_of(n), n.arg("weight", pos=1), n.arg("bias", None, pos=2)
    if len(x.shape) == 2 and len(w.shape) == 2:
        inputs = [cx.name_of(x), cx.name_of(w)] + ([cx.name_of(b)] if b is not None else [])
        return cx.op("Gemm", inputs, transB=1)
    return linear_names(cx, cx.name_of(x), w, b)


def _tuple(v: Any, k: int) -> list[int]:
    return [int(i) for i in v] if isinstance(v, (tuple, list)) else [int(v)] * k


def conv(cx: Context, n: Node) -> str:
    x, w, b = x_of(n), n.arg("weight", pos=1), n.arg("bias", None, pos=2)
    k = len(w.shape) - 2
    stride, dilation = _tuple(n.arg("stride", 1), k), _tuple(n.arg("dilation", 1), k)
    padding = n.arg("padding", 0)
    if padding == "valid":
        padding = 0
    if padding == "same":
        total = [d * (s - 1) for d, s in zip(dilation, w.shape[2:])]
        pads = [t // 2 for t in total] + [t - t // 2 for t in total]
    else:
        pads = _tuple(padding, k) * 2
    inputs = [cx.name_of(x), cx.name_of(w)] + ([cx.name_of(b)] if b is not None else [])
    return cx.op(
        "Conv",
        inputs,
        kernel_shape=list(w.shape[2:]),
        strides=stride,
        pads=pads,
        dilations=dilation,
        group=int(n.arg("groups", 1)),
    )


def max_pool(cx: Context, n: Node) -> str:
    x = x_of(n)
    k = len(x.shape) - 2
    if n.arg("return_indices", False):
        raise_unsupported(n, "return_indices=True")
    kernel = _tuple(n.arg("kernel_size", pos=1), k)
    stride = n.arg("stride", None)
    return cx.op(
        "MaxPool",
        [cx.name_of(x)],
        kernel_shape=kernel,
        strides=_tuple(stride, k) if stride not in (None, (), []) else kernel,
        pads=_tuple(n.arg("padding", 0), k) * 2,
        dilations=_tuple(n.arg("dilation", 1), k),
        ceil_mode=int(bool(n.arg("ceil_mode", False))),
    )


def avg_pool(cx: Context, n: Node) -> str:
    x = x_of(n)
    k = len(x.shape) - 2
    if n.arg("divisor_override", None) is not None:
        raise_unsupported(n, "divisor_override")
    kernel = _tuple(n.arg("kernel_size", pos=1), k)
    stride = n.arg("stride", None)
    return cx.op(
        "AveragePool",
        [cx.name_of(x)],
        kernel_shape=kernel,
        strides=_tuple(stride, k) if stride not in (None, (), []) else kernel,
        pads=_tuple(n.arg("padding", 0), k) * 2,
        ceil_mode=int(bool(n.arg("ceil_mode", False))),
        count_include_pad=int(bool(n.arg("count_include_pad", True))),
    )


def adaptive_avg_pool(cx: Context, n: Node) -> str:
    x, y = x_of(n), out(n)
    if any(o != 1 for o in y.shape[2:]):
        if list(y.shape[2:]) == list(x.shape[2:]):
            return cx.op("Identity", [cx.name_of(x)])
        raise_unsupported(n, f"output_size {tuple(y.shape[2:])} other than 1")
    return cx.op("GlobalAveragePool", [cx.name_of(x)])


def _ones_or(cx: Context, t: Value | None, shape: tuple, like: Value, fill: float) -> str:
    if t is not None:
        return cx.name_of(t)
    return cx.const(np.full(shape, fill, dtype=numpy_dtype(like.dtype)), "fill")


def batch_norm(cx: Context, n: Node) -> str:
    x = x_of(n)
    mean, var = n.arg("running_mean", pos=1), n.arg("running_var", pos=2)
    if n.arg("training", False) or mean is None:
        raise_unsupported(n, "batch statistics (training=True); export in eval mode")
    c = (x.shape[1],)
    scale = _ones_or(cx, n.arg("weight", None), c, x, 1.0)
    bias = _ones_or(cx, n.arg("bias", None), c, x, 0.0)
    return cx.op(
        "BatchNormalization",
        [cx.name_of(x), scale, bias, cx.name_of(mean), cx.name_of(var)],
        epsilon=float(n.arg("eps", 1e-5)),
    )


def layer_norm(cx: Context, n: Node) -> str:
    x = x_of(n)
    shape = tuple(n.arg("normalized_shape", pos=1))
    if cx.opset < 17:
        raise_unsupported(n, f"opset {cx.opset} (LayerNormalization needs opset 17)")
    scale = _ones_or(cx, n.arg("weight", None), shape, x, 1.0)
    bias = _ones_or(cx, n.arg("bias", None), shape, x, 0.0)
    return cx.op(
        "LayerNormalization",
        [cx.name_of(x), scale, bias],
        axis=-len(shape),
        epsilon=float(n.arg("eps", 1e-5)),
    )


def embedding(cx: Context, n: Node) -> str:
    idx, w = x_of(n), n.arg("weight", pos=1)
    if n.arg("max_norm", None) is not None:
        raise_unsupported(n, "max_norm")
    return cx.op("Gather", [cx.name_of(w), cx.name_of(idx)], axis=0)


def getitem(cx: Context, n: Node) -> str:
    """Indexing by ints, slices, None, Ellipsis and one index tensor."""
    x = x_of(n)
    key = n.arg("index", pos=1)
    key = list(key) if isinstance(key, tuple) else [key]
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key[i : i + 1] = [slice(None)] * (len(x.shape) - used)
    name, axis, src = cx.name_of(x), 0, 0  # axis: of the result so far; src: of the input
    for k in key:
        if k is None:
            name = cx.op("Unsqueeze", [name, cx.ints([axis])])
            axis += 1
            continue
        if isinstance(k, bool) or not isinstance(k, (int, slice, Value)):
            raise_unsupported(n, f"an index of type {type(k).__name__}")
        if isinstance(k, int):
            k = k % x.shape[src]
            name = cx.op("Gather", [name, cx.const(np.asarray(k, np.int64))], axis=axis)
        elif isinstance(k, slice):
            start, stop, step = k.start or 0, k.stop if k.stop is not None else INT64_MAX, k.step or 1
            if (start, stop, step) != (0, INT64_MAX, 1):
                name = cx.op(
                    "Slice", [name, cx.ints([start]), cx.ints([stop]), cx.ints([axis]), cx.ints([step])]
                )
            axis += 1
        else:
            if k.dtype.is_floating_point or str(k.dtype).endswith("bool"):
                raise_unsupported(n, f"an index tensor of dtype {k.dtype}")
            name = cx.op("Gather", [name, cx.name_of(k)], axis=axis)
            axis += len(k.shape)
        src += 1
    return name


__all__ = ["getitem", "linear", "linear_names", "scalar"]
