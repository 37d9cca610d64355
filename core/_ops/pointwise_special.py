"""Elementwise math beyond the primitives: inverse trig and hyperbolic functions, special
functions, safe binary forms (``atan2``, ``hypot``, ``logaddexp``, ``xlogy``), ``lerp``
and shifts.

Functions with a stable decomposition into ember ops get their gradients from it. Special
functions with no decomposition are composite ops (a backend kernel, else the CPU one);
each records a node whose rule is written in ember ops.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._creation import zeros
from .._dtype import c_name, pt_name
from .._public import op, public
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from ._args import invalid_combination
from ._common import broadcast_shape, sum_to
from ._composite import NoRecord, composed, not_implemented_for, run_composite
from ._operands import as_float as _float
from ._operands import check_tensors as _tensors
from ._operands import promoted_pair as _pair
from ._operands import scalar_tensor as _as_tensor
from .pointwise_binary import maximum, minimum, remainder, result_type
from .pointwise_unary import abs, exp, expm1, isnan, log, log1p, sign, sqrt
from .select import where

PUBLIC = public(
    __name__,
    {
        "acos": op("arccos", method=True, inplace=True),
        "acosh": op("arccosh", method=True, inplace=True),
        "addcdiv": op(method=True, inplace=True),
        "addcmul": op(method=True, inplace=True),
        "asin": op("arcsin", method=True, inplace=True),
        "asinh": op("arcsinh", method=True, inplace=True),
        "atan": op("arctan", method=True, inplace=True),
        "atan2": op("arctan2", method=True, inplace=True),
        "atanh": op("arctanh", method=True, inplace=True),
        "bitwise_left_shift": op(method=True, inplace=True),
        "bitwise_right_shift": op(method=True, inplace=True),
        "copysign": op(method=True, inplace=True),
        "cosh": op(method=True, inplace=True),
        "digamma": op(method=True, inplace=True),
        "erfc": op(method=True, inplace=True),
        "erfinv": op(method=True, inplace=True),
        "float_power": op(method=True),
        "fmax": op(method=True),
        "fmin": op(method=True),
        "fmod": op(method=True, inplace=True),
        "hypot": op(method=True, inplace=True),
        "lerp": op(method=True, inplace=True),
        "lgamma": op(method=True, inplace=True),
        "logaddexp": op(method=True),
        "logaddexp2": op(method=True),
        "polygamma": op(),
        "signbit": op(method=True),
        "sinh": op(method=True, inplace=True),
        "xlogy": op(method=True, inplace=True),
    },
)
__all__ = [*PUBLIC, "composite_unary"]


_SQRT_PI = math.sqrt(math.pi)

_LN2 = math.log(2.0)


def composite_unary(name: str, node: str | None, rule: Callable[..., Any] | None) -> Callable[..., Tensor]:
    """A special function run as composite op ``name``, with derivative ``rule(x, out, g)``."""

    def node_rule(n: Any, g: Tensor) -> tuple:
        x, out = n.ctx
        if rule is None:
            raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
        return (rule(x, out, g),)

    def op(input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
            )
        if name not in ("atan", "asin", "acos"):
            not_implemented_for(f"{name}_vml_cpu", input, "complex")
        x = _float(input)
        out = run_composite(name, (x,), (), x.dtype)
        if _grad.enabled and x.requires_grad:
            record(node or name, node_rule, out, (x,), (), (x, out))
        return out

    op.__name__ = name
    return op


def _conj(t: Tensor) -> Tensor:
    return t.conj_physical() if t.dtype.is_complex else t


atan = composite_unary("atan", "AtanBackward0", lambda x, o, g: g / _conj(1 + x * x))

asin = autocast_op("asin")(
    composite_unary("asin", "AsinBackward0", lambda x, o, g: g / _conj(sqrt(1 - x * x)))
)

acos = autocast_op("acos")(
    composite_unary("acos", "AcosBackward0", lambda x, o, g: -g / _conj(sqrt(1 - x * x)))
)

erfc = composite_unary("erfc", "ErfcBackward0", lambda x, o, g: -g * (2 / _SQRT_PI) * exp(-x * x))

erfinv = autocast_op("erfinv")(
    composite_unary("erfinv", "ErfinvBackward0", lambda x, o, g: g * (_SQRT_PI / 2) * exp(o * o))
)

lgamma = composite_unary("lgamma", "LgammaBackward0", lambda x, o, g: g * digamma(x))

digamma: Callable[..., Tensor] = composite_unary(
    "digamma", "DigammaBackward0", lambda x, o, g: g * polygamma(1, x)
)


def _polygamma_rule(n: Any, g: Tensor) -> tuple:
    order, x = n.ctx
    return (g * polygamma(order + 1, x),)


def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of ``digamma``."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _float(input)
    out = run_composite("polygamma", (x,), (int(n),), x.dtype)
    if _grad.enabled and x.requires_grad:
        record("PolygammaBackward0", _polygamma_rule, out, (x,), (), (int(n), x))
    return out


def _atan2_rule(n: Any, g: Tensor) -> tuple:
    (y, x), _, _ = n.ctx

    denom = x * x + y * y
    recip = where(denom == 0, 0.0, 1 / denom)  # 0 at the origin, as PyTorch's atan2 backward
    return (sum_to(g * x * recip, y._shape), sum_to(-g * y * recip, x._shape))


def _atan2(input: Tensor, other: Tensor) -> Tensor:
    y, x = _pair(input, other)

    shape = broadcast_shape(y._shape, x._shape)
    return run_composite("atan2", (y.expand(shape), x.expand(shape)), (), y.dtype)


_atan2_op = composed(_atan2, "Atan2Backward0", _atan2_rule)


@autocast_op("atan2")
def atan2(input: Any, other: Any) -> Tensor:
    """The angle of the point ``(other, input)``, in ``(-pi, pi]``."""
    _tensors("atan2", input, other)
    not_implemented_for("atan2_cpu", input, "complex")
    y, x = _pair(input, other)
    return _atan2_op(y, x)


arctan2 = atan2


def _sinh(x: Tensor) -> Tensor:
    return (expm1(x) - expm1(-x)) * 0.5  # expm1 keeps small arguments precise


def _cosh(x: Tensor) -> Tensor:
    return (exp(x) + exp(-x)) * 0.5


_ASINH_BIG = {"float64": 1e150, "complex128": 1e150, "float16": 100.0}


def _asinh(x: Tensor) -> Tensor:
    a = abs(x)
    big = a > _ASINH_BIG.get(x.dtype.name, 1e18)  # x^2 would overflow: asinh(x) ~ log(2|x|)
    safe = where(big, 0.0, a)
    small = log1p(safe + safe * safe / (1 + sqrt(1 + safe * safe)))
    return sign(x) * where(big, log(where(big, a, 1.0)) + _LN2, small)


def _acosh(x: Tensor) -> Tensor:
    t = x - 1
    return log1p(t + sqrt(t * (x + 1)))


def _atanh(x: Tensor) -> Tensor:
    return 0.5 * log1p(2 * x / (1 - x))


def _hyperbolic(fn: Any, node: str, deriv: Any, doc: str) -> Any:
    def rule(n: Any, g: Tensor) -> tuple:
        (x,), out, _ = n.ctx
        return (g * deriv(x, out),)

    inner = composed(fn, node, rule)

    def op(input: Tensor) -> Tensor:
        return inner(_float(input))

    op.__name__ = fn.__name__.lstrip("_")
    op.__doc__ = doc
    return op


sinh = autocast_op("sinh")(_hyperbolic(_sinh, "SinhBackward0", lambda x, o: _cosh(x), "Hyperbolic sine."))

cosh = autocast_op("cosh")(_hyperbolic(_cosh, "CoshBackward0", lambda x, o: _sinh(x), "Hyperbolic cosine."))

asinh = _hyperbolic(_asinh, "AsinhBackward0", lambda x, o: 1 / sqrt(x * x + 1), "Inverse hyperbolic sine.")

acosh = _hyperbolic(_acosh, "AcoshBackward0", lambda x, o: 1 / sqrt(x * x - 1), "Inverse hyperbolic cosine.")

atanh = _hyperbolic(_atanh, "AtanhBackward0", lambda x, o: 1 / (1 - x * x), "Inverse hyperbolic tangent.")


def _hypot_rule(n: Any, g: Tensor) -> tuple:
    (a, b), out, _ = n.ctx

    return (sum_to(g * a / out, a._shape), sum_to(g * b / out, b._shape))


def _hypot(a: Tensor, b: Tensor) -> Tensor:
    return sqrt(a * a + b * b)


_hypot_op = composed(_hypot, "HypotBackward0", _hypot_rule)


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)`` elementwise."""
    _tensors("hypot", input, other, floats_only=True)
    not_implemented_for("hypot_cpu", input, "complex")
    a, b = _pair(input, other)
    return _hypot_op(a, b)


