"""Binary elementwise math and comparisons, each with its derivative rule beside it.

``_binary`` is the hot path of ``a + b``: promotion, broadcast and device checks on plain
tuples, one kernel call, and graph recording only when an input requires grad.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as _np
from ember.backends import dtypes as D
from ember.backends.dtypes import promote_types

from .._autocast_hook import autocast_op
from .._creation import full_like, numpy_dtype, tensor
from .._dispatch import call, has_kernel
from .._dtype import SCALAR_RESULT_CACHE as _SCALAR_DT
from .._dtype import combine, get_default_dtype, pt_name, result_type_scalar
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel
from ._args import check_number, invalid_combination
from ._common import broadcast_shape, same_device, sum_to
from ._composite import NoRecord
from .pointwise_unary import log, reciprocal, sqrt, trunc

PUBLIC = public(
    __name__,
    {
        "add": op(method=True, inplace=True),
        "bitwise_and": op(method=True, inplace=True),
        "bitwise_or": op(method=True, inplace=True),
        "bitwise_xor": op(method=True, inplace=True),
        "div": op("divide", "true_divide", method=True, inplace=True),
        "eq": op(method=True),
        "floor_divide": op(method=True, inplace=True),
        "ge": op(method=True),
        "greater": op(method=True),
        "greater_equal": op(method=True),
        "gt": op(method=True),
        "le": op(method=True),
        "less": op(method=True),
        "less_equal": op(method=True),
        "logical_and": op(method=True),
        "logical_or": op(method=True),
        "logical_xor": op(method=True),
        "lt": op(method=True),
        "maximum": op(method=True),
        "minimum": op(method=True),
        "mul": op("multiply", method=True, inplace=True),
        "ne": op("not_equal", method=True),
        "pow": op(method=True, inplace=True),
        "remainder": op(method=True, inplace=True),
        "rsub": op(),
        "sub": op("subtract", method=True, inplace=True),
    },
)
__all__ = [*PUBLIC, "binary_op", "divide", "multiply", "not_equal", "result_type", "subtract", "true_divide"]


_PY = {0: bool, 1: int, 2: float, 3: complex}

_INT_RANGE = {d: (-(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1) for d in (D.int8, D.int16, D.int32, D.int64)}

_INT_RANGE[D.uint8] = (0, 255)


def _scalar_for(x: Any, dt: Any) -> Any:
    """A Python scalar converted to ``dt``'s category (integers wrap like PyTorch's casts)."""
    v = _PY[dt.category](x)
    if dt.category == 1:
        lo, hi = _INT_RANGE[dt]
        if not lo <= v <= hi:
            span = hi - lo + 1
            v = (v - lo) % span + lo
    return v


class UnsupportedOperand(TypeError):
    """An operand that is neither a Tensor nor a number; Python operators turn it into
    ``NotImplemented`` so that Python raises (or compares ``== None``) as with PyTorch."""


def _as_scalar(x: Any) -> Any:
    if isinstance(x, (bool, int, float, complex)):
        return x
    if hasattr(x, "item") and hasattr(x, "dtype") and getattr(x, "ndim", None) == 0:
        return x.item()  # NumPy scalar
    raise UnsupportedOperand(
        f"unsupported operand type: expected a Tensor or a number, got {type(x).__name__}"
    )


def result_type(a: Any, b: Any) -> D.DType:
    """PyTorch's ``result_type`` for two operands (tensors or Python numbers)."""
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if ta and tb:
        if a.dtype is b.dtype:
            return a.dtype
        dims = [t.dtype for t in (a, b) if t._shape]
        zeros = [t.dtype for t in (a, b) if not t._shape]
        dim = promote_types(*dims) if len(dims) == 2 else (dims[0] if dims else None)
        zero = promote_types(*zeros) if len(zeros) == 2 else (zeros[0] if zeros else None)
        return combine(dim, zero, None)
    if ta:
        return result_type_scalar(a.dtype, _as_scalar(b))
    if tb:
        return result_type_scalar(b.dtype, _as_scalar(a))
    raise TypeError("result_type: at least one operand must be a Tensor")


_PY_SCALAR_TYPES = (bool, int, float, complex)


