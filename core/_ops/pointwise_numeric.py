"""Elementwise numerics: heaviside, gcd/lcm, angle units, frexp/ldexp/nextafter, one-sided
clamps, closeness tests (``isclose``, ``allclose``, ``equal``), ``nan_to_num``, ``isposinf``/
``isneginf``, ``frac``, ``sgn``, and top-level aliases of special functions (sinc, logit, i0)."""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from ember.backends import dtypes as D

from .._dtype import get_default_dtype, pt_name
from .._ops.shape import broadcast_tensors
from .._public import op, public
from .._tensor import Tensor
from ._args import must_be
from ._composite import NoRecord
from ._operands import promoted_pair as _pair
from .pointwise_special import _false
from .pointwise_unary import abs, floor, isnan, log2, sign, trunc
from .select import clamp, where

PUBLIC = public(
    __name__,
    {
        "allclose": op(method=True),
        "clamp_max": op(method=True, inplace=True),
        "clamp_min": op(method=True, inplace=True),
        "deg2rad": op(method=True, inplace=True),
        "equal": op(method=True),
        "frac": op(method=True, inplace=True),
        "frexp": op(method=True),
        "gcd": op(method=True, inplace=True),
        "heaviside": op(method=True, inplace=True),
        "i0": op(method=True, inplace=True),
        "isclose": op(method=True),
        "isneginf": op(method=True),
        "isposinf": op(method=True),
        "lcm": op(method=True, inplace=True),
        "ldexp": op(method=True, inplace=True),
        "logit": op(method=True, inplace=True),
        "nan_to_num": op(method=True, inplace=True),
        "nextafter": op(method=True, inplace=True),
        "rad2deg": op(method=True, inplace=True),
        "sgn": op(method=True, inplace=True),
        "sinc": op(method=True, inplace=True),
    },
)
__all__ = [*PUBLIC]