def fmod(input: Any, other: Any) -> Tensor:
    """C's ``fmod``: the remainder has the sign of the dividend."""
    a, b = _pair(input, other, floating=False)
    r = remainder(a, b)
    fix = (r != 0) & ((r < 0) != (a < 0))
    return where(fix, r - b, r)


def float_power(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent`` computed in float64 (complex128 for complex operands)."""
    dt = result_type(input, exponent)
    wide = D.complex128 if dt.is_complex else D.float64
    a = input.to(wide) if isinstance(input, Tensor) else input
    b = exponent.to(wide) if isinstance(exponent, Tensor) else exponent
    if not isinstance(a, Tensor):
        a = _as_tensor(float(a) if not isinstance(a, complex) else a, b).to(wide)
    return a**b


def _nan_aware(pick: Callable[[Tensor, Tensor], Tensor]) -> Callable[[Tensor, Tensor], Tensor]:
    def op(input: Tensor, other: Tensor) -> Tensor:
        _tensors("fmax" if pick is maximum else "fmin", input, other)
        a, b = _pair(input, other, floating=False)
        if a.dtype.category < 2:
            return pick(a, b)
        first = a >= b if pick is maximum else a <= b  # a tie sends the whole gradient to input (PyTorch)
        return where(isnan(b), a, where(isnan(a), b, where(first, a, b)))

    op.__name__ = "fmax" if pick is maximum else "fmin"
    op.__doc__ = "Elementwise max/min that ignores a NaN when the other value is a number; ties pick input."
    return op


fmax = _nan_aware(maximum)

fmin = _nan_aware(minimum)


def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set (also for -0.0 and negative NaN-free values)."""
    if input.dtype.category < 2:
        return input < 0 if input.dtype.is_signed else _false(input)
    if input.dtype.is_complex:
        raise RuntimeError("signbit is not implemented for complex tensors.")
    with NoRecord():
        neg_zero = (input == 0) & ((1 / input) < 0)
        return (input < 0) | neg_zero


def _copysign_rule(n: Any, g: Tensor) -> tuple:
    (a, b), out, _ = n.ctx

    ga = g * where(a == 0, 0.0, out / where(a == 0, 1.0, a))
    return (sum_to(ga, a._shape), sum_to(g * 0, b._shape))


def _copysign(a: Tensor, b: Tensor) -> Tensor:
    return where(signbit(b), -abs(a), abs(a))


_copysign_op = composed(_copysign, "CopysignBackward0", _copysign_rule)


def copysign(input: Any, other: Any) -> Tensor:
    """``|input|`` with the sign of ``other``."""
    a, b = _pair(input, other)
    return _copysign_op(a, b)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))`` without overflow."""
    _tensors("logaddexp", input, other, floats_only=True)
    a, b = _pair(input, other)
    if a.dtype.is_complex:  # shift by the operand with the larger real part
        m = where(a.real >= b.real, a, b)
        return m + log1p(exp(a + b - m - m))
    m = maximum(a, b)
    same_inf = (a == b) & (abs(a) == float("inf"))
    d = where(same_inf, 0.0, abs(a - b))
    return where(same_inf, a, m + log1p(exp(-d)))


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)`` without overflow."""
    _tensors("logaddexp2", input, other, floats_only=True)
    a, b = _pair(input, other)
    m = maximum(a, b)
    same_inf = (a == b) & (abs(a) == float("inf"))
    d = where(same_inf, 0.0, abs(a - b))
    return where(same_inf, a, m + log1p(exp(-d * _LN2)) / _LN2)


