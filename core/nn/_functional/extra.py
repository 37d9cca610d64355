"""Less common functional ops: unfold/fold, unpooling, LP pooling, LRN, channel shuffle,
gumbel softmax, multi-margin loss. Written over the ops with their own rules (conv, pooling)."""

from __future__ import annotations

import itertools
from typing import Any

from ember.backends import dtypes as D
from ember.backends.dtypes import promote_types

from ..._autocast_hook import autocast_op
from ..._creation import eye, zeros
from ..._creation import tensor as make
from ..._dtype import pt_name as _pt
from ..._ops import pointwise_unary as U
from ..._ops.gather_scatter import first_outside
from ..._ops.select import clamp
from ..._tensor import Tensor
from ._util import apply_reduction, ntuple
from .conv import conv2d_op, conv_input_grad
from .linear import check_embedding_indices, embedding_rows
from .loss import _no_grad_arg
from .padding import constant_pad
from .pooling import avg_pool2d
from .softmax import softmax

__all__ = [
    "channel_shuffle",
    "embedding_bag",
    "fold",
    "gumbel_softmax",
    "local_response_norm",
    "lp_pool1d",
    "lp_pool2d",
    "max_unpool1d",
    "max_unpool2d",
    "multi_margin_loss",
    "unfold",
]


def _identity_kernel(c: int, k: tuple, like: Tensor) -> Tensor:
    """(C·kh·kw, C, kh, kw) weights that copy each window element to its own channel."""
    n = c * k[0] * k[1]
    return eye(n, dtype=like.dtype, device=like.device).reshape(n, c, k[0], k[1])


def _pair(v: Any, name: str) -> tuple[int, int]:
    t = (int(v),) * 2 if isinstance(v, int) else tuple(int(a) for a in v)
    if len(t) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(t)}")
    return t


_WINDOW_CHECKS = {
    "kernel_size": ("kernel size should be greater than zero", "kernel", 1),
    "dilation": ("dilation should be greater than zero", "dilation", 1),
    "padding": ("padding should be non-negative", "pad", 0),
    "stride": ("stride should be greater than zero", "stride", 1),
}


def _window(order: tuple[str, ...], **args: Any) -> dict[str, tuple[int, int]]:
    """Parse im2col/col2im's int pairs and check them in PyTorch's order, with its messages."""
    out = {k: _pair(v, k) for k, v in args.items()}
    for key in order:
        text, short, least = _WINDOW_CHECKS[key]
        h, w = out[key]
        if h < least or w < least:
            raise RuntimeError(f"{text}, but got {short}_height: {h} {short}_width: {w}")
    return out


def _im2col_dtype(x: Tensor, op: str) -> None:
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{op}\" not implemented for '{_pt(x.dtype)}'")


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """Sliding windows as columns: (N, C, H, W) → (N, C·kh·kw, L) (im2col); (C, H, W) unbatched.

    Computed as a convolution with an identity kernel, so its gradient is ``fold``.
    """
    a = _window(
        ("kernel_size", "dilation", "padding", "stride"),
        kernel_size=kernel_size,
        dilation=dilation,
        padding=padding,
        stride=stride,
    )
    k, d, p, s = a["kernel_size"], a["dilation"], a["padding"], a["stride"]
    shape = list(input.shape)
    if input.ndim not in (3, 4) or 0 in shape[input.ndim - 3 :]:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
            f"input, but got: {shape}"
        )
    blocks = [(n + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i, n in enumerate(shape[-2:])]
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size ({shape[-2]}, {shape[-1]}), kernel_size={k}, dilation={d}, "
            f"padding={p}, calculated shape of the array of sliding blocks as ({blocks[0]}, {blocks[1]}), but "
            "its components must be at least one."
        )
    _im2col_dtype(input, "im2col_out_cpu")
    x = input if input.ndim == 4 else input.unsqueeze(0)
    out = conv2d_op(x, _identity_kernel(x.shape[1], k, x), s, p, d, 1)
    out = out.reshape(out.shape[0], out.shape[1], blocks[0] * blocks[1])
    return out if input.ndim == 4 else out.squeeze(0)


