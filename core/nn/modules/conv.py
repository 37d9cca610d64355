"""``Conv1d``, ``Conv2d``, ``ConvTranspose1d``, ``ConvTranspose2d`` (padding_mode zeros/reflect/replicate/circular)."""

from __future__ import annotations

import math
from typing import Any

from ..._creation import empty
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
]


def _tuple(v: Any, n: int) -> tuple[int, ...]:
    return (int(v),) * n if isinstance(v, int) else tuple(int(a) for a in v)


class _ConvNd(Module):
    _nd = 2
    _transposed = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
        output_padding: Any = 0,
    ) -> None:
        super().__init__()
        n = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(
                f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got padding_mode='{padding_mode}'"
            )
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string '{padding}', should be one of ['valid', 'same']")
            if padding == "same" and any(s != 1 for s in _tuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.dilation = _tuple(dilation, n)
        self.transposed = self._transposed
        self.output_padding = _tuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (
            (in_channels, out_channels // groups)
            if self._transposed
            else (out_channels, in_channels // groups)
        ) + self.kernel_size
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _mode_pad(self, x: Tensor) -> Tensor:
        pads: list[int] = []
        if isinstance(self.padding, str):  # 'same' with a non-zeros mode
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
        else:
            for p in reversed(self.padding):
                pads += [p, p]
        return F.pad(x, pads, mode=self.padding_mode)

    def _check_input(self, x: Tensor) -> None:
        n = self._nd
        if x.ndim not in (n + 1, n + 2):
            raise RuntimeError(
                f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to conv{n}d, but got input of size: {list(x.shape)}"
            )


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) input; weight (C_out, C_in/groups, kH, kW)."""

    _nd = 2

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            return F.conv2d(self._mode_pad(input), weight, bias, self.stride, 0, self.dilation, self.groups)
        return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input(input)
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) input; weight (C_out, C_in/groups, k)."""

    _nd = 1

    def forward(self, input: Tensor) -> Tensor:
        self._check_input(input)
        if self.padding_mode != "zeros":
            return F.conv1d(
                self._mode_pad(input), self.weight, self.bias, self.stride, 0, self.dilation, self.groups
            )
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


def _output_padding(m: Any, input: Tensor, output_size: Any) -> tuple[int, ...]:
    """The output padding that makes a transposed convolution return ``output_size``.

    ``output_size`` may include the batch and channel sizes; each spatial size must lie
    between the size without output padding and that plus ``stride - 1`` (PyTorch's check).
    """
    if output_size is None:
        return tuple(m.output_padding)
    nd = m._nd
    lead = 2 if input.dim() == nd + 2 else 1
    if len(output_size) == lead + nd:
        output_size = output_size[lead:]
    if len(output_size) != nd:
        raise ValueError(
            f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} "
            f"or {lead + nd} elements (got {len(output_size)})"
        )
    lo = [
        (input.shape[lead + d] - 1) * m.stride[d]
        - 2 * m.padding[d]
        + m.dilation[d] * (m.kernel_size[d] - 1)
        + 1
        for d in range(nd)
    ]
    hi = [lo[d] + m.stride[d] - 1 for d in range(nd)]
    if any(not lo[d] <= output_size[d] <= hi[d] for d in range(nd)):
        raise ValueError(
            f"requested an output size of {output_size}, but valid sizes range from {lo} to {hi} "
            f"(for an input of {input.size()[2:]})"
        )
    return tuple(int(output_size[d]) - lo[d] for d in range(nd))


class _ConvTransposeNd(_ConvNd):
    """Shared constructor and forward of the transposed convolutions (weight C_in-first)."""

    _transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
            output_padding,
        )

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        op = _output_padding(self, input, output_size)
        fn = F.conv_transpose1d if self._nd == 1 else F.conv_transpose2d
        return fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution; weight (C_in, C_out/groups, kH, kW)."""

    _nd = 2


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution; weight (C_in, C_out/groups, k)."""

    _nd = 1


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) input; weight (C_out, C_in/groups, kD, kH, kW)."""

    _nd = 3

    def forward(self, input: Tensor) -> Tensor:
        self._check_input(input)
        if self.padding_mode != "zeros":
            return F.conv3d(
                self._mode_pad(input), self.weight, self.bias, self.stride, 0, self.dilation, self.groups
            )
        return F.conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