def _xlogy(input: Any, other: Any) -> Tensor:
    x, y = _pair(input, other)
    return where((x == 0) & ~isnan(y), 0.0, x * log(y))


def _xlogy_rule(n: Any, g: Tensor) -> tuple:
    """PyTorch's: ``log(other)`` for ``input`` (also where ``input == 0``, except where
    ``other <= 0``: 0 there), ``input / other`` for ``other``."""
    (a, b), _, _ = n.ctx
    x, y = _pair(a, b)
    out: list[Any] = [None, None]
    if isinstance(a, Tensor) and a.requires_grad:
        masked = (x == 0) & (y <= 0)
        out[0] = sum_to(g * where(masked, 0.0, log(where(masked, 1.0, y))), a._shape)
    if isinstance(b, Tensor) and b.requires_grad:
        out[1] = sum_to(g * x / y, b._shape)
    return tuple(out)


_xlogy_op = composed(_xlogy, "XlogyBackward0", _xlogy_rule)


def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, and 0 where ``input == 0`` (unless ``other`` is NaN)."""
    not_implemented_for("xlogy_cpu", input, "complex")
    return _xlogy_op(input, other)


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``, in PyTorch's two-sided form for accuracy."""
    if not isinstance(weight, (Tensor, bool, int, float, complex)):
        raise invalid_combination("lerp", (input, end, weight))
    if isinstance(end, Tensor) and end.dtype is not input.dtype:
        raise RuntimeError(
            f"expected dtype {c_name(input.dtype)} for `end` but got dtype {c_name(end.dtype)}"
        )
    not_implemented_for("lerp_kernel_scalar", input, "int")
    diff = end - input
    w = weight
    if isinstance(w, Tensor):
        return where(abs(w) < 0.5, input + w * diff, end - diff * (1 - w))
    if isinstance(w, (int, float)) and not isinstance(w, bool) and input.dtype in (D.float32, D.float64):
        # each side one fused multiply-add (add with alpha), as PyTorch
        if abs_py(w) < 0.5:
            return input.add(diff, alpha=float(w))
        return end.sub(diff, alpha=_one_minus(float(w), input.dtype))
    return input + w * diff if abs_py(w) < 0.5 else end - diff * (1 - w)


