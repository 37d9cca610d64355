"""``nn.functional.multi_head_attention_forward`` (what nn.MultiheadAttention and the
Transformer layers call) as ONNX MatMul/Softmax: sequence-first (L, N, E); the batch stays a
copied dimension (Reshape 0), so it may be dynamic."""

from __future__ import annotations

import math

import numpy as np
from ember._creation import numpy_dtype
from ember.jit import Node, Value

from ._basic import raise_unsupported
from ._context import Context
from ._nn import linear_names


def _additive(cx: Context, mask: Value, like: Value) -> str:
    """A mask as an additive bias: a bool mask is -inf where True."""
    name = cx.name_of(mask)
    if str(mask.dtype) == "ember.bool":
        dtype = numpy_dtype(like.dtype)
        return cx.op("Where", [name, cx.const(np.asarray(-np.inf, dtype)), cx.const(np.asarray(0, dtype))])
    return cx.cast(name, mask.dtype, like.dtype)


def multi_head_attention(cx: Context, n: Node) -> list[str]:
    q_in, k_in, v_in = n.arg("query", pos=0), n.arg("key", pos=1), n.arg("value", pos=2)
    heads = int(n.arg("num_heads", pos=3))
    (wq, wk, wv), (bq, bk, bv) = n.arg("in_proj", pos=4), n.arg("in_bias", pos=5)
    if n.arg("bias_k") is not None or n.arg("add_zero_attn", False):
        raise_unsupported(n, "bias_k/bias_v or add_zero_attn")
    if n.arg("training", False) and n.arg("dropout_p", 0.0) > 0:
        raise_unsupported(n, "dropout in training mode")
    e = q_in.shape[2]
    hd = e // heads
    q = linear_names(cx, cx.name_of(q_in), wq, bq)
    k = linear_names(cx, cx.name_of(k_in), wk, bk)
    v = linear_names(cx, cx.name_of(v_in), wv, bv)
    split = cx.ints([0, 0, heads, hd])  # (L, N, E) -> (L, N, h, hd)
    q = cx.op("Transpose", [cx.op("Reshape", [q, split])], perm=[1, 2, 0, 3])  # (N, h, Lq, hd)
    k = cx.op("Transpose", [cx.op("Reshape", [k, split])], perm=[1, 2, 3, 0])  # (N, h, hd, Lk)
    v = cx.op("Transpose", [cx.op("Reshape", [v, split])], perm=[1, 2, 0, 3])  # (N, h, Lk, hd)
    scores = cx.op("Mul", [cx.op("MatMul", [q, k]), cx.name_of(1.0 / math.sqrt(hd), q_in)])
    attn_mask, pad_mask = n.arg("attn_mask"), n.arg("key_padding_mask")
    if attn_mask is not None:
        if len(attn_mask.shape) == 3:  # (N*h, Lq, Lk) -> (N, h, Lq, Lk)
            bias = cx.op(
                "Reshape", [_additive(cx, attn_mask, q_in), cx.ints([-1, heads, *attn_mask.shape[1:]])]
            )
        else:
            bias = _additive(cx, attn_mask, q_in)
        scores = cx.op("Add", [scores, bias])
    if pad_mask is not None:  # (N, Lk) -> (N, 1, 1, Lk)
        pad = cx.op("Unsqueeze", [_additive(cx, pad_mask, q_in), cx.ints([1, 2])])
        scores = cx.op("Add", [scores, pad])
    weights = cx.op("Softmax", [scores], axis=-1)
    o = cx.op("Transpose", [cx.op("MatMul", [weights, v])], perm=[2, 0, 1, 3])  # (Lq, N, h, hd)
    o = cx.op("Reshape", [o, cx.ints([0, 0, e])])
    o = linear_names(cx, o, n.arg("out_proj_weight", pos=6), n.arg("out_proj_bias", pos=7))
    if len(n.output_values()) == 1:
        return [o]
    if n.arg("average_attn_weights", True):
        weights = (
            cx.op("ReduceMean", [weights], axes=[1], keepdims=0)
            if cx.opset < 18
            else cx.op("ReduceMean", [weights, cx.ints([1])], keepdims=0)
        )
    return [o, weights]
