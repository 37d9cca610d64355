"""Unary elementwise math, each op with its derivative rule beside it.

Primitives call the backend's kernel; composites use the backend's kernel when it registers
one and otherwise decompose into primitives (the decomposition is differentiable too, but
the composite records one node with PyTorch's name and a direct rule).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._dispatch import call, has_kernel
from .._dtype import get_default_dtype
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel
from ._args import must_be
from ._composite import NoRecord, decomposition

PUBLIC = public(
    __name__,
    {
        "abs": op("absolute", method=("abs",), inplace=True),
        "bitwise_not": op(method=True),
        "ceil": op(method=True, inplace=True),
        "cos": op(method=True, inplace=True),
        "erf": op(method=True),
        "exp": op(method=True, inplace=True),
        "exp2": op(method=True),
        "expm1": op(method=True),
        "floor": op(method=True, inplace=True),
        "isfinite": op(method=True),
        "isinf": op(method=True),
        "isnan": op(method=True),
        "log": op(method=True, inplace=True),
        "log1p": op(method=True),
        "log2": op(method=True),
        "log10": op(method=True),
        "logical_not": op(method=True, inplace=True),
        "neg": op("negative", method=True, inplace=True),
        "positive": op(),
        "reciprocal": op(method=True, inplace=True),
        "relu": op(method=True, inplace=True),
        "round": op(method=True, inplace=True),
        "rsqrt": op(method=True),
        "sigmoid": op(method=True, inplace=True),
        "sign": op(method=True, inplace=True),
        "sin": op(method=True, inplace=True),
        "sqrt": op(method=True, inplace=True),
        "square": op(method=True, inplace=True),
        "tan": op(method=True),
        "tanh": op(method=True, inplace=True),
        "trunc": op("fix", method=True, inplace=("trunc", "fix")),
    },
)
__all__ = [*PUBLIC, "fix"]


def _floatify(x: Tensor) -> Tensor:
    return x.to(get_default_dtype()) if x.dtype.category < 2 else x


def _unary(
    name: str,
    node: str,
    rule: Callable[..., Any],
    float_only: bool = True,
    decompose: Callable[[Tensor], Tensor] | None = None,
    int_identity: bool = False,
    saves: str = "x",
) -> Callable[[Tensor], Tensor]:
    """An elementwise op; ``saves`` ("x", "out", "" ) is what its rule reads as ctx[0]/ctx[1].

    Saving only what the rule needs keeps in-place updates of the others legal, as in PyTorch.
    """
    keep_x, keep_out = "x" in saves, "out" in saves

    def op(input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
            )
        x = input
        if x.dtype.category < 2:
            if int_identity:
                return x.clone()
            if float_only:
                x = _floatify(x)
        if has_kernel(x._be, name):
            out = wrap(call(x._be, name, x._data), x._be, x._device, x.dtype, x._shape)
        else:
            with NoRecord():
                out = decompose(x)  # type: ignore[misc]
        if _grad.enabled and x._requires_grad:
            record(node, rule, out, (x,), (), (x if keep_x else None, out if keep_out else None))
        return out

    op.__name__ = op.__qualname__ = name
    return op


def _zero_rule(n: Any, g: Tensor) -> tuple:
    return (g * 0,)


# -- primitives --------------------------------------------------------------------------
exp = autocast_op("exp")(
    _unary("exp", "ExpBackward0", lambda n, g: (g * n.ctx[1].conj_physical(),), saves="out")
)


log = autocast_op("log")(_unary("log", "LogBackward0", lambda n, g: (g / n.ctx[0].conj_physical(),)))

sqrt = _unary("sqrt", "SqrtBackward0", lambda n, g: (g / (2 * n.ctx[1].conj_physical()),), saves="out")

sin = _unary("sin", "SinBackward0", lambda n, g: (g * cos(n.ctx[0]).conj_physical(),))

cos: Callable[..., Tensor] = _unary("cos", "CosBackward0", lambda n, g: (-g * sin(n.ctx[0]).conj_physical(),))

tanh = _unary(
    "tanh", "TanhBackward0", lambda n, g: (g * (1 - n.ctx[1] * n.ctx[1]).conj_physical(),), saves="out"
)

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

erf = _unary("erf", "ErfBackward0", lambda n, g: (g * _TWO_OVER_SQRT_PI * exp(-n.ctx[0] * n.ctx[0]),))


def _real_only(op: Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """Rounding ops refuse complex input with PyTorch's message."""

    def checked(input: Tensor) -> Tensor:
        if isinstance(input, Tensor) and input.dtype.is_complex:
            raise NotImplementedError(f"{op.__name__} is not supported for complex inputs")
        if isinstance(input, Tensor) and input.dtype is D.bool_:
            raise NotImplementedError(f"\"{op.__name__}_vml_cpu\" not implemented for 'Bool'")
        return op(input)

    checked.__name__ = checked.__qualname__ = op.__name__
    return checked