def _one_minus(w: float, dtype: Any) -> float:
    """``1 - w`` at ``dtype``'s precision, as PyTorch's lerp computes it."""
    if dtype is D.float64:
        return 1.0 - w
    return float(np.float32(1) - np.float32(w))


def abs_py(w: Any) -> float:
    return w if w >= 0 else -w


@autocast_op("addcmul")
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``."""
    not_implemented_for("addcmul_cpu_out", input, "bool")
    fused = _fused_addcmul(input, tensor1, tensor2, value)
    if fused is not None:
        return fused
    return input + (value * tensor1) * tensor2  # PyTorch's order: (value * t1) * t2, then the add


def _fused_addcmul(x: Any, t1: Any, t2: Any, value: Any) -> Tensor | None:
    """``(value * t1) * t2 + x`` with the last multiply and the add rounded once, as PyTorch's
    fused multiply-add: float32 tensors on one device that has float64, where that product is
    exact (the sum is rounded to float64, then float32: PyTorch's bits but for a rare tie);
    one ``AddcmulBackward0`` node with PyTorch's gradients. None for anything else."""
    ts = (x, t1, t2)
    if type(value) not in (int, float) or not all(isinstance(t, Tensor) and t.dtype is D.float32 for t in ts):
        return None
    if not (x._device is t1._device is t2._device) or D.float64 not in x._be.backend.dtypes:
        return None
    f64 = D.float64
    with NoRecord():
        prod = t1 * value if value != 1 else t1
        out = (prod.to(f64) * t2.to(f64) + x.to(f64)).to(D.float32)
    if _grad.enabled and any(t._requires_grad for t in ts):
        record("AddcmulBackward0", _addcmul_rule, out, ts, (), (t1, t2, value, x._shape))
    return out


def _addcmul_rule(n: Any, g: Tensor) -> tuple:
    t1, t2, value, x_shape = n.ctx
    need = n.needs_input_grad
    return (
        sum_to(g, x_shape) if need[0] else None,
        sum_to(g * t2 * value, t1._shape) if need[1] else None,
        sum_to(g * t1 * value, t2._shape) if need[2] else None,
    )


@autocast_op("addcdiv")
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2`` (integer division refuses, as in PyTorch)."""
    if tensor1.dtype.category < 2 and tensor2.dtype.category < 2:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
            "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
            "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
            "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
            "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes."
        )
    return input + (value * tensor1) / tensor2  # PyTorch's order: (value * t1) / t2, then the add


def _shift_operands(input: Any, other: Any, name: str) -> tuple[Tensor, Tensor]:
    a, b = _pair(input, other, floating=False)
    if a.dtype.category != 1 or a.dtype is D.bool_:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{pt_name(a.dtype)}'")
    return a, b


def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    """``input << other`` for integers (0 once the shift reaches the width)."""
    a, b = _shift_operands(input, other, "lshift")
    bits = a.dtype.bits
    ok = (b >= 0) & (b < bits)
    p = (2 ** where(ok, b, 0)).to(a.dtype)
    return where(ok, a * p, 0).to(a.dtype)


def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    """``input >> other`` (arithmetic for signed integers)."""
    a, b = _shift_operands(input, other, "rshift")
    bits = a.dtype.bits
    ok = (b >= 0) & (b < bits - (1 if a.dtype.is_signed else 0))
    p = (2 ** where(ok, b, 0)).to(a.dtype)
    over = where(a < 0, -1, 0).to(a.dtype)
    return where(ok, a // p, over).to(a.dtype)


def _false(input: Tensor) -> Tensor:
    return zeros(input._shape, dtype=D.bool_, device=input._device)
