"""Attention: ``scaled_dot_product_attention`` and the multi-head attention forward pass.

Both run the ``sdpa`` composite: one backend call for the scores, mask, softmax, dropout and
both products, and one graph node whose rule is one ``sdpa_backward`` call (PyTorch's fused
CPU attention has one node too). A backend without those kernels runs their decompositions
below (so every backend computes attention on its own device). The dropout factors are drawn
by the frontend with ember's generator, as ``F.dropout`` draws them, so the kernel and the
decomposition give the same numbers for a seed (PyTorch's generator differs: its draws never
match bitwise). Double backward and a float mask that requires grad take the same formulas
in recorded ember ops.
"""

from __future__ import annotations

import math
from typing import Any

from ember.backends import dtypes as D

from ..._autocast_hook import autocast_op
from ..._creation import ones, zeros
from ..._dispatch import call, has_kernel
from ..._dtype import c_name
from ..._ops._common import broadcast_shape
from ..._ops._composite import NoRecord, decomposition
from ..._ops.join import cat, stack
from ..._ops.select import where
from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import state as _grad
from ...autograd.graph import record
from ._util import recording
from .linear import keep_mask, linear

__all__ = ["InProj", "attend", "multi_head_attention_forward", "rows_linear", "scaled_dot_product_attention"]

_NEG_INF = float("-inf")


# -- the two composites as ember ops (their decompositions, and the recorded forms) ----------
def _weights(q: Tensor, k: Tensor, mask: Tensor | None, scale: float, causal: bool) -> Tensor:
    """softmax(q kᵀ·scale + mask) over keys; a row with nothing to attend is all zeros."""
    s = (q @ k.transpose(-2, -1)) * scale
    if causal:
        lq, lk = s._shape[-2:]
        s = s.masked_fill(_ones(lq, lk, q).triu(1), _NEG_INF)
    if mask is not None:
        s = s.masked_fill(mask.logical_not(), _NEG_INF) if mask.dtype is D.bool_ else s + mask
    if not s._shape[-1]:  # no keys: empty rows, and the output @ v is all zeros
        return s
    m = s.amax(-1, keepdim=True).detach().clamp(min=_lowest(s))
    e = (s - m).exp()
    return e / e.sum(-1, keepdim=True).clamp(min=1.0)  # a row holding its max sums to >= 1


def _ones(lq: int, lk: int, like: Tensor) -> Tensor:
    return ones((lq, lk), dtype=D.bool_, device=like._device)


def _lowest(t: Tensor) -> float:
    from ..._dtype_info import finfo

    return float(finfo(t.dtype).min)


def _sdpa_decomposed(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, drop: Tensor | None, scale: float, causal: bool
) -> tuple[Tensor, Tensor]:
    w = _weights(q, k, mask, scale, causal)
    return (w if drop is None else w * drop) @ v, w


def _sdpa_backward_decomposed(
    g: Tensor, q: Tensor, k: Tensor, v: Tensor, w: Tensor, drop: Tensor | None, scale: float
) -> tuple[Tensor, Tensor, Tensor]:
    """dS = W ∘ (dP − rowsum(dP ∘ W)), dP = (g vᵀ) ∘ drop; dq = dS k·scale, dk = dSᵀ q·scale."""
    dv = (w if drop is None else w * drop).transpose(-2, -1) @ g
    dp = g @ v.transpose(-2, -1)
    if drop is not None:
        dp = dp * drop
    ds = w * (dp - (dp * w).sum(-1, keepdim=True)) * scale
    return ds @ k, ds.transpose(-2, -1) @ q, dv


decomposition("sdpa")(_sdpa_decomposed)  # mask and drop may be None
decomposition("sdpa_backward")(_sdpa_backward_decomposed)


# -- one node ------------------------------------------------------------------------------
def _data(t: Tensor | None) -> Any:
    return None if t is None else t._data


