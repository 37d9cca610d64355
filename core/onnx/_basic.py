"""Builders for element-wise, shape and reduction ops. Each takes the context and a traced
node and returns the ONNX names of the node's tensor outputs (one name, or a list)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from ember.jit import Node, Value

from ._context import Context

Builder = Callable[[Context, Node], Any]


def x_of(n: Node) -> Value:
    """The first tensor argument (``input``/``self``/``a``)."""
    return n.arg("input", pos=0)


def out(n: Node, i: int = 0) -> Value:
    return n.output_values()[i]


def unary(op_type: str, **attrs: Any) -> Builder:
    return lambda cx, n: cx.op(op_type, [cx.name_of(x_of(n))], **attrs)


def identity(cx: Context, n: Node) -> str:
    return cx.op("Identity", [cx.name_of(x_of(n))])


def cast_to_output(cx: Context, n: Node) -> str:
    x = x_of(n)
    return cx.op("Identity", [cx.cast(cx.name_of(x), x.dtype, out(n).dtype)])


def operand(cx: Context, x: Any, dtype: Any, like: Value) -> str:
    """A binary op's operand in ``dtype`` (a Python number becomes a constant)."""
    if isinstance(x, Value):
        return cx.cast(cx.name_of(x), x.dtype, dtype)
    return cx.name_of(x, _Like(dtype))


class _Like:
    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype


def binary(op_type: str, compare: bool = False) -> Builder:
    def build(cx: Context, n: Node) -> str:
        a, b = n.arg("input", pos=0), n.arg("other", pos=1)
        if compare:
            dtype = a.dtype if isinstance(a, Value) else b.dtype
            if isinstance(a, Value) and isinstance(b, Value) and a.dtype != b.dtype:
                dtype = out_float(a.dtype, b.dtype)
        else:
            dtype = out(n).dtype
        like = a if isinstance(a, Value) else b
        an, bn = operand(cx, a, dtype, like), operand(cx, b, dtype, like)
        alpha = n.arg("alpha", 1)
        if alpha != 1:
            bn = cx.op("Mul", [bn, cx.name_of(alpha, _Like(dtype))])
        if op_type == "Div" and n.arg("rounding_mode") is not None:
            raise_unsupported(n, "rounding_mode")
        return cx.op(op_type, [an, bn])

    return build


def not_equal(cx: Context, n: Node) -> str:
    return cx.op("Not", [binary("Equal", compare=True)(cx, n)])


def out_float(a: Any, b: Any) -> Any:
    return a if a.is_floating_point else b


def raise_unsupported(n: Node, what: str) -> None:
    from .errors import UnsupportedOperatorError

    raise UnsupportedOperatorError(f"Exporting the operator '{n.name}' with {what} to ONNX is not supported.")


def pow_(cx: Context, n: Node) -> str:
    dtype = out(n).dtype
    x, e = n.arg("input", pos=0), n.arg("exponent", pos=1)
    return cx.op("Pow", [operand(cx, x, dtype, x), operand(cx, e, dtype, x)])


def rsqrt(cx: Context, n: Node) -> str:
    return cx.op("Reciprocal", [cx.op("Sqrt", [cx.name_of(x_of(n))])])


def scalar(cx: Context, value: float, like: Value) -> str:
    return cx.name_of(value, like)


def gelu(cx: Context, n: Node) -> str:
    x = x_of(n)
    xn = cx.name_of(x)
    if n.arg("approximate", "none") == "tanh":
        cube = cx.op("Mul", [cx.op("Mul", [xn, xn]), xn])
        inner = cx.op("Add", [xn, cx.op("Mul", [cube, scalar(cx, 0.044715, x)])])
        t = cx.op("Tanh", [cx.op("Mul", [inner, scalar(cx, math.sqrt(2 / math.pi), x)])])
    else:
        t = cx.op("Erf", [cx.op("Div", [xn, scalar(cx, math.sqrt(2.0), x)])])
    half = cx.op("Mul", [xn, scalar(cx, 0.5, x)])
    return cx.op("Mul", [half, cx.op("Add", [t, scalar(cx, 1.0, x)])])


