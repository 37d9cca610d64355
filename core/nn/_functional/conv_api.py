"""Public convolutions: ``conv1d``, ``conv2d``, ``conv_transpose1d``, ``conv_transpose2d``."""

from __future__ import annotations

from typing import Any

from ..._autocast_hook import autocast_op
from ..._public import op, public
from ..._tensor import Tensor
from .conv import conv2d_op, conv_input_grad, fits_bias
from .padding import constant_pad

PUBLIC = public(
    __name__,
    {
        "conv1d": op(),
        "conv2d": op(),
        "conv_transpose1d": op(),
        "conv_transpose2d": op(),
    },
)
__all__ = [*PUBLIC]


def _check(name: str, x: Tensor, w: Tensor, groups: int, nd: int) -> None:
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of size: "
            f"{list(x._shape)}"
        )
    if w.ndim != nd + 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if w._shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size {list(w._shape)} instead"
        )
    c = x._shape[1] if x.ndim == nd + 2 else x._shape[0]
    if c != w._shape[1] * groups:
        shown = list(x._shape) if x.ndim == nd + 2 else [1] + list(x._shape)
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(w._shape)}, expected input{shown} to have "
            f"{w._shape[1] * groups} channels, but got {c} channels instead"
        )
    if x.dtype is not w.dtype:
        raise RuntimeError(f"Input type ({_tname(x)}) and weight type ({_tname(w)}) should be the same")


def _tname(t: Tensor) -> str:
    return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor"}.get(t.dtype.name, t.dtype.name)


def _tuple(v: Any, n: int) -> tuple[int, ...]:
    return (int(v),) * n if isinstance(v, int) else tuple(int(a) for a in v)


def _same_padding(x: Tensor, w: Tensor, dilation: tuple, stride: tuple) -> tuple[Tensor, tuple]:
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    total = [d * (k - 1) for d, k in zip(dilation, w._shape[2:])]
    left = [t // 2 for t in total]
    if all(t % 2 == 0 for t in total):
        return x, tuple(left)
    x = constant_pad(x, [(a, t - a) for a, t in zip(left, total)])
    return x, (0,) * len(total)


def _resolve_padding(x: Tensor, w: Tensor, padding: Any, dilation: tuple, stride: tuple, nd: int) -> tuple:
    if isinstance(padding, str):
        if padding == "valid":
            return x, (0,) * nd
        if padding == "same":
            return _same_padding(x, w, dilation, stride)
        raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    return x, _tuple(padding, nd)


def _check_size(x: Tensor, w: Tensor, padding: tuple, dilation: tuple) -> None:
    padded = [x._shape[2 + i] + 2 * padding[i] for i in range(len(padding))]
    eff = [dilation[i] * (w._shape[2 + i] - 1) + 1 for i in range(len(padding))]
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(
            "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be "
            "greater than actual input size".format(" x ".join(map(str, padded)), " x ".join(map(str, eff)))
        )


@autocast_op("conv2d")
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-D cross-correlation: ``out[n, o] = bias[o] + sum_c weight[o, c] ⋆ input[n, c]``.

    ``input`` is (N, C, H, W) or (C, H, W); ``weight`` is (O, C/groups, kH, kW); ``padding``
    may be an int, a pair, ``'valid'`` or ``'same'``.
    """
    _check("conv2d", input, weight, groups, 2)
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    stride, dilation = _tuple(stride, 2), _tuple(dilation, 2)
    x, pad = _resolve_padding(x, weight, padding, dilation, stride, 2)
    _check_size(x, weight, pad, dilation)
    if bias is not None and fits_bias(weight._shape[0], bias, x):
        out = conv2d_op(x, weight, stride, pad, dilation, groups, bias)
    else:
        out = conv2d_op(x, weight, stride, pad, dilation, groups)
        if bias is not None:
            out = out + bias.reshape(1, -1, 1, 1)
    return out.squeeze(0) if unbatched else out


@autocast_op("conv1d")
def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """1-D cross-correlation over (N, C, L) or (C, L) input with (O, C/groups, k) weights."""
    _check("conv1d", input, weight, groups, 1)
    x = input.unsqueeze(-2)
    w = weight.unsqueeze(-2)
    if not isinstance(padding, str):
        padding = (0, _tuple(padding, 1)[0])
    out = conv2d(x, w, None, (1, _tuple(stride, 1)[0]), padding, (1, _tuple(dilation, 1)[0]), groups)
    out = out.squeeze(-2)
    if bias is not None:
        out = out + (bias.reshape(-1, 1) if out.ndim == 2 else bias.reshape(1, -1, 1))
    return out


@autocast_op("conv_transpose2d")
def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """Transposed 2-D convolution (the gradient of ``conv2d`` in its input); weight (C_in, C_out/groups, kH, kW)."""
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    if x._shape[1] != weight._shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight._shape)}, expected input{list(x._shape)} to have "
            f"{weight._shape[0]} channels, but got {x._shape[1]} channels instead"
        )
    s, p, op, d = (_tuple(v, 2) for v in (stride, padding, output_padding, dilation))
    if any(op[i] >= s[i] and op[i] >= d[i] for i in range(2)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {op[0]} output_padding_width: {op[1]} stride_height: {s[0]} "
            f"stride_width: {s[1]} dilation_height: {d[0]} dilation_width: {d[1]}"
        )
    hw = tuple(
        (x._shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (weight._shape[2 + i] - 1) + op[i] + 1
        for i in range(2)
    )
    out = conv_input_grad(x, weight, hw, s, p, d, groups)  # type: ignore[arg-type]
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out.squeeze(0) if unbatched else out


@autocast_op("conv_transpose1d")
def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """Transposed 1-D convolution; weight (C_in, C_out/groups, k)."""
    out = conv_transpose2d(
        input.unsqueeze(-2),
        weight.unsqueeze(-2),
        None,
        (1, _tuple(stride, 1)[0]),
        (0, _tuple(padding, 1)[0]),
        (0, _tuple(output_padding, 1)[0]),
        groups,
        (1, _tuple(dilation, 1)[0]),
    )
    out = out.squeeze(-2)
    if bias is not None:
        out = out + (bias.reshape(-1, 1) if out.ndim == 2 else bias.reshape(1, -1, 1))
    return out