_frexp_t = namedtuple("frexp", ["mantissa", "exponent"])


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where ``input < 0``, ``values`` where ``input == 0``, 1 where ``input > 0``."""
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if input.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    out = where(input == 0, values, (input > 0).to(input.dtype))
    return out.to(input.dtype)


def _ints(name: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    x, y = _pair(a, b, floating=False)
    if x.dtype.category != 1 or x.dtype is D.bool_:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{pt_name(x.dtype)}'")
    return x, y


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """Greatest common divisor (non-negative), elementwise, by Euclid's algorithm."""
    a, b = _ints("gcd", input, other)

    a, b = (t.clone() for t in broadcast_tensors(abs(a), abs(b)))
    while bool((b != 0).any().item()):
        nz = b != 0
        r = where(nz, a % where(nz, b, 1), 0)
        a, b = where(nz, b, a), r
    return a


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """Least common multiple (non-negative; 0 if either is 0)."""
    a, b = _ints("lcm", input, other)
    g = gcd(a, b)
    return abs(where(g == 0, 0, a // where(g == 0, 1, g) * b))


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians."""
    return _float(input) * (math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees."""
    return _float(input) * (180.0 / math.pi)


def _float(x: Tensor) -> Tensor:
    return x.to(get_default_dtype()) if x.dtype.category < 2 else x


def frexp(input: Tensor) -> Any:
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent`` and ``0.5 <= |mantissa| < 1``."""
    if input.dtype.category < 2:
        raise RuntimeError("ember.frexp() only supports floating-point dtypes")
    x = input
    a = abs(x)
    finite = (a != float("inf")) & ~isnan(x) & (a != 0)
    safe = where(finite, a, 1.0)
    e = floor(log2(safe)) + 1
    m = x / (2.0**e)
    # log2 may be off by one next to powers of two: renormalise.
    e = where(abs(m) >= 1, e + 1, where(abs(m) < 0.5, e - 1, e))
    m = x / (2.0**e)
    return _frexp_t(where(finite, m, x), where(finite, e, 0.0).to(D.int32))


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2**other``."""
    return _float(input) * (2.0 ** _float(other) if isinstance(other, Tensor) else 2.0**other)


# (mantissa bits incl. the implicit one, frexp exponent of the smallest normal, largest value)
_FLOAT_LAYOUT = {
    "float64": (53, -1021, 1.7976931348623157e308),
    "float32": (24, -125, 3.4028234663852886e38),
    "float16": (11, -13, 65504.0),
    "bfloat16": (8, -125, 3.3895313892515355e38),
}


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next representable float after ``input`` toward ``other``.

    Spacing from ``frexp``: ``2**(e - p)`` (halved when stepping toward zero from a power of
    two; fixed below the smallest normal), so every backend computes it with ember ops.
    """
    if input.dtype.category < 2 or input.dtype.is_complex or input.dtype is not other.dtype:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{input.dtype.name}'")
    p, emin, big = _FLOAT_LAYOUT[input.dtype.name]
    x, y = input, other
    m, e = frexp(x)
    e = e.to(x.dtype)
    up = y > x
    away = up == (x > 0)  # stepping away from zero
    pow2 = abs(m) == 0.5
    shift = where(away | ~pow2 | (e <= emin), 0.0, 1.0)
    ulp = 2.0 ** (where(e < emin, float(emin), e) - p - shift)
    tiny = 2.0 ** float(emin - p)
    step = where(x == 0, tiny, ulp).to(x.dtype)
    out = where(up, x + step, x - step)
    out = where(abs(x) == float("inf"), sign(x) * big, out)
    out = where(isnan(x) | isnan(y), x + y, out)
    return where(x == y, y, out).to(x.dtype)


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """``clamp(input, min=min)``."""
    return clamp(input, min=min)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """``clamp(input, max=max)``."""
    return clamp(input, max=max)


def sinc(input: Tensor) -> Tensor:
    """``sin(pi x) / (pi x)``."""
    from ..special import sinc as _sinc  # cycle: ember.special

    return _sinc(input)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``."""
    from ..special import logit as _logit  # cycle: ember.special

    return _logit(input, eps)


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0."""
    from ..special import i0 as _i0  # cycle: ember.special

    return _i0(input)


def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """``|input - other| <= atol + rtol * |other|`` elementwise (infinities equal themselves)."""
    if isinstance(other, Tensor) and input.dtype is not other.dtype:
        raise RuntimeError(f"{pt_name(input.dtype)} did not match {pt_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    with NoRecord():
        eq = input == other
        if input.dtype is D.bool_ or (input.dtype.category == 1 and rtol == 0 and atol == 0):
            return eq
        a, b = _pair(input, other)
        close = eq | (abs(a - b) <= atol + rtol * abs(b))
        close = close & (abs(a - b) != float("inf")) | eq
        if equal_nan:
            close = close | (isnan(a) & isnan(b))
        return close


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """True when every element pair is ``isclose``."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape and elements."""
    if input._shape != other._shape:
        return False
    with NoRecord():
        return bool((input == other).all().item())


def frac(input: Tensor) -> Tensor:
    """``input - trunc(input)``."""
    if input.dtype.category < 2:
        raise NotImplementedError('"frac_cpu" not implemented for integer types')
    return input - trunc(input)


_FMAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}


def _finfo_max(dt: Any) -> float:
    return _FMAX.get(dt.name, 1.7976931348623157e308)


def nan_to_num(
    input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    """Replace NaN by ``nan`` and infinities by ``posinf``/``neginf`` (the dtype's extremes by default)."""
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise must_be("nan_to_num", name, "float", v)
    if input.dtype.category < 2:
        return input.clone()
    big = _finfo_max(D.to_real(input.dtype))
    hi = big if posinf is None else posinf
    lo = -big if neginf is None else neginf
    x = input
    out = where(isnan(x), nan, x)
    out = where(x == float("inf"), hi, out)
    return where(x == float("-inf"), lo, out).to(input.dtype)


def isposinf(input: Tensor) -> Tensor:
    """True where ``input`` is +inf."""
    if input.dtype.is_complex:
        raise RuntimeError("isposinf does not support complex inputs.")
    return input == float("inf") if input.dtype.category >= 2 else _false(input)


def isneginf(input: Tensor) -> Tensor:
    """True where ``input`` is -inf."""
    if input.dtype.is_complex:
        raise RuntimeError("isneginf does not support complex inputs.")
    return input == float("-inf") if input.dtype.category >= 2 else _false(input)


def sgn(input: Tensor) -> Tensor:
    """``sign`` for real tensors; ``x / |x|`` (0 at 0) for complex ones."""
    if not input.dtype.is_complex:
        return sign(input)
    a = abs(input)
    return where(a == 0, 0, input / where(a == 0, 1.0, a).to(input.dtype))
