"""In-place random fills: ``x.uniform_()``, ``x.normal_()``, ``x.random_(10)``, ...

Samples come from ember's Philox streams (``_random``), written in ember ops so every backend
draws them on its own device; for float32 and float64 ``manual_seed(s); x.uniform_()`` equals
``manual_seed(s); ember.rand(x.shape, dtype=x.dtype)`` and ``normal_`` equals ``randn`` (half
types draw only their mantissa's bits, as PyTorch, so that no sample rounds up to ``to``).
The values are ember's own; parameter checks, dtypes and messages are PyTorch's. On a
non-leaf that requires grad the fill records a node (``UniformBackward0``, ...) whose
gradient is zero, as PyTorch.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ember.backends import DType
from ember.backends import dtypes as D

from ._creation import zeros_like
from ._dtype import c_name, pt_name
from ._ops import views_inplace
from ._ops._composite import NoRecord
from ._ops.complex import complex as _complex
from ._ops.convert import _write, check_inplace
from ._ops.inplace import rebase_view
from ._ops.select import where
from ._random import Generator, _normal01, _uniform01, random_words
from ._tensor import Tensor
from .autograd.grad_mode import state as _grad
from .autograd.graph import record

__all__ = [
    "RANDOM_INPLACE_METHODS",
    "bernoulli_",
    "bind",
    "cauchy_",
    "exponential_",
    "geometric_",
    "log_normal_",
    "normal_",
    "random_",
    "uniform_",
]

_FLOAT_MAX = {D.float16: 65504.0, D.bfloat16: 3.3895313892515355e38, D.float32: 3.4028234663852886e38}
_DIGITS = {D.float16: 11, D.bfloat16: 8, D.float32: 24, D.float64: 53}
_INT_RANGE = {
    D.bool_: (0, 1),
    D.uint8: (0, 255),
    D.int8: (-128, 127),
    D.int16: (-(1 << 15), (1 << 15) - 1),
    D.int32: (-(1 << 31), (1 << 31) - 1),
    D.int64: (-(1 << 63), (1 << 63) - 1),
}


def _g(x: float) -> str:
    """A number as C++'s ``operator<<`` prints it in PyTorch's messages."""
    return f"{x:g}"


def _not_impl(kernel: str, dt: DType) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}\" not implemented for '{pt_name(dt)}'")


def _zero_rule(n: Any, g: Tensor) -> tuple:
    return tuple(zeros_like(g) if need else None for need in n.needs_input_grad)


def _fill(t: Tensor, value: Tensor, node: str, extra: tuple = ()) -> Tensor:
    """Write ``value`` into ``t``; on a graph, ``t``'s history becomes a zero-gradient ``node``."""
    with NoRecord():
        _write(t, value.detach())
    if _grad.enabled and (t.requires_grad or any(e.requires_grad for e in extra)):
        record(node, _zero_rule, t, (t, *extra), (), None)
        rebase_view(t)
    return t


def _work(dt: DType) -> DType:
    """The float dtype samples are computed in: float64 for double, else float32."""
    return D.float64 if dt is D.float64 or dt is D.complex128 else D.float32


def _parse(name: str, args: tuple, kwargs: dict, params: tuple[tuple[str, Any], ...]) -> list[Any]:
    """PyTorch's positional-or-keyword parameters (``from`` is a Python keyword)."""
    if len(args) > len(params):
        raise TypeError(
            f"{name}() takes from 0 to {len(params)} positional arguments but {len(args)} were given"
        )
    out = list(args) + [d for _, d in params[len(args) :]]
    names = [p for p, _ in params]
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        i = names.index(k)
        if i < len(args):
            raise TypeError(f"{name}() got multiple values for argument '{k}'")
        out[i] = v
    return out


def _float_arg(name: str, arg: str, v: Any, pos: int) -> float:
    if isinstance(v, Tensor) and v.numel() == 1:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be float, not {type(v).__name__}")
    return float(v)