floor = _real_only(_unary("floor", "FloorBackward0", _zero_rule, int_identity=True, saves=""))

_neg = _unary("neg", "NegBackward0", lambda n, g: (-g,), float_only=False, saves="")


def neg(input: Tensor) -> Tensor:
    """``-input``; bool tensors refuse, as in PyTorch."""
    try:
        is_bool = input.dtype is D.bool_
    except AttributeError:
        raise must_be("neg", "input", "Tensor", input, 1) from None
    if is_bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return _neg(input)


def _abs_rule(n: Any, g: Tensor) -> tuple:
    x, _ = n.ctx
    if x.dtype.is_complex:
        from .select import where  # cycle: ember._ops.select

        # sgn(x) from x alone (|x| recomputed, 0 masked on both sides) so that create_graph
        # differentiates it again; |x| is cast to complex first, as a real denominator's
        # gradient would reach abs complex (binary rules keep the result's dtype; so is g)
        a = abs(x)
        zero = a == 0
        return (g.to(x.dtype) * where(zero, 0, x / where(zero, 1.0, a).to(x.dtype)),)
    return (g * sign(x),)


def abs(input: Tensor) -> Tensor:
    """``|input|``; complex inputs give their real dtype."""
    x = input
    try:
        is_bool = x.dtype is D.bool_
    except AttributeError:
        raise must_be("abs", "input", "Tensor", x, 1) from None
    if is_bool:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    out_dtype = D.to_real(x.dtype)
    out = wrap(call(x._be, "abs", x._data), x._be, x._device, out_dtype, x._shape)
    if _grad.enabled and x._requires_grad:
        record("AbsBackward0", _abs_rule, out, (x,), (), (x, None))
    return out


# -- composites: backend kernel if registered, else these decompositions -------------------
def _ceil(x: Tensor) -> Tensor:
    return -floor(-x)


def _trunc(x: Tensor) -> Tensor:
    from .select import where  # cycle: ember._ops.select

    return where(x < 0, ceil(x), floor(x))


def _round(x: Tensor) -> Tensor:
    from .select import where  # cycle: ember._ops.select

    r = floor(x + 0.5)
    tie = (r - x) == 0.5
    odd = (r - 2 * floor(r * 0.5)) == 1
    return where(tie & odd, r - 1, r)


def _sign(x: Tensor) -> Tensor:
    if x.dtype is D.bool_:
        return x.clone()
    return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)


def _sigmoid(x: Tensor) -> Tensor:
    return 1 / (1 + exp(-x))


ceil = _real_only(_unary("ceil", "CeilBackward0", _zero_rule, decompose=_ceil, int_identity=True, saves=""))

trunc = _real_only(
    _unary("trunc", "TruncBackward0", _zero_rule, decompose=_trunc, int_identity=True, saves="")
)

_round_op = _unary("round", "RoundBackward0", _zero_rule, decompose=_round, int_identity=True, saves="")

_sign_op = _unary("sign", "SignBackward0", _zero_rule, float_only=False, decompose=_sign, saves="")