def _operands(a: Any, b: Any, op: str) -> tuple:
    """(be, device, dtype, shape, xa, xb): inputs promoted, cast and broadcast."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a._device is not b._device:
                a, b = _scalarise_cpu(a, b, op)
                if not isinstance(b, Tensor) or not isinstance(a, Tensor):
                    return _operands(a, b, op)
            dt: D.DType | None = a.dtype if a.dtype is b.dtype else result_type(a, b)
            sa, sb = a._shape, b._shape
            shape = sa if sa == sb else broadcast_shape(sa, sb)
            be = a._be
            xa = a._data if a.dtype is dt else call(be, "cast", a._data, dt)
            xb = b._data if b.dtype is dt else call(be, "cast", b._data, dt)
            if sa != shape:
                xa = call(be, "expand", xa, shape)
            if sb != shape:
                xb = call(be, "expand", xb, shape)
            return a._be, a._device, dt, shape, xa, xb
        tb = type(b)
        dt = _SCALAR_DT.get((a.dtype, tb))
        if dt is None:
            try:
                b = _as_scalar(b)
            except UnsupportedOperand:
                raise UnsupportedOperand(
                    f"{op}(): argument 'other' (position 2) must be Tensor, not {type(b).__name__}"
                ) from None
            dt = result_type_scalar(a.dtype, b)
            if tb in _PY_SCALAR_TYPES:
                _SCALAR_DT[a.dtype, tb] = dt
        xa = a._data if a.dtype is dt else call(a._be, "cast", a._data, dt)
        # The hot case, tensor(float) op float, needs no conversion of the scalar.
        xb = b if tb is float and dt.category == 2 else _scalar_for(b, dt)
        if dt in _HALF and op not in OPMATH_SCALAR and type(xb) is float:
            xb = _round_scalar(xb, dt)
        return a._be, a._device, dt, a._shape, xa, xb
    try:
        a = _as_scalar(a)
    except UnsupportedOperand:
        raise UnsupportedOperand(
            f"{op}(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}"
        ) from None
    if not isinstance(b, Tensor):  # two numbers: PyTorch makes the first a 0-d tensor
        return _operands(tensor(a), b, op)
    dt = result_type_scalar(b.dtype, a)
    xb = b._data if b.dtype is dt else call(b._be, "cast", b._data, dt)
    xa = _scalar_for(a, dt)
    if dt in _HALF and op not in OPMATH_SCALAR and type(xa) is float:
        xa = _round_scalar(xa, dt)
    return b._be, b._device, dt, b._shape, xa, xb


def _scalarise_cpu(a: Tensor, b: Tensor, op: str) -> tuple:
    # PyTorch lets a 0-d CPU tensor take part in an op on another device, as a scalar.
    if not b._shape and b._device.type == "cpu" and a._device.type != "cpu":
        return a, b.item()
    if not a._shape and a._device.type == "cpu" and b._device.type != "cpu":
        return a.item(), b
    same_device(a, b, op)
    return a, b


def binary_op(name: str, a: Any, b: Any, out_dtype: Any = None) -> Tensor:
    """Run primitive ``name`` on promoted, broadcast operands; no autograd."""
    if name in OPMATH_SCALAR and (_half(a) or _half(b)):
        out = _opmath_scalar(name, a, b)
        if out is not None:
            return out
    be, dev, dt, shape, xa, xb = _operands(a, b, name)
    return wrap(call(be, name, xa, xb), be, dev, out_dtype or dt, shape)


# float16/bfloat16 with a scalar operand (a Python number or a 0-d tensor), as PyTorch's CPU
# kernels: mul and the divisions read the scalar at float32 ("opmath") precision and round the
# float32 result once; every other op takes the scalar rounded to the tensor's dtype first.
_HALF = frozenset({D.float16, D.bfloat16})
OPMATH_SCALAR = frozenset({"mul", "div", "floordiv"})


def _half(x: Any) -> bool:
    return isinstance(x, Tensor) and x.dtype in _HALF


def _scalar_like(x: Any) -> bool:
    if isinstance(x, Tensor):
        return not x._shape and x.dtype.category == 2
    return type(x) is float or type(x) is int


def _opmath_scalar(name: str, a: Any, b: Any) -> Tensor | None:
    """``name(a, b)`` for a half tensor and a scalar operand in float32, rounded once to the
    tensor's dtype; None when the operands are not that case."""
    if _half(a) and _scalar_like(b):
        t, s = a, b
    elif _half(b) and _scalar_like(a):
        t, s = b, a
    else:
        return None
    if (isinstance(s, Tensor) and s.dtype is t.dtype) or result_type(a, b) is not t.dtype:
        return None
    f32 = D.float32
    with NoRecord():
        wide = t.to(f32)
        s32 = s.to(f32) if isinstance(s, Tensor) else float(s)
        out = binary_op(name, wide, s32) if t is a else binary_op(name, s32, wide)
        return out.to(t.dtype)


