"""Decompositions of the inverse trigonometric functions and the complex parts into primitives.

Half and single precision are computed in float64 where the device has it (``run_composite``
casts the result back).
"""

from __future__ import annotations

import math

from ember.backends import dtypes as D

from ._ops._composite import decomposition
from ._ops.pointwise_special import copysign
from ._ops.pointwise_unary import abs, isnan, log, sqrt
from ._ops.select import where
from ._tensor import Tensor

__all__ = ["atan", "work_dtype"]

# atan(v) = sum (-1)^k v^(2k+1) / (2k+1) for |v| <= tan(pi/16): 13 terms reach 2**-60.
_ATAN_TERMS = 13
_TAN_PI_8 = math.tan(math.pi / 8)


def work_dtype(x: Tensor) -> Tensor:
    """``x`` in the dtype to compute a series in: float64 where the device has it (a float32
    result then rounds once, as a libm's does), else at least float32."""
    if x.dtype not in (D.float16, D.bfloat16, D.float32):
        return x
    wide = D.float64 if D.float64 in x._be.backend.dtypes else D.float32
    return x if x.dtype is wide else x.to(wide)


def _atan_small(v: Tensor) -> Tensor:
    v2 = v * v
    acc = v2 * 0 + (-1) ** (_ATAN_TERMS - 1) / (2 * _ATAN_TERMS - 1)
    for k in range(_ATAN_TERMS - 2, -1, -1):
        acc = acc * v2 + (-1) ** k / (2 * k + 1)
    return acc * v


def _atan_real(x: Tensor) -> Tensor:
    """Reduce |x| to [0, 1] (1/x), then to |u| <= tan(pi/8) (shift by pi/4), then halve the angle."""
    a = abs(x)
    big = a > 1
    t = where(big, 1 / where(big, a, 1.0), a)
    mid = t > _TAN_PI_8
    u = where(mid, (t - 1) / (t + 1), t)
    v = u / (1 + sqrt(1 + u * u))
    r = 2 * _atan_small(v) + where(mid, u * 0 + math.pi / 4, 0.0)  # a tensor branch keeps x's dtype
    r = where(big, math.pi / 2 - r, r)
    return copysign(r, x)


def _complex_log_form(z: Tensor, name: str) -> Tensor:
    """The principal branches through log and sqrt of complex arguments."""
    i = 1j
    if name == "atan":
        return 0.5 * i * (log(1 - i * z) - log(1 + i * z))
    asin = -i * log(i * z + sqrt(1 - z * z))
    return asin if name == "asin" else math.pi / 2 - asin


@decomposition("atan", keeps_dtype=True)
def atan(x: Tensor) -> Tensor:
    if x.dtype.is_complex:
        return _complex_log_form(x, "atan")
    return _atan_real(work_dtype(x))


@decomposition("asin", keeps_dtype=True)
def asin(x: Tensor) -> Tensor:
    if x.dtype.is_complex:
        return _complex_log_form(x, "asin")
    x = work_dtype(x)
    # atan2(x, sqrt(1 - x^2)) with 1 - x^2 formed as (1 - x)(1 + x): exact near |x| = 1.
    return _atan2_real(x, sqrt((1 - x) * (1 + x)))


@decomposition("acos", keeps_dtype=True)
def acos(x: Tensor) -> Tensor:
    if x.dtype.is_complex:
        return _complex_log_form(x, "acos")
    x = work_dtype(x)
    return 2 * _atan2_real(sqrt(1 - x), sqrt(1 + x))


def _atan2_real(y: Tensor, x: Tensor) -> Tensor:
    """The angle of (x, y) in (-pi, pi], with C's rules for zeros and infinities."""
    ay, ax = abs(y), abs(x)
    both_inf = (ay == math.inf) & (ax == math.inf)
    # atan of the smaller over the larger stays in [0, pi/4] and never overflows.
    swap = ay > ax
    num, den = where(swap, ax, ay), where(swap, ay, ax)
    ratio = where(den == 0, 0.0, num / where(den == 0, 1.0, den))
    base = _atan_real(ratio)
    base = where(swap, math.pi / 2 - base, base)
    base = where(both_inf, math.pi / 4, base)
    neg_x = (x < 0) | ((x == 0) & (copysign(x * 0 + 1, x) < 0))
    base = where(neg_x, math.pi - base, base)
    nan = isnan(y) | isnan(x)
    return where(nan, y + x, copysign(base, y))


@decomposition("atan2", keeps_dtype=True)
def atan2(y: Tensor, x: Tensor) -> Tensor:
    return _atan2_real(work_dtype(y), work_dtype(x))


@decomposition("real")
def real(z: Tensor) -> Tensor:
    return z.to(D.to_real(z.dtype))


@decomposition("imag")
def imag(z: Tensor) -> Tensor:
    return (z * -1j).to(D.to_real(z.dtype))


@decomposition("complex")
def complex(re: Tensor, im: Tensor) -> Tensor:
    ct = D.to_complex(re.dtype)
    return re.to(ct) + im.to(ct) * 1j