def sign(input: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of each element; complex tensors refuse (``sgn`` takes them)."""
    if isinstance(input, Tensor) and input.dtype.is_complex:
        raise NotImplementedError(
            "Unlike NumPy, ember.sign is not intended to support complex numbers. Please use ember.sgn instead."
        )
    return _sign_op(input)


sigmoid = _unary(
    "sigmoid",
    "SigmoidBackward0",
    lambda n, g: (g * (n.ctx[1] * (1 - n.ctx[1])).conj_physical(),),
    decompose=_sigmoid,
    saves="out",
)


def _log1p(x: Tensor) -> Tensor:
    # log(1 + x) loses every digit of a tiny x; Goldberg's correction restores them.
    from .select import where  # cycle: ember._ops.select

    u = 1 + x
    exact = (u == 1) | (u == float("inf"))
    return where(exact, x, log(u) * (x / where(exact, 1.0, u - 1)))


def _expm1(x: Tensor) -> Tensor:
    # exp(x) - 1 cancels for tiny x; Kahan's correction (u - 1) * x / log(u) does not.
    from .select import where  # cycle: ember._ops.select

    u = exp(x)
    plain = (u == 1) | (u == float("inf")) | (u - 1 == -1)
    corrected = (u - 1) * (x / where(plain, 1.0, log(u)))
    return where(u == 1, x, where(plain, u - 1, corrected))


log1p = autocast_op("log1p")(
    _unary(
        "log1p",
        "Log1PBackward0",
        lambda n, g: (g / (n.ctx[0] + 1).conj_physical(),),
        decompose=lambda x: _log1p(x),
    )
)

expm1 = autocast_op("expm1")(
    _unary(
        "expm1",
        "Expm1Backward0",
        lambda n, g: (g * (n.ctx[1] + 1).conj_physical(),),
        decompose=lambda x: _expm1(x),
        saves="out",
    )
)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Round half to even; ``decimals`` scales by 10**decimals first."""
    if input.dtype.is_complex:
        raise NotImplementedError("\"round_vml_cpu\" not implemented for 'ComplexFloat'")
    if input.dtype is D.bool_:
        raise NotImplementedError("\"round_vml_cpu\" not implemented for 'Bool'")
    if decimals == 0:
        return _round_op(input)
    scale = 10.0**decimals
    return _round_op(input * scale) / scale


# -- defined in ember ops: their gradients come from the ops they use ----------------------
@autocast_op("reciprocal")
def reciprocal(input: Tensor) -> Tensor:
    from .pointwise_binary import div  # cycle: ember._ops.pointwise_binary

    return relabel(div(1, _floatify(input)), "ReciprocalBackward0")


@autocast_op("rsqrt")
def rsqrt(input: Tensor) -> Tensor:
    from .pointwise_binary import div  # cycle: ember._ops.pointwise_binary

    return relabel(div(1, sqrt(input)), "RsqrtBackward0")


def square(input: Tensor) -> Tensor:
    if input.dtype is D.bool_:  # PyTorch squares bools as int64 (True * True would stay bool)
        input = input.to(D.int64)
    return relabel(input * input, "PowBackward0")


def exp2(input: Tensor) -> Tensor:
    return exp(_floatify(input) * math.log(2.0))


@autocast_op("log2")
def log2(input: Tensor) -> Tensor:
    return log(input) / math.log(2.0)


@autocast_op("log10")
def log10(input: Tensor) -> Tensor:
    return log(input) / math.log(10.0)


@autocast_op("tan")
def tan(input: Tensor) -> Tensor:
    return sin(input) / cos(input)


def positive(input: Tensor) -> Tensor:
    if input.dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@decomposition("relu_backward")
def _relu_backward(g: Tensor, out: Tensor) -> Tensor:
    """``where(out <= 0, 0, g)`` as PyTorch's threshold_backward: 0 even for an inf/NaN ``g``,
    ``g`` where ``out`` is NaN."""
    from .select import where  # cycle: ember._ops.select imports pointwise_binary

    return where(out <= 0, 0.0, g)


def _relu_rule(n: Any, g: Tensor) -> tuple:
    """One ``relu_backward`` call (no float temporaries on the CPU) on plain backward; the recorded
    decomposition under create_graph, so it differentiates."""
    (out,) = n.ctx
    if g.dtype is not out.dtype:
        g = g.to(out.dtype)
    if _grad.enabled or not has_kernel(out._be, "relu_backward"):
        return (_relu_backward(g, out),)
    return (
        wrap(call(out._be, "relu_backward", g._data, out._data), out._be, out._device, out.dtype, out._shape),
    )


def relu(input: Tensor) -> Tensor:
    """max(input, 0), NaN staying NaN; one ``ReluBackward0`` node: ``relu_backward(grad, out)``.

    ``maximum`` rather than ``where``: NumPy's ``where`` branches per element (~10x slower).
    """
    from .pointwise_binary import maximum  # cycle: ember._ops.pointwise_binary

    if input.dtype is D.bool_:
        raise RuntimeError("\"clamp_min_cpu\" not implemented for 'Bool'")
    with NoRecord():
        out = maximum(input, 0)
    if _grad.enabled and input._requires_grad:
        record("ReluBackward0", _relu_rule, out, (input,), (), (out,))
    return out


def logical_not(input: Tensor) -> Tensor:
    return input == 0 if input.dtype is not D.bool_ else input ^ True


def bitwise_not(input: Tensor) -> Tensor:
    """``~input``: logical not for bool, two's complement for integers."""
    if input.dtype is D.bool_:
        return input ^ True
    if input.dtype.category != 1:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return input ^ -1 if input.dtype.is_signed else input ^ 255


def isnan(input: Tensor) -> Tensor:
    """True where ``input`` is NaN (NaN is the only value unequal to itself)."""
    return input.ne(input)


def isinf(input: Tensor) -> Tensor:
    if input.dtype.category < 2:
        return input.ne(input)
    return abs(input) == float("inf")


def isfinite(input: Tensor) -> Tensor:
    if input.dtype.category < 2:
        return input.eq(input)
    return input.eq(input) & (abs(input) != float("inf"))


fix = trunc