def _round_scalar(v: float, dt: Any) -> float:
    """A Python float rounded to float16/bfloat16 as PyTorch rounds a wrapped number (via float32)."""
    return float(numpy_dtype(dt).type(_np.float32(v)))


def _grad_needed(a: Any, b: Any) -> bool:
    return _grad.enabled and (getattr(a, "_requires_grad", False) or getattr(b, "_requires_grad", False))


def _shape(x: Any) -> tuple[int, ...]:
    return x._shape if isinstance(x, Tensor) else ()


def _differentiable(
    name: str, node: str, rule: Callable[..., Any], saves: str = "all"
) -> Callable[[Any, Any], Tensor]:
    """An op function: run the kernel, then record ``node`` with ``rule`` when needed.

    ``saves``: "all" (inputs and output), "inputs", or "" for rules that need only shapes
    (such graphs can be run twice).
    """

    def op(a: Any, b: Any) -> Tensor:
        # The common cases inline (no promotion, broadcast or scalar conversion to work out):
        # two tensors of one dtype, shape and device, or a float tensor and a Python float/int.
        if isinstance(a, Tensor):
            if isinstance(b, Tensor):
                if a.dtype is b.dtype and a._shape == b._shape and a._device is b._device:
                    be = a._be
                    out = wrap(call(be, name, a._data, b._data), be, a._device, a.dtype, a._shape)
                else:
                    out = binary_op(name, a, b)
                grad = _grad.enabled and (a._requires_grad or b._requires_grad)
            else:
                tb = type(b)
                if (tb is float or tb is int) and a.dtype.category == 2 and a.dtype not in _HALF:
                    be = a._be
                    xb = b if tb is float else float(b)  # as _operands converts it
                    out = wrap(call(be, name, a._data, xb), be, a._device, a.dtype, a._shape)
                else:
                    out = binary_op(name, a, b)
                grad = _grad.enabled and a._requires_grad
        else:
            out = binary_op(name, a, b)
            grad = _grad_needed(a, b)
        if grad:
            ctx: tuple[Any, ...]
            if saves == "all":
                ctx = (a, b, _shape(a), _shape(b), out)
            elif saves == "inputs":  # the rule never reads the output: it may change in place
                ctx = (a, b, _shape(a), _shape(b), None)
            else:
                ctx = (None, None, _shape(a), _shape(b), None)
            record(node, rule, out, (a, b), (), ctx)
        return out

    op.__name__ = name
    return op


def _reduce_pair(n: Any, ga: Any, gb: Any) -> tuple:
    _, _, sa, sb, _ = n.ctx
    need = n.needs_input_grad
    return (
        sum_to(ga, sa) if need[0] and ga is not None else None,
        sum_to(gb, sb) if need[1] and gb is not None else None,
    )


def _conj(x: Any) -> Any:
    if isinstance(x, complex):  # a Python complex scalar operand needs conjugating too
        return x.conjugate()
    return x.conj_physical() if isinstance(x, Tensor) and x.dtype.is_complex else x


# -- derivative rules (written in ember ops, so every backend differentiates them) ---------
def _add_rule(n: Any, g: Tensor) -> tuple:
    return _reduce_pair(n, g, g)


def _sub_rule(n: Any, g: Tensor) -> tuple:
    return _reduce_pair(n, g, -g if n.needs_input_grad[1] else None)


def _mul_rule(n: Any, g: Tensor) -> tuple:
    a, b = n.ctx[0], n.ctx[1]
    need = n.needs_input_grad
    return _reduce_pair(n, g * _conj(b) if need[0] else None, g * _conj(a) if need[1] else None)