def silu(cx: Context, n: Node) -> str:
    xn = cx.name_of(x_of(n))
    return cx.op("Mul", [xn, cx.op("Sigmoid", [xn])])


def mish(cx: Context, n: Node) -> str:
    xn = cx.name_of(x_of(n))
    return cx.op("Mul", [xn, cx.op("Tanh", [cx.op("Softplus", [xn])])])


def softplus(cx: Context, n: Node) -> str:
    x, beta = x_of(n), n.arg("beta", 1.0, pos=1)
    xn = cx.name_of(x)
    if beta == 1:
        return cx.op("Softplus", [xn])
    b = scalar(cx, beta, x)
    return cx.op("Div", [cx.op("Softplus", [cx.op("Mul", [xn, b])]), b])


def logsigmoid(cx: Context, n: Node) -> str:
    return cx.op("Neg", [cx.op("Softplus", [cx.op("Neg", [cx.name_of(x_of(n))])])])


def clip(lo_name: str, hi_name: str, lo: float, hi: float) -> Builder:
    def build(cx: Context, n: Node) -> str:
        x = x_of(n)
        lo_v, hi_v = n.arg(lo_name, lo), n.arg(hi_name, hi)
        return cx.op("Clip", [cx.name_of(x), scalar(cx, lo_v, x), scalar(cx, hi_v, x)])

    return build


def with_attr(op_type: str, attr: str, arg: str, default: float, pos: int) -> Builder:
    def build(cx: Context, n: Node) -> str:
        attrs: dict[str, Any] = {attr: float(n.arg(arg, default, pos=pos))}
        return cx.op(op_type, [cx.name_of(x_of(n))], **attrs)

    return build


def softmax(op_type: str) -> Builder:
    def build(cx: Context, n: Node) -> str:
        x = x_of(n)
        xn = cx.cast(cx.name_of(x), x.dtype, out(n).dtype)
        return cx.op(op_type, [xn], axis=int(n.arg("dim", pos=1)))

    return build


# -- shapes ------------------------------------------------------------------------------------
def _sizes(n: Node, name: str) -> list[int]:
    shape = n.arg(name, pos=1)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return [int(s) for s in shape]


def reshape_to(cx: Context, x: Value, target: list[int]) -> str:
    """Reshape; leading dims equal to the input's are copied (0) so a dynamic batch carries."""
    target = list(target)
    for i, s in enumerate(target):
        if i >= len(x.shape) or s != x.shape[i] or s == 0:
            break
        target[i] = 0
    return cx.op("Reshape", [cx.name_of(x), cx.ints(target)])


def reshape(cx: Context, n: Node) -> str:
    return reshape_to(cx, x_of(n), _sizes(n, "shape"))


def flatten(cx: Context, n: Node) -> str:
    x = x_of(n)
    r = max(len(x.shape), 1)
    s, e = n.arg("start_dim", 0, pos=1) % r, n.arg("end_dim", -1, pos=2) % r
    return reshape_to(cx, x, [*x.shape[:s], -1, *x.shape[e + 1 :]])


def transpose(cx: Context, n: Node) -> str:
    x = x_of(n)
    r = len(x.shape)
    perm = list(range(r))
    if r >= 2:
        a, b = n.arg("dim0", 0, pos=1) % r, n.arg("dim1", 1, pos=2) % r
        perm[a], perm[b] = perm[b], perm[a]
    return cx.op("Transpose", [cx.name_of(x)], perm=perm)


def permute(cx: Context, n: Node) -> str:
    x = x_of(n)
    dims = [d % len(x.shape) for d in _sizes(n, "dims")]
    return cx.op("Transpose", [cx.name_of(x)], perm=dims)


def unsqueeze(cx: Context, n: Node) -> str:
    x = x_of(n)
    return cx.op("Unsqueeze", [cx.name_of(x), cx.ints([n.arg("dim", pos=1) % (len(x.shape) + 1)])])