def _complex_pair(t: Tensor, draw: Any) -> Tensor:
    """A complex fill: real and imaginary parts drawn independently (PyTorch's view_as_real)."""
    real = _work(t.dtype)
    n = t.numel()
    both = draw(2 * n, real)
    return _complex(both[:n], both[n:]).reshape(t._shape)


def uniform_(self: Tensor, *args: Any, generator: Generator | None = None, **kwargs: Any) -> Tensor:
    """Fill with samples uniform in ``[from, to)``: ``x.uniform_(-1, 1)``."""
    lo, hi = _parse("uniform_", args, kwargs, (("from", 0.0), ("to", 1.0)))
    lo, hi = _float_arg("uniform_", "from", lo, 1), _float_arg("uniform_", "to", hi, 2)
    dt = self.dtype
    if dt.category < 2:
        raise _not_impl("check_uniform_bounds", dt)
    check_inplace(self)
    real = D.to_real(dt) if dt.is_complex else dt
    top = _FLOAT_MAX.get(real, 1.7976931348623157e308)
    if not (-top <= lo <= top):
        raise RuntimeError(f"from is out of bounds for {c_name(real)}")
    if not (-top <= hi <= top):
        raise RuntimeError(f"to is out of bounds for {c_name(real)}")
    if lo > hi:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={_g(lo)} > to={_g(hi)}"
        )
    if hi - lo > top:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{pt_name(real)}>::max(), but found "
            f"to={_g(hi)} and from={_g(lo)} which result in to-from to exceed the limit"
        )

    def draw(n: int, work: DType) -> Tensor:
        return _uniform01(n, work, self._device, generator) * (hi - lo) + lo

    if dt.is_complex:
        return _fill(self, _complex_pair(self, draw), "UniformBackward0")
    n = self.numel()
    if dt in (D.float16, D.bfloat16):
        # As many bits as the dtype's mantissa, so no draw rounds up to ``to`` (24 bits would).
        digits = _DIGITS[dt]
        w = random_words(n, self._device, generator)
        u = (w // (1 << (32 - digits))).to(D.float32) * (2.0**-digits)
        return _fill(self, (u * (hi - lo) + lo).reshape(self._shape), "UniformBackward0")
    u = _uniform01(n, dt, self._device, generator)  # rand's stream and conversion
    return _fill(self, (u * (hi - lo) + lo).reshape(self._shape), "UniformBackward0")


def normal_(self: Tensor, mean: Any = 0.0, std: Any = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fill with normal samples: ``x.normal_(0, 0.02)``."""
    mean, std = _float_arg("normal_", "mean", mean, 1), _float_arg("normal_", "std", std, 2)
    dt = self.dtype
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    if dt.category < 2:
        raise _not_impl("normal_kernel_cpu", dt)
    check_inplace(self)
    if dt.is_complex:
        s = std / math.sqrt(2.0)  # PyTorch splits the variance between the two parts

        def draw(n: int, work: DType) -> Tensor:
            return _normal01(n, work, self._device, generator) * s + mean

        return _fill(self, _complex_pair(self, draw), "NormalBackward0")
    z = _normal01(self.numel(), dt, self._device, generator)  # randn's stream
    return _fill(self, (z * std + mean).reshape(self._shape), "NormalBackward0")


def _continuous_only(dist: str, dt: DType) -> None:
    if not dt.is_floating_point:
        name = c_name(dt) if dist == "Cauchy" else pt_name(dt)
        raise RuntimeError(
            f"{dist} distribution is a continuous probability distribution. dtype must be a floating "
            f"point but you specified {name}"
        )


def _open01(self: Tensor, generator: Generator | None) -> Tensor:
    """Uniform samples in ``(0, 1]`` (``1 - rand``), so their logarithm is finite."""
    return 1.0 - _uniform01(self.numel(), _work(self.dtype), self._device, generator)


def exponential_(self: Tensor, lambd: Any = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fill with exponential samples of rate ``lambd`` (inverse CDF)."""
    lam = _float_arg("exponential_", "lambd", lambd, 1)
    if not lam > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_g(lam)}")
    _continuous_only("Exponential", self.dtype)
    check_inplace(self)
    x = (0.0 - _open01(self, generator).log()) / lam  # 0 - log(1) is +0, never -0
    return _fill(self, x.reshape(self._shape), "ExponentialBackward0")


def geometric_(self: Tensor, p: Any, *, generator: Generator | None = None) -> Tensor:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (>= 1)."""
    p = _float_arg("geometric_", "p", p, 1)
    dt = self.dtype
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_g(p)}")
    if dt is D.bool_ or dt.is_complex:
        raise _not_impl("geometric_cpu", dt)
    check_inplace(self)
    k = (_open01(self, generator).log() / math.log1p(-p)).floor() + 1.0
    return _fill(self, k.reshape(self._shape), "GeometricBackward0")


def cauchy_(
    self: Tensor, median: Any = 0.0, sigma: Any = 1.0, *, generator: Generator | None = None
) -> Tensor:
    """Fill with Cauchy samples: ``median + sigma * tan(pi * (u - 1/2))``."""
    median = _float_arg("cauchy_", "median", median, 1)
    sigma = _float_arg("cauchy_", "sigma", sigma, 2)
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}")
    _continuous_only("Cauchy", self.dtype)
    check_inplace(self)
    u = _uniform01(self.numel(), _work(self.dtype), self._device, generator)
    x = ((u - 0.5) * math.pi).tan() * sigma + median
    return _fill(self, x.reshape(self._shape), "CauchyBackward0")


def log_normal_(
    self: Tensor, mean: Any = 1.0, std: Any = 2.0, *, generator: Generator | None = None
) -> Tensor:
    """Fill with ``exp`` of normal samples of ``mean`` and ``std``."""
    mean, std = _float_arg("log_normal_", "mean", mean, 1), _float_arg("log_normal_", "std", std, 2)
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_g(std)}")
    if not self.dtype.is_floating_point:
        raise _not_impl("log_normal_cpu", self.dtype)
    check_inplace(self)
    z = _normal01(self.numel(), _work(self.dtype), self._device, generator)
    return _fill(self, (z * std + mean).exp().reshape(self._shape), "LogNormalBackward0")


_P_RANGE = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
    "improved?  If so, please report an enhancement request to PyTorch.)"
)


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill with 1 where a uniform draw falls below ``p`` (a number or a broadcast tensor)."""
    dt = self.dtype
    if isinstance(p, Tensor):
        if not p.dtype.is_floating_point:
            raise _not_impl("bernoulli_tensor_cpu_p_", p.dtype)
        if dt.is_complex:
            raise _not_impl("bernoulli_tensor_cpu_self_", dt)
        check_inplace(self)
        pe = p.detach().expand(self._shape)
        if pe.numel() and not bool(((pe >= 0) & (pe <= 1)).all()):
            raise RuntimeError(_P_RANGE)
        work = D.float64 if D.float64 in (dt, p.dtype) else D.float32
        u = _uniform01(self.numel(), work, self._device, generator).reshape(self._shape)
        return _fill(self, u < pe.to(work), "BernoulliBackward1", (p,) if p.requires_grad else ())
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(
            f"bernoulli_() received an invalid combination of arguments - got ({type(p).__name__}), but "
            "expected one of:\n * (Tensor p, *, torch.Generator generator = None)\n"
            " * (float p = 0.5, *, torch.Generator generator = None)\n"
        )
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_g(p)}")
    if dt.is_complex:
        raise _not_impl("bernoulli_scalar_cpu_", dt)
    check_inplace(self)
    u = _uniform01(self.numel(), _work(dt), self._device, generator).reshape(self._shape)
    return _fill(self, u < float(p), "BernoulliBackward2")