def _div_rule(n: Any, g: Tensor) -> tuple:
    a, b = n.ctx[0], n.ctx[1]
    need = n.needs_input_grad
    ga = g / _conj(b) if need[0] else None
    gb = -g * _conj(a) / _conj(b * b) if need[1] else None
    return _reduce_pair(n, ga, gb)


def _pow_rule(n: Any, g: Tensor) -> tuple:
    a, b, _, _, out = n.ctx
    need = n.needs_input_grad
    ga = gb = None
    if need[0]:
        if isinstance(b, Tensor):
            ga = g * b * where_(b == 0, 1.0, a ** (b - 1))
        else:
            ga = g * 0.0 if b == 0 else g * (b * a ** (b - 1))
    if need[1]:
        base = a if isinstance(a, Tensor) else _full_like(out, a)
        gb = g * where_((base == 0) & (b >= 0), 0.0, out * log(base))
    return _reduce_pair(n, ga, gb)


def _max_min_rule(pick_a: Callable[[Any, Any], Any]) -> Callable[..., tuple]:
    def rule(n: Any, g: Tensor) -> tuple:
        a, b = n.ctx[0], n.ctx[1]
        half = g / 2
        ga = where_(a == b, half, where_(pick_a(a, b), g, 0.0))
        gb = where_(a == b, half, where_(pick_a(a, b), 0.0, g))
        return _reduce_pair(n, ga, gb)

    return rule


def _floor_rule(n: Any, g: Tensor) -> tuple:
    return _reduce_pair(n, g * 0.0, g * 0.0)


def _remainder_rule(n: Any, g: Tensor) -> tuple:
    a, b = n.ctx[0], n.ctx[1]
    return _reduce_pair(n, g, -g * floor_divide(a, b) if n.needs_input_grad[1] else None)


# -- the ops ---------------------------------------------------------------------------------
_add = _differentiable("add", "AddBackward0", _add_rule, saves="")


_sub = _differentiable("sub", "SubBackward0", _sub_rule, saves="")

mul = _differentiable("mul", "MulBackward0", _mul_rule, saves="inputs")

_maximum = _differentiable("maximum", "MaximumBackward0", _max_min_rule(lambda a, b: a > b), "inputs")

_minimum = _differentiable("minimum", "MinimumBackward0", _max_min_rule(lambda a, b: a < b), "inputs")


def _real_only(name: str, a: Any, b: Any) -> None:
    if any(isinstance(x, Tensor) and x.dtype.category == 3 for x in (a, b)):
        raise RuntimeError(f"{name} not implemented for complex tensors.")


def maximum(input: Any, other: Any) -> Tensor:
    """Elementwise maximum; NaN propagates."""
    _real_only("maximum", input, other)
    return _maximum(input, other)


def minimum(input: Any, other: Any) -> Tensor:
    """Elementwise minimum; NaN propagates."""
    _real_only("minimum", input, other)
    return _minimum(input, other)


_floordiv = _differentiable("floordiv", "FloorDivideBackward0", _floor_rule, saves="")

_pow = _differentiable("pow", "PowBackward1", _pow_rule)