def _forward(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, drop: Tensor | None, scale: float, causal: bool
) -> tuple[Tensor, Tensor]:
    be = q._be
    if not has_kernel(be, "sdpa"):
        with NoRecord():
            return _sdpa_decomposed(q, k, v, mask, drop, scale, causal)
    out, w = call(be, "sdpa", q._data, k._data, v._data, _data(mask), _data(drop), scale, causal)
    shape = q._shape[:-1]
    return (
        wrap(out, be, q._device, q.dtype, (*shape, v._shape[-1])),
        wrap(w, be, q._device, q.dtype, (*shape, k._shape[-2])),
    )


def _sdpa_rule(n: Any, g: Tensor) -> tuple:
    q, k, v, w, mask, drop, scale, causal = n.ctx
    if _grad.enabled:  # create_graph: the weights again, recorded, so higher orders see q and k
        return _sdpa_backward_decomposed(g, q, k, v, _weights(q, k, mask, scale, causal), drop, scale)
    return _sdpa_grads(g, q, k, v, w, drop, scale)


def _sdpa_grads(
    g: Tensor, q: Tensor, k: Tensor, v: Tensor, w: Tensor, drop: Tensor | None, scale: float
) -> tuple:
    be = g._be
    if not has_kernel(be, "sdpa_backward"):
        with NoRecord():
            return _sdpa_backward_decomposed(g, q, k, v, w, drop, scale)
    grads = call(be, "sdpa_backward", g._data, q._data, k._data, v._data, w._data, _data(drop), scale)
    return tuple(wrap(d, be, t._device, t.dtype, t._shape) for d, t in zip(grads, (q, k, v)))


def _sdpa_packed_rule(n: Any, g: Tensor) -> tuple:
    """The gradient of the packed (3, ...) q/k/v tensor: the three stacked, one op (an unbind
    node would scatter each into zeros and add the three up)."""
    qkv, q, k, v, w, mask, drop, scale, causal = n.ctx
    if _grad.enabled:  # create_graph: unbind again, recorded, so higher orders see qkv
        q, k, v = qkv.unbind(0)
        grads = _sdpa_backward_decomposed(g, q, k, v, _weights(q, k, mask, scale, causal), drop, scale)
    else:
        grads = _sdpa_grads(g, q, k, v, w, drop, scale)
    return (stack(list(grads), 0),)


