"""Attention: ``scaled_dot_product_attention`` and the multi-head attention forward pass."""

from __future__ import annotations

import math

from ember.backends import dtypes as D

from ..._autocast_hook import autocast_op
from ..._creation import ones, zeros
from ..._ops.join import cat
from ..._ops.select import where
from ..._tensor import Tensor
from .linear import dropout, linear
from .softmax import softmax

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

_NEG_INF = float("-inf")


def _as_bias(mask: Tensor | None, like: Tensor) -> Tensor | None:
    """A boolean mask (True = attend) or an additive float mask, as an additive bias."""
    if mask is None:
        return None
    if mask.dtype is D.bool_:
        return where(mask, 0.0, _NEG_INF).to(like.dtype)
    return mask


@autocast_op("nn.functional.scaled_dot_product_attention")
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(q kᵀ · scale + mask) v`` over the last two dims; ``scale`` defaults to 1/√E.

    A boolean ``attn_mask`` marks the allowed positions with True.
    """
    n_q, n_k = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * s
    if is_causal:
        causal = ones((n_q, n_k), dtype=D.bool_, device=query.device).tril()
        scores = scores + _as_bias(causal, scores)
    bias = _as_bias(attn_mask, scores)
    if bias is not None:
        scores = scores + bias
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def _pad_key(mask: Tensor | None) -> Tensor | None:
    """One more key position, allowed (False / 0.0), at the end of a mask's last dim."""
    if mask is None:
        return None
    pad = zeros((*mask.shape[:-1], 1), dtype=mask.dtype, device=mask.device)
    return cat([mask, pad], -1)


def _merge_masks(
    attn_mask: Tensor | None,
    key_padding_mask: Tensor | None,
    n: int,
    heads: int,
    lq: int,
    lk: int,
    like: Tensor,
) -> Tensor | None:
    # In multi-head attention a boolean mask marks the positions NOT allowed with True.
    bias = attn_mask
    if attn_mask is not None and attn_mask.dtype is D.bool_:
        bias = where(attn_mask, _NEG_INF, 0.0).to(like.dtype)
    if bias is not None and bias.ndim == 3:  # (N·heads, L, S)
        bias = bias.reshape(n, heads, lq, lk)
    if key_padding_mask is not None:
        if key_padding_mask.dtype is D.bool_:
            kp = where(key_padding_mask, _NEG_INF, 0.0).to(like.dtype)
        else:
            kp = key_padding_mask
        kp = kp.reshape(n, 1, 1, lk)
        bias = kp if bias is None else bias + kp
    return bias


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    num_heads: int,
    in_proj: tuple,
    in_bias: tuple,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    dropout_p: float = 0.0,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    average_attn_weights: bool = True,
    bias_k: Tensor | None = None,
    bias_v: Tensor | None = None,
    add_zero_attn: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Sequence-first (L, N, E) multi-head attention; returns the output and (optionally) weights.

    ``bias_k``/``bias_v`` (1, 1, E) append one learned key/value to every sequence, and
    ``add_zero_attn`` one all-zero key/value per head (PyTorch's order: bias first).
    """
    lq, n, e = query.shape
    hd = e // num_heads
    q = linear(query, in_proj[0], in_bias[0])
    k = linear(key, in_proj[1], in_bias[1])
    v = linear(value, in_proj[2], in_bias[2])
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.expand(1, n, e)], 0)
        v = cat([v, bias_v.expand(1, n, e)], 0)
        attn_mask, key_padding_mask = _pad_key(attn_mask), _pad_key(key_padding_mask)
    lk = k.shape[0]

    def heads(t: Tensor, length: int) -> Tensor:  # (L, N, E) -> (N, heads, L, hd)
        return t.reshape(length, n, num_heads, hd).permute(1, 2, 0, 3)

    q, k, v = heads(q, lq), heads(k, lk), heads(v, lk)
    if add_zero_attn:
        z = zeros((n, num_heads, 1, hd), dtype=k.dtype, device=k.device)
        k, v = cat([k, z], 2), cat([v, z], 2)
        attn_mask, key_padding_mask = _pad_key(attn_mask), _pad_key(key_padding_mask)
        lk += 1
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
    bias = _merge_masks(attn_mask, key_padding_mask, n, num_heads, lq, lk, scores)
    if bias is not None:
        scores = scores + bias
    weights = softmax(scores, -1)
    dropped = dropout(weights, dropout_p, training) if dropout_p > 0.0 else weights
    out = (dropped @ v).permute(2, 0, 1, 3).reshape(lq, n, e)
    out = linear(out, out_proj_weight, out_proj_bias)
    if not need_weights:
        return out, None
    return out, weights.mean(1) if average_attn_weights else weights