def _random_bounds(dt: DType, lo: int, hi: int | None) -> tuple[int, int]:
    """``[lo, top]`` (inclusive) for ``random_(from, to)``, with PyTorch's checks."""
    if dt.is_complex:
        fn = "check_random_bounds" if hi is not None else "random_from_to_impl"
        raise RuntimeError(f"{fn} handles only integral, floating-point and boolean types")
    if dt.is_floating_point:
        digits = _DIGITS[dt]
        top = (1 << digits) if hi is None else hi - 1
        for what, v in (("from", lo), ("to - 1", top)):
            if not -(1 << digits) <= v <= 1 << digits:
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                    f"{c_name(dt)} can support discrete uniform "
                    "distribution only within this range. This warning will become an error in version "
                    "1.7 release, please fix the code in advance",
                    UserWarning,
                    stacklevel=3,
                )
        return lo, top
    imin, imax = _INT_RANGE[dt]
    top = imax if hi is None else hi - 1
    if not imin <= lo <= imax:
        raise RuntimeError(f"from is out of bounds for {c_name(dt)}")
    if not imin <= top <= imax:
        raise RuntimeError(f"to - 1 is out of bounds for {c_name(dt)}")
    return lo, top


def _int_arg(v: Any) -> int:
    if isinstance(v, Tensor) and v.numel() == 1:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"random_(): argument 'from' must be int, not {type(v).__name__}")
    if not -(1 << 63) <= v < 1 << 63:
        raise ValueError("Overflow when unpacking long long")
    return int(v)


