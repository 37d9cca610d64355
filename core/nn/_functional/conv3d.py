"""3-D convolution and pooling, built from the 2-D ops: each kernel depth tap is one 2-D
op over all output depths at once (depth folded into the batch), so the derivative rules
are those of ``conv2d``/``max_pool2d``/``avg_pool2d``."""

from __future__ import annotations

from typing import Any

from ..._autocast_hook import autocast_op
from ..._ops.pointwise_binary import maximum
from ..._tensor import Tensor
from ._util import ntuple
from .conv import conv2d_op
from .padding import constant_pad
from .pooling import avg_pool2d, max_pool2d

__all__ = ["adaptive_avg_pool3d", "avg_pool3d", "conv3d", "max_pool3d"]


def _depth_taps(x: Tensor, k: int, s: int, d: int, pad: int, fill: float) -> tuple[list[Tensor], int]:
    """For each depth tap i: x at depths o*s + i*d for every output depth o, as (N·D_out, C, H, W)."""
    if pad:
        x = constant_pad(x, [(pad, pad), (0, 0), (0, 0)], fill)
    n, c, depth, h, w = x.shape
    d_out = (depth - d * (k - 1) - 1) // s + 1
    taps = []
    for i in range(k):
        start = i * d
        sl = x[:, :, start : start + s * (d_out - 1) + 1 : s]
        taps.append(sl.transpose(1, 2).reshape(n * d_out, c, h, w))
    return taps, d_out


def _unfold_depth(y: Tensor, n: int, d_out: int) -> Tensor:
    """(N·D_out, C, H, W) → (N, C, D_out, H, W)."""
    return y.reshape(n, d_out, *y.shape[1:]).transpose(1, 2)


@autocast_op("nn.functional.conv3d")
def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """3-D cross-correlation over (N, C, D, H, W) input with (O, C/groups, kD, kH, kW) weights."""
    if input.ndim not in (4, 5):
        raise RuntimeError(
            f"Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: {list(input.shape)}"
        )
    x = input if input.ndim == 5 else input.unsqueeze(0)
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(x.shape)} to have "
            f"{weight.shape[1] * groups} channels, but got {x.shape[1]} channels instead"
        )
    s, d = ntuple(stride, 3), ntuple(dilation, 3)
    if isinstance(padding, str):
        from .conv_api import _resolve_padding

        x, p = _resolve_padding(x, weight, padding, d, s, 3)
    else:
        p = ntuple(padding, 3)
    taps, d_out = _depth_taps(x, weight.shape[2], s[0], d[0], p[0], 0.0)
    out = None
    for i, tap in enumerate(taps):
        y = conv2d_op(tap, weight[:, :, i], s[1:], p[1:], d[1:], groups)  # type: ignore[arg-type]
        out = y if out is None else out + y
    out = _unfold_depth(out, x.shape[0], d_out)  # type: ignore[arg-type]
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out if input.ndim == 5 else out.squeeze(0)


@autocast_op("nn.functional.max_pool3d")
def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """Maximum over (kD, kH, kW) windows (``return_indices`` and ``ceil_mode`` are not supported)."""
    if return_indices or ceil_mode:
        raise NotImplementedError("max_pool3d: return_indices and ceil_mode are not supported yet")
    x = input if input.ndim == 5 else input.unsqueeze(0)
    k = ntuple(kernel_size, 3)
    s = k if stride is None else ntuple(stride, 3)
    p, d = ntuple(padding, 3), ntuple(dilation, 3)
    taps, d_out = _depth_taps(x, k[0], s[0], d[0], p[0], float("-inf"))
    out = None
    for tap in taps:
        y = max_pool2d(tap, k[1:], s[1:], p[1:], d[1:])
        out = y if out is None else maximum(out, y)
    out = _unfold_depth(out, x.shape[0], d_out)  # type: ignore[arg-type]
    return out if input.ndim == 5 else out.squeeze(0)


@autocast_op("nn.functional.avg_pool3d")
def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over (kD, kH, kW) windows (padding counts toward the divisor; no ``ceil_mode``)."""
    if ceil_mode or (not count_include_pad and any(ntuple(padding, 3))):
        raise NotImplementedError(
            "avg_pool3d: ceil_mode and count_include_pad=False with padding are not supported yet"
        )
    x = input if input.ndim == 5 else input.unsqueeze(0)
    k = ntuple(kernel_size, 3)
    s = k if stride is None else ntuple(stride, 3)
    p = ntuple(padding, 3)
    taps, d_out = _depth_taps(x, k[0], s[0], 1, p[0], 0.0)
    out = None
    for tap in taps:
        y = avg_pool2d(tap, k[1:], s[1:], p[1:], divisor_override=1)
        out = y if out is None else out + y
    out = _unfold_depth(out, x.shape[0], d_out) / (divisor_override or k[0] * k[1] * k[2])  # type: ignore[arg-type]
    return out if input.ndim == 5 else out.squeeze(0)


@autocast_op("nn.functional.adaptive_avg_pool3d")
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed (oD, oH, oW) with PyTorch's adaptive cells."""
    from .pooling import _adaptive_matrix

    size = (output_size,) * 3 if isinstance(output_size, int) else tuple(output_size)
    x = input
    for axis, o in zip((-3, -2, -1), size):
        n = x.shape[axis]
        o = n if o is None else o
        m = _adaptive_matrix(n, o, x)
        x = (m @ x.movedim(axis, -2)).movedim(-2, axis)
    return x