def _check_alpha(fn: str, input: Any, other: Any, alpha: Any) -> None:
    """PyTorch's checks of ``alpha``: a number, integral for integral operands."""
    check_number(fn, "alpha", alpha)  # a Python number, or a one-element tensor as in PyTorch
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = tensor(_as_scalar(input))  # two numbers: the first is a 0-d tensor, as in PyTorch
    if isinstance(alpha, bool) and result_type(input, other) is not D.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    floating = isinstance(alpha, float) or (isinstance(alpha, Tensor) and alpha.dtype.category >= 2)
    if floating and result_type(input, other).category < 2:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input + alpha * other``, broadcasting. Example: ``ember.add(x, 1)``."""
    if type(alpha) is not int or alpha != 1:  # a tensor alpha is checked, never truth-tested
        _check_alpha("add", input, other, alpha)
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            input = tensor(_as_scalar(input))
        if type(alpha) in _NUMBER and isinstance(input, Tensor) and isinstance(other, Tensor):
            from .scaled import scaled_add  # cycle: ember._ops.scaled (it builds on this module)

            out = scaled_add(input, other, float(alpha), "AddBackward0")
            if out is not None:
                return out
        if isinstance(alpha, (int, float)) and result_type(input, other) is D.bool_:
            alpha = bool(alpha)  # bool operands stay bool: alpha only says whether other counts
        other = mul(other, alpha)
    return _add(input, other)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other``; bool tensors refuse, as in PyTorch."""
    if _is_bool(input) or _is_bool(other):
        if _is_bool(input) and _is_bool(other):
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead."
            )
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    if type(alpha) is not int or alpha != 1:  # a tensor alpha is checked, never truth-tested
        _check_alpha("sub", input, other, alpha)
        if type(alpha) in _NUMBER and isinstance(input, Tensor) and isinstance(other, Tensor):
            from .scaled import scaled_add  # cycle: ember._ops.scaled (it builds on this module)

            out = scaled_add(input, other, -float(alpha), "SubBackward0")
            if out is not None:
                return out
        other = mul(other, alpha)
    return _sub(input, other)


_NUMBER = (int, float)


def _is_bool(x: Any) -> bool:
    return (isinstance(x, Tensor) and x.dtype is D.bool_) or isinstance(x, bool)


def _to_float(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.to(get_default_dtype()) if x.dtype.category < 2 else x
    return float(x) if isinstance(x, (bool, int)) else x


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """True division (integers give floats); ``rounding_mode`` 'trunc' or 'floor'."""
    if rounding_mode is None:
        a, b = input, other
        if result_type(a, b).category < 2:
            a, b = _to_float(a), _to_float(b)
        out = binary_op("div", a, b)
        if _grad_needed(a, b):
            record("DivBackward0", _div_rule, out, (a, b), (), (a, b, _shape(a), _shape(b), None))
        return out
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        if _half(input) and _scalar_like(other):  # truncated in float32 before rounding, as PyTorch
            return trunc(div(input.float(), other.float() if isinstance(other, Tensor) else other)).to(
                input.dtype
            )
        if _is_float(input) or _is_float(other):
            return trunc(div(input, other))
        q = floor_divide(input, other)
        fix = ne(remainder(input, other), 0) & ne(
            lt(input, 0), lt(other, 0) if isinstance(other, Tensor) else other < 0
        )
        return where_(fix, q + 1, q)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
    )


def _is_float(x: Any) -> bool:
    if isinstance(x, Tensor):
        return x.dtype.category >= 2
    return isinstance(x, (float, complex))


true_divide = div


def floor_divide(input: Any, other: Any) -> Tensor:
    """``floor(input / other)``: rounds toward minus infinity, as Python's ``//``."""
    _refuse(input, other, 3, "div_floor")
    _refuse_bools(input, other, "div_floor")
    return _floordiv(input, other)


def remainder(input: Any, other: Any) -> Tensor:
    """Python's ``%``: the result has the sign of the divisor."""
    _refuse(input, other, 3, "remainder")
    _refuse_bools(input, other, "remainder")
    be, dev, dt, shape, xa, xb = _operands(input, other, "remainder")
    if has_kernel(be, "remainder"):
        out = wrap(call(be, "remainder", xa, xb), be, dev, dt, shape)
    else:
        a_t = wrap(xa, be, dev, dt, shape) if not isinstance(xa, (int, float, complex)) else xa
        b_t = wrap(xb, be, dev, dt, shape) if not isinstance(xb, (int, float, complex)) else xb
        with NoRecord():
            out = sub(a_t, mul(floor_divide(a_t, b_t), b_t))
    if _grad_needed(input, other):
        record(
            "RemainderBackward0",
            _remainder_rule,
            out,
            (input, other),
            (),
            (input, other, _shape(input), _shape(other), out),
        )
    return out