def fold(
    input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """Sum columns back into an image: (N, C·kh·kw, L) → (N, C, H, W) (col2im, the adjoint of unfold)."""
    size = _pair(output_size, "output_size")
    a = _window(
        ("kernel_size", "stride", "dilation", "padding"),
        kernel_size=kernel_size,
        dilation=dilation,
        padding=padding,
        stride=stride,
    )
    k, d, p, s = a["kernel_size"], a["dilation"], a["padding"], a["stride"]
    shape = list(input.shape)
    if input.ndim not in (2, 3) or 0 in shape[input.ndim - 2 :]:
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
            f"for input, but got: {shape}"
        )
    if shape[-2] % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={shape[-2]} and kernel_size={k}."
        )
    oh = (size[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (size[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh * ow != shape[-1]:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, expected size of "
            f"input's dimension 2 to match the calculated number of sliding blocks {oh} * {ow} = {oh * ow}, "
            f"but got input.size(2)={shape[-1]}."
        )
    _im2col_dtype(input, "col2im_out_cpu")
    x = input if input.ndim == 3 else input.unsqueeze(0)
    c = x.shape[1] // (k[0] * k[1])
    cols = x.reshape(x.shape[0], x.shape[1], oh, ow)
    out = conv_input_grad(cols, _identity_kernel(c, k, x), size, s, p, d, 1)
    return out if input.ndim == 3 else out.squeeze(0)


@autocast_op("nn.functional.max_unpool2d")
def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """Place each value at its ``max_pool2d`` index in a zero image (the partial inverse of max pooling)."""
    k = ntuple(kernel_size, 2)
    s = k if stride is None else ntuple(stride, 2)
    p = ntuple(padding, 2)
    if output_size is not None:
        h, w = tuple(output_size)[-2:]
    else:
        h = (input.shape[-2] - 1) * s[0] - 2 * p[0] + k[0]
        w = (input.shape[-1] - 1) * s[1] - 2 * p[1] + k[1]
    lead = input.shape[:-2]
    flat = zeros(lead + (h * w,), dtype=input.dtype, device=input.device)
    out = flat.scatter(-1, indices.flatten(-2), input.flatten(-2))
    return out.reshape(lead + (h, w))


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    k = ntuple(kernel_size, 1)[0]
    s = k if stride is None else ntuple(stride, 1)[0]
    p = ntuple(padding, 1)[0]
    length = (input.shape[-1] - 1) * s - 2 * p + k if output_size is None else tuple(output_size)[-1]
    flat = zeros(input.shape[:-1] + (length,), dtype=input.dtype, device=input.device)
    return flat.scatter(-1, indices, input)


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """``(sum over window of x^p)^(1/p)``."""
    k = ntuple(kernel_size, 2)
    out = avg_pool2d(input**norm_type, k, stride, 0, ceil_mode)
    return (U.sign(out) * U.relu(U.abs(out))).mul(k[0] * k[1]) ** (1.0 / norm_type)


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    s = None if stride is None else (1, ntuple(stride, 1)[0])
    out = lp_pool2d(input.unsqueeze(-2), norm_type, (1, ntuple(kernel_size, 1)[0]), s, ceil_mode)
    return out.squeeze(-2)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """``x / (k + alpha/n · sum of x² over n neighbouring channels)^beta``."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    sq = (input * input).reshape(input.shape[0], 1, input.shape[1], -1)
    sq = constant_pad(sq, [(size // 2, (size - 1) // 2), (0, 0)])
    div = avg_pool2d(sq, (size, 1), stride=1).reshape(input.shape)
    return input / (div * alpha + k) ** beta


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave channels: (N, g·c, *) viewed as (N, g, c, *) → (N, c, g, *) → (N, g·c, *)."""
    n, ch = input.shape[0], input.shape[1]
    rest = tuple(input.shape[2:])
    x = input.reshape((n, groups, ch // groups) + rest).transpose(1, 2)
    return x.reshape((n, ch) + rest)


def gumbel_softmax(
    logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """Softmax of ``(logits + Gumbel noise) / tau``; ``hard`` returns one-hot with soft gradients."""
    from ..._random import rand_like

    gumbels = -U.log(-U.log(rand_like(logits).clamp(min=1e-20)))
    y = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    y_hard = zeros(logits.shape, dtype=logits.dtype, device=logits.device).scatter(dim, index, 1.0)
    return y_hard - y.detach() + y


@autocast_op("nn.functional.multi_margin_loss")
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``sum_{i≠y} max(0, margin - x[y] + x[i])^p / C`` per sample (weighted by ``weight[y]``)."""
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    _no_grad_arg("multi_margin_loss", "weight", weight)
    x = input if input.ndim == 2 else input.unsqueeze(0)
    t = target.reshape(-1, 1)
    xy = x.gather(1, t)
    m = clamp(margin - xy + x, min=0.0)
    if p == 2:
        m = m * m
    if weight is not None:
        m = m * weight[t]
    m = m.scatter(1, t, 0.0)
    loss = m.sum(1) / x.shape[1]
    if input.ndim == 1:
        loss = loss.squeeze(0)
    return apply_reduction(loss, reduction)


def _bag_index_dtypes(input: Tensor, offsets: Tensor | None) -> tuple[Tensor, Tensor | None]:
    """As PyTorch does, ``input`` and ``offsets`` first take their common dtype, which must be
    int32 or int64 (so int16 indices with int64 offsets pass, float ones do not)."""
    if offsets is not None and offsets.dtype is not input.dtype:
        common = promote_types(input.dtype, offsets.dtype)
        input, offsets = input.to(common), offsets.to(common)
    check_embedding_indices(input, "embedding_bag")
    return input, offsets


def _check_bag_indices(input: Tensor, n: int, mode: str) -> None:
    """PyTorch's RuntimeError for an index outside ``[0, num_embeddings)`` (never the last row)."""
    bad = first_outside(input, 0, n)
    if bad is None:
        return
    if mode == "max":
        raise RuntimeError(
            f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {bad[1]}"
        )
    raise RuntimeError(
        f"Index {bad[0]} of input takes value {bad[1]} which is not in the valid range [0, {n})"
    )


def _bag_ids(n: int, offsets: list[int], include_last: bool) -> list[int]:
    starts = offsets[:-1] if include_last else offsets
    ends = starts[1:] + [offsets[-1] if include_last else n]
    ids = []
    for b, (a, e) in enumerate(zip(starts, ends)):
        ids += [b] * max(e - a, 0)
    return ids


def _check_offsets(offs: list[int], n: int) -> None:
    """PyTorch's refusals of bag offsets that do not start at 0 or run past the input."""
    if offs and offs[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
            f"position 0. However, got {offs[0]}\n[ ember.LongTensor{{}} ]"
        )
    if offs and offs[-1] > n:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {offs[-1]}"
        )
    if any(b < a for a, b in itertools.pairwise(offs)):
        raise RuntimeError(
            "Expected i < index_size to be true, but got false.  (Could this error message be improved?  "
            "If so, please report an enhancement request to PyTorch.)"
        )


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxima of bags of embedding rows (bags: rows of 2-D ``input``, or ``offsets``)."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")
    if input.ndim not in (1, 2):
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    input, offsets = _bag_index_dtypes(input, offsets)
    _check_bag_indices(input, weight._shape[0], mode)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences."
            )
        bags, n = input.shape
        ids = [b for b in range(bags) for _ in range(n)]
        flat = input.reshape(-1)
    else:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        offs = [int(v) for v in offsets.tolist()]
        _check_offsets(offs, input.shape[0])
        flat = input
        ids = _bag_ids(input.shape[0], offs, include_last_offset)
        bags = len(offs) - 1 if include_last_offset else len(offs)
    rows = embedding_rows(flat, weight, max_norm, norm_type)
    keep = None
    if padding_idx is not None:
        keep = (flat != padding_idx).to(weight.dtype).unsqueeze(-1)
        rows = rows * keep
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    dim = weight.shape[1]
    index = make(ids, dtype=D.int64, device=weight.device).reshape(-1, 1).expand(len(ids), dim)
    base = zeros((bags, dim), dtype=weight.dtype, device=weight.device)
    if mode == "max":
        return base.scatter_reduce(0, index, rows, reduce="amax", include_self=False)
    total = base.scatter_add(0, index, rows)
    if mode == "sum":
        return total
    ones = keep if keep is not None else zeros((len(ids), 1), dtype=weight.dtype, device=weight.device) + 1
    counts = zeros((bags, 1), dtype=weight.dtype, device=weight.device).scatter_add(0, index[:, :1], ones)
    return total / counts.clamp(min=1.0)