def _wide(r: Tensor, high: Tensor, lo: int, span: int) -> Tensor:
    """``lo + (u mod span)`` for the 64-bit ``u = high * 2**63 + r`` and ``2**63 < span <= 2**64``,
    without leaving int64 (``lo < 0`` here, so ``lo + 2**63`` fits)."""
    if span == 1 << 64:
        return r + where(high, 0, -(1 << 63))
    d = span - (1 << 63)  # u < span  <=>  r < d, for the upper half
    upper = where(r < d, r + (lo + (1 << 63)), r - d + lo)
    return where(high, upper, r + lo)


def random_(self: Tensor, *args: Any, generator: Generator | None = None, **kwargs: Any) -> Tensor:
    """Fill with integers uniform in ``[from, to)``; ``random_()`` spans the dtype."""
    if len(args) == 1 and not kwargs:
        lo, hi = 0, args[0]
    else:
        lo, hi = _parse("random_", args, kwargs, (("from", 0), ("to", None)))
    lo = _int_arg(lo)
    hi = None if hi is None else _int_arg(hi)
    dt = self.dtype
    if not args and not kwargs:
        if dt.is_complex:
            raise _not_impl("random_kernel_cpu", dt)
        lo, top = 0, (1 << _DIGITS[dt]) if dt.is_floating_point else _INT_RANGE[dt][1]
    else:
        if hi is not None and lo >= hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
        lo, top = _random_bounds(dt, lo, hi)
    check_inplace(self)
    n = self.numel()
    span = top - lo + 1
    if span <= 1 << 32:
        w = random_words(n, self._device, generator)
        r = w if span == 1 << 32 else w % span
    else:
        pair = random_words(2 * n, self._device, generator).reshape(n, 2)
        r = pair[:, 0] * 2147483648 + pair[:, 1] // 2  # 63 random bits
        if span < 1 << 63:
            r = r % span
        elif span > 1 << 63:  # int64 only: the low word's last bit is the 64th bit
            r, lo = _wide(r, pair[:, 1] % 2 == 1, lo, span), 0
    out = (r + lo).reshape(self._shape)
    return _fill(self, out.to(dt), "RandomBackward2" if not args and not kwargs else "RandomBackward1")


RANDOM_INPLACE_METHODS: dict[str, Any] = {
    "bernoulli_": bernoulli_,
    "uniform_": uniform_,
    "normal_": normal_,
    "exponential_": exponential_,
    "geometric_": geometric_,
    "cauchy_": cauchy_,
    "log_normal_": log_normal_,
    "random_": random_,
}


def bind(cls: type) -> None:
    """Attach the methods above, and the in-place view ops', to ``cls`` (the Tensor class)."""
    for name, fn in RANDOM_INPLACE_METHODS.items():
        setattr(cls, name, fn)
    views_inplace.bind(cls)