@autocast_op("pow")
def pow(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent``; integer tensors to negative integer powers raise."""
    if not isinstance(exponent, (Tensor, bool, int, float, complex)) and not hasattr(exponent, "dtype"):
        raise UnsupportedOperand(str(invalid_combination("pow", (input, exponent))))
    if isinstance(input, Tensor) and input.dtype.category == 1 and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(exponent, (int, float)) and not isinstance(exponent, bool) and isinstance(input, Tensor):
        out = _pow_special(input, exponent)
        if out is None:
            out = binary_op("pow", input, exponent)
        if _grad_needed(input, None):
            record(
                "PowBackward0",
                _pow_rule,
                out,
                (input, exponent),
                (),
                (input, exponent, input._shape, (), None),  # x ** c needs only x
            )
        return out
    out = _pow(input, exponent)
    return relabel(out, "PowBackward2") if not isinstance(input, Tensor) else out


def _pow_special(x: Tensor, e: float) -> Tensor | None:
    """``x ** e`` for the exponents PyTorch computes without a power function, with its bits
    (PyTorch 2.13's CPU kernels): 3 as ``(x * x) * x``, -2 as ``1 / (x * x)`` (float16 in
    float32, rounded once; bfloat16 step by step in bfloat16), -0.5 as ``1 / sqrt(x)`` for
    float32/float64; None for any other case (2, 0.5 and -1 already agree in every power kernel)."""
    dt = x.dtype
    if dt.category != 2 or e not in (3, -2, -0.5) or (e == -0.5 and dt in _HALF):
        return None
    with NoRecord():
        w = x.float() if dt is D.float16 else x
        if e == 3:
            r = w * w * w
        elif e == -2:
            r = reciprocal(w * w)
        else:
            r = reciprocal(sqrt(w))
        return r if r.dtype is dt else r.to(dt)


def _pt_name(a: Any, b: Any) -> str:
    return pt_name(result_type(a, b))


def _refuse(a: Any, b: Any, category: int, kernel: str) -> None:
    """PyTorch's NotImplementedError when an operand is of ``category`` or above."""
    ca = a.dtype.category if type(a) is Tensor else _SCALAR_CATEGORY.get(type(a), 0)
    cb = b.dtype.category if type(b) is Tensor else _SCALAR_CATEGORY.get(type(b), 0)
    if ca >= category or cb >= category:
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{_pt_name(a, b)}'")


_SCALAR_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3}


def _refuse_bools(a: Any, b: Any, kernel: str) -> None:
    if _is_bool(a) and _is_bool(b):
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for 'Bool'")


def _bitwise(name: str) -> Callable[[Any, Any], Tensor]:
    def op(input: Any, other: Any) -> Tensor:
        _refuse(input, other, 2, name)
        return binary_op(name, input, other)

    op.__name__ = name
    return op


bitwise_and = _bitwise("bitwise_and")

bitwise_or = _bitwise("bitwise_or")

bitwise_xor = _bitwise("bitwise_xor")


def _as_bool(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x if x.dtype is D.bool_ else ne(x, 0)
    return bool(x)


def logical_and(input: Any, other: Any) -> Tensor:
    return binary_op("bitwise_and", _as_bool(input), _as_bool(other))


def logical_or(input: Any, other: Any) -> Tensor:
    return binary_op("bitwise_or", _as_bool(input), _as_bool(other))


def logical_xor(input: Any, other: Any) -> Tensor:
    return binary_op("bitwise_xor", _as_bool(input), _as_bool(other))


def _compare(name: str, swap: bool, torch_name: str = "") -> Callable[[Any, Any], Tensor]:
    def op(input: Any, other: Any) -> Tensor:
        if torch_name:  # ordering comparisons refuse complex operands
            _refuse(input, other, 3, torch_name)
        a, b = (other, input) if swap else (input, other)
        return binary_op(name, a, b, D.bool_)

    return op


eq = _compare("eq", False)

lt = _compare("lt", False, "lt")

le = _compare("le", False, "le")

gt = _compare("lt", True, "gt")

ge = _compare("le", True, "ge")


def ne(input: Any, other: Any) -> Tensor:
    return binary_op("bitwise_xor", eq(input, other), True, D.bool_)


def where_(cond: Tensor, a: Any, b: Any) -> Tensor:
    from .select import where  # cycle: ember._ops.select

    return where(cond, a, b)


def _full_like(t: Tensor, value: Any) -> Tensor:
    return full_like(t, value)


divide = div

multiply = mul

subtract = sub

greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``."""
    return sub(other, input, alpha=alpha)
