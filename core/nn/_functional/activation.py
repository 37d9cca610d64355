"""Elementwise activations, each written in ember ops (their gradients come from those ops)."""

from __future__ import annotations

import math
from typing import Any

from ..._autocast_hook import autocast_op
from ..._dtype import pt_name
from ..._ops import pointwise_unary as U
from ..._ops._args import must_be
from ..._ops.convert import inplace as _inplace_form
from ..._ops.select import clamp, where
from ..._public import op, public
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...autograd.grad_mode import state as _grad
from ...autograd.graph import record, relabel

PUBLIC = public(
    __name__,
    {
        "celu": op(),
        "selu": op(),
    },
)
__all__ = [
    *PUBLIC,
    "elu",
    "gelu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "leaky_relu",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "rrelu",
    "sigmoid",
    "silu",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _apply(fn: Any, input: Tensor, inplace: bool, name: str, name_inplace: str, *args: Any) -> Tensor:
    """``fn(input, *args)``, or written into ``input`` as PyTorch's in-place form is: the same
    tensor back, its version bumped, its ``grad_fn`` the op's node (the engine keeps the old
    value), a leaf requiring grad refused. Nodes get PyTorch's names."""
    if not inplace:
        return relabel(fn(input, *args), name) if name else fn(input, *args)
    before = input.grad_fn
    out = _inplace_form(fn)(input, *args)
    if out.grad_fn is not None and out.grad_fn is not before:
        relabel(out, name_inplace)
    return out


def _floating(kernel: str, input: Any, fn: str = "") -> None:
    """PyTorch's refusal of a non-Tensor, or of integer input to a floating-only kernel."""
    if not isinstance(input, Tensor):
        raise must_be(fn or kernel.removesuffix("_cpu"), "input", "Tensor", input, 1)
    if input.dtype.category < 2:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{pt_name(input.dtype)}'")


def _relu(input: Tensor) -> Tensor:
    return U.relu(input)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)`` (NaN stays NaN); one ``ReluBackward0`` node: ``grad * (out > 0)``."""
    if not isinstance(input, Tensor):
        raise must_be("relu", "input", "Tensor", input, 1)
    return _apply(_relu, input, inplace, "", "ReluBackward0")


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _leaky_relu(input: Tensor, negative_slope: float) -> Tensor:
    return where(input > 0, input, input * negative_slope)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` if ``x > 0`` else ``negative_slope * x``."""
    _floating("leaky_relu_cpu", input)
    return _apply(_leaky_relu, input, inplace, "LeakyReluBackward0", "LeakyReluBackward1", negative_slope)


def _elu_rule(n: Any, g: Tensor) -> tuple:
    """PyTorch's: ``alpha * scale * s * exp(s x)`` for ``x <= 0``; the exponent is held at 0 from
    ``x = 0`` up, so the second derivative at 0 is 0 as in PyTorch's ``elu_backward``."""
    x, alpha, scale, s = n.ctx
    neg = U.exp(where(x < 0, x, 0.0) * s) * (alpha * scale * s)
    return (g * where(x > 0, scale, neg),)


def _elu(input: Tensor, alpha: float, scale: float, s: float) -> Tensor:
    """``scale * x`` if ``x > 0`` else ``scale * alpha * (exp(s x) - 1)``."""
    with no_grad():
        neg = U.expm1(clamp(input, max=0.0) * s) * alpha
        out = where(input > 0, input, neg) * scale if scale != 1.0 else where(input > 0, input, neg)
    return _smooth("EluBackward0", _elu_rule, out, input, (input, alpha, scale, s))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``."""
    _floating("elu_cpu", input)
    return _apply(_elu, input, inplace, "", "EluBackward1", alpha, 1.0, 1.0)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    _floating("elu_cpu", input, "selu")
    return _apply(_elu, input, inplace, "", "EluBackward1", _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    _floating("elu_cpu", input, "celu")
    return _apply(_elu, input, inplace, "CeluBackward0", "CeluBackward1", alpha, 1.0, 1.0 / alpha)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Φ(x)``; ``approximate='tanh'`` uses ``0.5x(1 + tanh(√(2/π)(x + 0.044715x³)))``."""
    _floating("GeluKernelImpl", input, "gelu")
    if approximate == "tanh":
        inner = (input + 0.044715 * input * input * input) * math.sqrt(2.0 / math.pi)
        return 0.5 * input * (1.0 + U.tanh(inner))
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    return 0.5 * input * (1.0 + U.erf(input * (1.0 / math.sqrt(2.0))))


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))``."""
    return U.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return U.tanh(input)


def _silu(input: Tensor) -> Tensor:
    return input * U.sigmoid(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)``."""
    _floating("silu_cpu", input)
    return _apply(_silu, input, inplace, "SiluBackward0", "SiluBackward0")


def _smooth(name: str, rule: Any, out: Tensor, input: Tensor, ctx: tuple) -> Tensor:
    """Record ``out`` (computed without a graph) with its own rule: the stable forms below have
    kinks (``|x|``, ``max(x, 0)``) whose subgradients would add up wrong at 0 (PyTorch: ``σ(0) = 0.5``)."""
    if _grad.enabled and input.requires_grad:
        record(name, rule, out, (input,), (), ctx)
    return out