def squeeze(cx: Context, n: Node) -> str:
    x = x_of(n)
    dim = n.arg("dim", None, pos=1)
    dims = [dim] if isinstance(dim, int) else list(dim) if dim is not None else range(len(x.shape))
    axes = [d % len(x.shape) for d in dims if x.shape[d] == 1]
    if not axes:
        return cx.op("Identity", [cx.name_of(x)])
    return cx.op("Squeeze", [cx.name_of(x), cx.ints(axes)])


def split_like_outputs(cx: Context, n: Node) -> list[str]:
    """chunk/split/unbind: the sizes are read from the traced outputs."""
    x, outs = x_of(n), n.output_values()
    dim = n.arg("dim", 0) % len(x.shape)
    squeeze_dim = n.name.endswith("unbind")
    sizes = [1 if squeeze_dim else v.shape[dim] for v in outs]
    names = cx.op("Split", [cx.name_of(x), cx.ints(sizes)], n_out=len(sizes), axis=dim)
    names = names if isinstance(names, list) else [names]
    if squeeze_dim:
        names = [cx.op("Squeeze", [m, cx.ints([dim])]) for m in names]
    return names


def cat(cx: Context, n: Node) -> str:
    tensors = n.arg("tensors", pos=0)
    dtype = out(n).dtype
    return cx.op(
        "Concat", [cx.cast(cx.name_of(t), t.dtype, dtype) for t in tensors], axis=n.arg("dim", 0, pos=1)
    )


def stack(cx: Context, n: Node) -> str:
    tensors = n.arg("tensors", pos=0)
    dim = n.arg("dim", 0, pos=1) % (len(tensors[0].shape) + 1)
    parts = [cx.op("Unsqueeze", [cx.name_of(t), cx.ints([dim])]) for t in tensors]
    return cx.op("Concat", parts, axis=dim)


def select(cx: Context, n: Node) -> str:
    x = x_of(n)
    dim = n.arg("dim", pos=1) % len(x.shape)
    index = n.arg("index", pos=2) % x.shape[dim]
    return cx.op("Gather", [cx.name_of(x), cx.const(np.asarray(index, np.int64))], axis=dim)


def expand(cx: Context, n: Node) -> str:
    sizes = [1 if s == -1 else s for s in _sizes(n, "size")]
    return cx.op("Expand", [cx.name_of(x_of(n)), cx.ints(sizes)])


def matmul(cx: Context, n: Node) -> str:
    a, b = n.arg("input", pos=0), n.arg("other", pos=1)
    dtype = out(n).dtype
    return cx.op("MatMul", [cx.cast(cx.name_of(a), a.dtype, dtype), cx.cast(cx.name_of(b), b.dtype, dtype)])


def reduce(op_type: str) -> Builder:
    def build(cx: Context, n: Node) -> str:
        x = x_of(n)
        dim = n.arg("dim", None, pos=1)
        keep = int(bool(n.arg("keepdim", False)))
        dims = list(range(len(x.shape))) if dim is None else [dim] if isinstance(dim, int) else list(dim)
        xn = cx.cast(cx.name_of(x), x.dtype, out(n).dtype)
        if op_type == "ReduceMean" and cx.opset < 18:
            return cx.op(op_type, [xn], axes=dims, keepdims=keep)
        return cx.op(op_type, [xn, cx.ints(dims)], keepdims=keep)

    return build


def masked_fill(cx: Context, n: Node) -> str:
    x, mask, value = x_of(n), n.arg("mask", pos=1), n.arg("value", pos=2)
    m = cx.cast(cx.name_of(mask), mask.dtype, _bool())
    v = cx.cast(cx.name_of(value), value.dtype, x.dtype) if isinstance(value, Value) else scalar(cx, value, x)
    return cx.op("Where", [m, v, cx.name_of(x)])


def where(cx: Context, n: Node) -> str:
    c, a, b = n.arg("condition", pos=0), n.arg("input", pos=1), n.arg("other", pos=2)
    dtype = out(n).dtype
    like = a if isinstance(a, Value) else b
    cn = cx.cast(cx.name_of(c), c.dtype, _bool())
    return cx.op("Where", [cn, operand(cx, a, dtype, like), operand(cx, b, dtype, like)])


def _bool() -> Any:
    from ember.backends.dtypes import bool_

    return bool_