def _product_error(batch: tuple, a: tuple, b: tuple) -> RuntimeError:
    """PyTorch's message for ``a @ b`` (2-D shapes) failing: ``mm``'s, or ``bmm``'s over the batch."""
    if not batch:
        return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})")
    n = math.prod(batch)
    return RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {a[1]}] but got: [{n}, {b[0]}]."
    )


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    dropout_p: float,
    causal: bool,
    scale: float,
    need_weights: bool = False,
    qkv: Tensor | None = None,
) -> tuple[Tensor, Tensor | None]:
    """Attention over validated inputs: (output, the weights after dropout if ``need_weights``).

    ``mask``: bool (True attends) or additive, broadcastable to (..., Lq, Lk). ``qkv``: the
    (3, ...) tensor q, k and v are the slices of (self-attention's one projection): the node
    then takes it as its input, and q, k, v given are ignored.
    """
    packed = qkv is not None and not need_weights and not recording(mask) and recording(qkv)
    if qkv is not None:
        if packed:
            with NoRecord():
                q, k, v = qkv.unbind(0)
        else:
            q, k, v = qkv.unbind(0)
    lq, lk = q._shape[-2], k._shape[-2]
    batch = q._shape[:-2]
    if k._shape[:-2] != batch or v._shape[:-2] != batch:
        batch = broadcast_shape(broadcast_shape(batch, k._shape[:-2]), v._shape[:-2])
        q, k, v = (t if t._shape[:-2] == batch else t.expand(*batch, *t._shape[-2:]) for t in (q, k, v))
    if k._shape[-1] != q._shape[-1]:
        raise _product_error(batch, q._shape[-2:], k._shape[-2:][::-1])
    if v._shape[-2] != lk:
        raise _product_error(batch, (lq, lk), v._shape[-2:])
    full = (*batch, lq, lk)
    if mask is not None:
        if mask.dtype is not D.bool_ and mask.dtype is not q.dtype:
            mask = mask.to(q.dtype)
        if mask._shape != full:
            mask = mask.expand(*broadcast_shape(full, mask._shape))
    drop = None
    if dropout_p > 0.0:
        if dropout_p == 1.0:  # F.dropout draws nothing then either
            drop = zeros(full, dtype=q.dtype, device=q._device)
        else:  # F.dropout's draw: keep where a uniform is >= p, scaled by 1/(1-p)
            keep = keep_mask(full, dropout_p, q.dtype, q._device)
            drop = keep.to(q.dtype) * (1.0 / (1.0 - dropout_p))
    if recording(mask) or (need_weights and recording(q, k, v)):
        # the weights themselves take part in the graph: recorded ember ops
        w = _weights(q, k, mask, scale, causal)
        wd = w if drop is None else w * drop
        return wd @ v, wd if need_weights else None
    out, w = _forward(q, k, v, mask, drop, scale, causal)
    if packed:
        ctx = (qkv, q, k, v, w, mask, drop, scale, causal)
        record("ScaledDotProductAttentionBackward0", _sdpa_packed_rule, out, (qkv,), (), ctx)
    elif recording(q, k, v):
        record(
            "ScaledDotProductAttentionBackward0",
            _sdpa_rule,
            out,
            (q, k, v),
            (),
            (q, k, v, w, mask, drop, scale, causal),
        )
    if not need_weights:
        return out, None
    with NoRecord():
        return out, w if drop is None else w * drop


def _check(query: Any, key: Any, value: Any, attn_mask: Any, dropout_p: float, is_causal: bool) -> None:
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead."
        )
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{c_name(query.dtype)} key.dtype: {c_name(key.dtype)} and value.dtype: {c_name(value.dtype)} instead."
        )
    if attn_mask is not None:
        if not (attn_mask.dtype is D.bool_ or attn_mask.dtype.is_floating_point):
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
                f"{c_name(attn_mask.dtype)} and  query.dtype: {c_name(query.dtype)} instead."
            )
        if is_causal:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
            )
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")