def _softplus_rule(n: Any, g: Tensor) -> tuple:
    x, beta, threshold = n.ctx
    bx = x * beta
    return (where(bx > threshold, g, g * U.sigmoid(bx)),)


@autocast_op("nn.functional.softplus")
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, linear where ``beta x > threshold``; ``d/dx = σ(beta x)``."""
    _floating("softplus_cpu", input)
    with no_grad():
        bx = input * beta
        soft = (clamp(bx, min=0.0) + U.log1p(U.exp(-U.abs(bx)))) / beta
        out = where(bx > threshold, input, soft)
    return _smooth("SoftplusBackward0", _softplus_rule, out, input, (input, beta, threshold))


def _mish(input: Tensor) -> Tensor:
    return input * U.tanh(softplus(input))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    _floating("mish_cpu", input)
    return _apply(_mish, input, inplace, "MishBackward0", "MishBackward0")


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return input / (1 + U.abs(input))


def _hardtanh_rule(n: Any, g: Tensor) -> tuple:
    x, lo, hi = n.ctx
    return (where((x > lo) & (x < hi), g, 0.0),)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` clamped to ``[min_val, max_val]``; unlike ``clamp``, the gradient is 0 at the bounds."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _apply(_hardtanh, input, inplace, "", "HardtanhBackward0", min_val, max_val)


def _hardtanh(input: Tensor, min_val: float, max_val: float) -> Tensor:
    with no_grad():
        out = clamp(input, min_val, max_val)
        if out.dtype is not input.dtype:  # integer input stays integer, as in PyTorch
            out = out.to(input.dtype)
    return _smooth("HardtanhBackward0", _hardtanh_rule, out, input, (input, min_val, max_val))


def _hardsigmoid_rule(n: Any, g: Tensor) -> tuple:
    (x,) = n.ctx
    return (where((x > -3.0) & (x < 3.0), g / 6.0, 0.0),)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``; gradient ``1/6`` strictly inside ``(-3, 3)``, 0 at and beyond ±3."""
    return _apply(_hardsigmoid, input, inplace, "", "HardsigmoidBackward0")


def _hardsigmoid(input: Tensor) -> Tensor:
    with no_grad():
        out = clamp(input + 3.0, 0.0, 6.0) / 6.0
    return _smooth("HardsigmoidBackward0", _hardsigmoid_rule, out, input, (input,))


def _hardswish_rule(n: Any, g: Tensor) -> tuple:
    (x,) = n.ctx
    inside = where((x > -3.0) & (x < 3.0), g * (x / 3.0 + 0.5), 0.0)
    return (where(x >= 3.0, g, inside),)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``; gradient 0 at ``-3`` and 1 at ``3`` (PyTorch's picks)."""
    return _apply(_hardswish, input, inplace, "", "HardswishBackward0")


def _hardswish(input: Tensor) -> Tensor:
    with no_grad():
        out = input * clamp(input + 3.0, 0.0, 6.0) / 6.0
    return _smooth("HardswishBackward0", _hardswish_rule, out, input, (input,))


def _logsigmoid_rule(n: Any, g: Tensor) -> tuple:
    (x,) = n.ctx
    return (g * U.sigmoid(-x),)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, stable for large ``|x|``; ``d/dx = σ(-x)``."""
    with no_grad():
        out = clamp(input, max=0.0) - U.log1p(U.exp(-U.abs(input)))
    return _smooth("LogSigmoidBackward0", _logsigmoid_rule, out, input, (input,))


def tanhshrink(input: Tensor) -> Tensor:
    return input - U.tanh(input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - λ`` above ``λ``, ``x + λ`` below ``-λ``, else 0."""
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, input * 0))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return where(U.abs(input) > lambd, input, input * 0)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` if ``x > threshold`` else ``value``."""
    return _apply(_threshold, input, inplace, "ThresholdBackward0", "ThresholdBackward1", threshold, value)


def _threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return where(input > threshold, input, value)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` where ``a, b`` are the halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input._shape[dim] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim % input.ndim} is size {input._shape[dim]}"
        )
    a, b = input.chunk(2, dim)
    return a * U.sigmoid(b)


@autocast_op("nn.functional.prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` if ``x > 0`` else ``weight * x`` (``weight`` per channel, dim 1, or one value)."""
    w = weight
    channels = input._shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{weight.numel()} and channel size = {channels}."
        )
    if weight.numel() > 1 and input.ndim >= 2:
        w = weight.reshape((1, -1) + (1,) * (input.ndim - 2))
    return where(input > 0, input, w * input)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Leaky ReLU with a random slope in ``[lower, upper]`` when training, else their mean."""
    if not training:
        mid = (lower + upper) / 2
        return _apply(_leaky_relu, input, inplace, "RreluWithNoiseBackward0", "RreluWithNoiseBackward1", mid)
    from ..._random import rand_like

    slope = rand_like(input) * (upper - lower) + lower
    return _apply(_rrelu, input, inplace, "RreluWithNoiseBackward0", "RreluWithNoiseBackward1", slope)


def _rrelu(input: Tensor, slope: Tensor) -> Tensor:
    return where(input >= 0, input, input * slope)