def _repeat_heads(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """Grouped-query attention: each key/value head serves ``Hq / Hkv`` query heads."""
    hq = query._shape[-3]
    out = []
    for t in (key, value):
        h = t._shape[-3]
        if hq % h:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
        out.append(t if h == hq else t.repeat_interleave(hq // h, -3))
    return out[0], out[1]


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

    A boolean ``attn_mask`` marks the allowed positions with True; a query with no allowed
    key gets zeros (PyTorch's safe softmax). ``dropout_p`` applies whatever the mode, as in
    PyTorch.
    """
    _check(query, key, value, attn_mask, dropout_p, is_causal)
    if enable_gqa and query.ndim >= 3:
        key, value = _repeat_heads(query, key, value)
    s = 1.0 / math.sqrt(query._shape[-1]) if scale is None else scale
    return attend(query, key, value, attn_mask, dropout_p, is_causal, s)[0]


# -- multi-head attention ------------------------------------------------------------------
class InProj(tuple):
    """The q, k and v projection weights (what ``multi_head_attention_forward`` and ONNX export
    read), with ``packed``: the (3E, E) weight and bias they slice, or None. Self-attention
    then projects with one ``linear`` and one graph node instead of three slices and three."""

    packed: tuple[Tensor, Tensor | None] | None = None


def _pad_key(mask: Tensor | None) -> Tensor | None:
    """One more key position, allowed (False / 0.0), at the end of a mask's last dim."""
    if mask is None:
        return None
    pad = zeros((*mask.shape[:-1], 1), dtype=mask.dtype, device=mask.device)
    return cat([mask, pad], -1)


def _additive(mask: Tensor, like: Tensor) -> Tensor:
    """A multi-head attention mask (bool: True = NOT allowed) as an additive float mask."""
    if mask.dtype is D.bool_:
        return where(mask, _NEG_INF, 0.0).to(like.dtype)
    return mask


def _merge_masks(
    attn_mask: Tensor | None,
    key_padding_mask: Tensor | None,
    n: int,
    heads: int,
    lq: int,
    lk: int,
    like: Tensor,
) -> Tensor | None:
    """Both masks as one sdpa mask (bool: True attends) broadcastable to (N, heads, L, S)."""
    mask = attn_mask
    if mask is not None and mask.ndim == 3:  # (N·heads, L, S)
        mask = mask.reshape(n, heads, lq, lk)
    if key_padding_mask is not None:
        kp = key_padding_mask.reshape(n, 1, 1, lk)
        if mask is None:
            mask = kp
        elif mask.dtype is D.bool_ and kp.dtype is D.bool_:
            mask = mask.logical_or(kp)
        else:
            return _additive(mask, like) + _additive(kp, like)
    if mask is not None and mask.dtype is D.bool_:
        return mask.logical_not()
    return mask


def _project(
    query: Tensor, key: Tensor, value: Tensor, in_proj: tuple, in_bias: tuple
) -> tuple[Tensor, Tensor, Tensor]:
    packed = getattr(in_proj, "packed", None)
    if packed is not None:
        w, b = packed
        e = w.shape[0] // 3
        in_proj = (w[:e], w[e : 2 * e], w[2 * e :])
        in_bias = (None,) * 3 if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
    return (
        rows_linear(query, in_proj[0], in_bias[0]),
        rows_linear(key, in_proj[1], in_bias[1]),
        rows_linear(value, in_proj[2], in_bias[2]),
    )


def rows_linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    """``linear`` of (..., in) as one (rows, in) product: one graph node (PyTorch flattens too)
    where the batched form is a transpose, a broadcast matmul and an add, each summed back."""
    lead = x._shape[:-1]
    out = linear(x.reshape(-1, x._shape[-1]), w, b)
    return out.reshape(*lead, w._shape[0])


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
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Sequence-first (L, N, E) multi-head attention; returns the output and (optionally) weights.

    ``bias_k``/``bias_v`` (1, 1, E) append one learned key/value to every sequence, and
    ``add_zero_attn`` one all-zero key/value per head (PyTorch's order: bias first). The
    returned weights are those after dropout, as PyTorch returns them.
    """
    lq, n, e = query.shape
    hd = e // num_heads
    packed = getattr(in_proj, "packed", None)
    if packed is not None and query is key and key is value and bias_k is None and not add_zero_attn:
        # (L, N, 3E) -> (3, N, heads, L, hd): one matmul and one node for the three projections
        qkv: Tensor | None = (
            rows_linear(query, *packed).reshape(lq, n, 3, num_heads, hd).permute(2, 1, 3, 0, 4)
        )
        q = k = v = query  # attend takes them from qkv
        lk = lq
    else:
        qkv = None
        q, k, v = _project(query, key, value, in_proj, in_bias)
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
    causal = is_causal and key_padding_mask is None and not need_weights
    like = q if qkv is None else qkv
    mask = None if causal else _merge_masks(attn_mask, key_padding_mask, n, num_heads, lq, lk, like)
    p = dropout_p if training else 0.0
    out, weights = attend(q, k, v, mask, p, causal, 1.0 / math.sqrt(hd), need_weights, qkv)
    out = linear(out.permute(2, 0, 1, 3).reshape(lq * n, e), out_proj_weight, out_proj_bias).reshape(lq, n, e)
    if weights is None:
        return out, None
    return out, weights.mean(1) if average_attn_weights else weights
