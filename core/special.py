"""``ember.special``: PyTorch's ``torch.special`` (SciPy kernels on the CPU backend for the
functions without a decomposition; derivatives where PyTorch has them)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ember.backends import dtypes as D

from ._ops._common import broadcast_shape
from ._ops._composite import NoRecord, run_composite
from ._ops.pointwise_special import (
    _float,
    _pair,
    composite_unary,
    digamma,
    erfc,
    erfinv,
    lgamma,
    polygamma,
    xlogy,
)
from ._ops.pointwise_unary import erf, exp, exp2, expm1, isnan, log, log1p, round, sigmoid, sign, sin
from ._ops.reduction import logsumexp
from ._ops.select import where
from ._public import op, public
from ._tensor import Tensor
from .autograd.grad_mode import state as _grad
from .autograd.graph import record

if TYPE_CHECKING:
    from ._special_bessel import (
        airy_ai,
        bessel_y0,
        bessel_y1,
        modified_bessel_k0,
        modified_bessel_k1,
        scaled_modified_bessel_k0,
        scaled_modified_bessel_k1,
    )

PUBLIC = public(
    __name__,
    {
        "gammainc": op("igamma", function=False),
        "gammaincc": op("igammac", function=False),
        "multigammaln": op("mvlgamma", function=False),
    },
)
__all__ = [
    *PUBLIC,
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammaln",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
    "zeta",
]

# Defined in ``_special_bessel`` (series and rational fits), imported on first use.
_BESSEL = frozenset(
    (
        "airy_ai",
        "bessel_y0",
        "bessel_y1",
        "modified_bessel_k0",
        "modified_bessel_k1",
        "scaled_modified_bessel_k0",
        "scaled_modified_bessel_k1",
    )
)


def __getattr__(name: str) -> object:
    if name in _BESSEL:
        from . import _special_bessel

        value = getattr(_special_bessel, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT_HALF = math.sqrt(0.5)

gammaln = lgamma
psi = digamma
expit = sigmoid


def _i1_over_x(x: Tensor, out: Tensor) -> Tensor:
    """i1(x) / x, with its limit 1/2 at 0."""
    return where(x == 0, 0.5, out / where(x == 0, 1.0, x))


erfcx = composite_unary("erfcx", "SpecialErfcxBackward0", lambda x, o, g: g * (2 * x * o - 2 / _SQRT_PI))
ndtri = composite_unary("ndtri", "SpecialNdtriBackward0", lambda x, o, g: g * _SQRT_2PI * exp(o * o * 0.5))
log_ndtr = composite_unary(
    "log_ndtr", "SpecialLogNdtrBackward0", lambda x, o, g: g * exp(-x * x * 0.5 - o) / _SQRT_2PI
)
i0 = composite_unary("i0", "I0Backward0", lambda x, o, g: g * i1(x))
i0e = composite_unary("i0e", "SpecialI0EBackward0", lambda x, o, g: g * (i1e(x) - sign(x) * o))
i1: Callable[..., Tensor] = composite_unary(
    "i1", "SpecialI1Backward0", lambda x, o, g: g * (i0(x) - _i1_over_x(x, o))
)
i1e: Callable[..., Tensor] = composite_unary(
    "i1e", "SpecialI1EBackward0", lambda x, o, g: g * (i0e(x) - sign(x) * o - _i1_over_x(x, o))
)


def _no_derivative(op: Any, doc: str) -> Any:
    """PyTorch marks these outputs non-differentiable: no grad_fn, even for an input that requires grad."""

    def f(input: Tensor) -> Tensor:
        with NoRecord():
            return op(input)

    f.__name__, f.__doc__ = op.__name__, doc
    return f


bessel_j0 = _no_derivative(
    composite_unary("bessel_j0", None, None), "The Bessel function of the first kind J0."
)
bessel_j1 = _no_derivative(
    composite_unary("bessel_j1", None, None), "The Bessel function of the first kind J1."
)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF, ``0.5 * erfc(-x / sqrt(2))``."""
    return 0.5 * erfc(-_float(input) * _SQRT_HALF)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    x = _float(input)
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return log(x / (1 - x))


def xlog1py(input: Any, other: Any) -> Tensor:
    """``input * log1p(other)``, and 0 where ``input == 0`` (unless ``other`` is NaN)."""
    x, y = _pair(input, other)
    return where((x == 0) & ~isnan(y), 0.0, x * log1p(y))


def sinc(input: Tensor) -> Tensor:
    """The normalised sinc, ``sin(pi x) / (pi x)`` (1 at 0)."""
    x = _float(input)
    zero = x == 0
    px = where(zero, 1.0, x) * math.pi
    return where(zero, 1.0, sin(px) / px)


def entr(input: Tensor) -> Tensor:
    """``-x log x`` for x > 0, 0 at 0 and -inf for x < 0."""
    x = _float(input)
    pos = x > 0
    val = -x * log(where(pos, x, 1.0))
    return where(pos, val, where(x == 0, 0.0, where(isnan(x), x, float("-inf"))))


def multigammaln(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p``."""
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1, but got {p}")
    x = _float(input)
    out = lgamma(x) + p * (p - 1) / 4 * math.log(math.pi)
    for j in range(1, p):
        out = out + lgamma(x - j / 2)
    return out


def _zeta_rule(n: Any, g: Tensor) -> tuple:
    x, q = n.ctx
    return (None, g * -x * zeta(x + 1, q))


def zeta(input: Any, other: Any) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other) ** -input`` (differentiable in ``other``)."""
    x, q = _pair(input, other)
    shape = broadcast_shape(x._shape, q._shape)
    xe, qe = x.expand(shape), q.expand(shape)
    out = run_composite("zeta", (xe.contiguous(), qe.contiguous()), (), x.dtype)
    if _grad.enabled and q.requires_grad:
        record("SpecialZetaBackward0", _zeta_rule, out, (xe, qe), (), (xe, qe))
    return out


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x), dim)``."""
    from .nn.functional import softmax as _softmax

    return _softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``x - logsumexp(x, dim)``."""
    from .nn.functional import log_softmax as _log_softmax

    return _log_softmax(input, dim, dtype=dtype)


modified_bessel_i0 = i0
modified_bessel_i1 = i1


def spherical_bessel_j0(input: Tensor) -> Tensor:
    """``sin(x) / x`` (1 at 0)."""
    x = _float(input)
    zero = x == 0
    safe = where(zero, 1.0, x)
    return where(zero, 1.0, sin(safe) / safe)


# Orthogonal polynomials by their three-term recurrences: (p0, p1(x), step(k, x, p_k, p_{k-1})).
def _recurrence(p1: Any, step: Any) -> Any:
    def poly(input: Any, n: Any) -> Tensor:
        from ._creation import tensor

        like = input if isinstance(input, Tensor) else n
        x = _float(input if isinstance(input, Tensor) else tensor(input, device=like._device))
        nt = n if isinstance(n, Tensor) else tensor(n, device=x._device)
        nt = nt.to(x.dtype) if nt.dtype.category >= 2 else nt
        top = int(nt.amax().item()) if nt.numel() else 0
        prev, cur = x * 0 + 1, p1(x)
        out = where(nt == 0, prev, where(nt == 1, cur, 0.0))
        for k in range(1, top):
            prev, cur = cur, step(k, x, cur, prev)
            out = where(nt == k + 1, cur, out)
        return where(nt < 0, 0.0, out).to(x.dtype)

    return poly


chebyshev_polynomial_t = _recurrence(lambda x: x, lambda k, x, p, q: 2 * x * p - q)
chebyshev_polynomial_u = _recurrence(lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - q)
chebyshev_polynomial_v = _recurrence(lambda x: 2 * x - 1, lambda k, x, p, q: 2 * x * p - q)
chebyshev_polynomial_w = _recurrence(lambda x: 2 * x + 1, lambda k, x, p, q: 2 * x * p - q)
hermite_polynomial_h = _recurrence(lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - 2 * k * q)
hermite_polynomial_he = _recurrence(lambda x: x, lambda k, x, p, q: x * p - k * q)
laguerre_polynomial_l = _recurrence(
    lambda x: 1 - x, lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1)
)
legendre_polynomial_p = _recurrence(lambda x: x, lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1))


def _shifted(poly: Any) -> Any:
    def shifted(input: Any, n: Any) -> Tensor:
        x = _float(input) if isinstance(input, Tensor) else input
        return poly(2 * x - 1, n)

    return shifted


shifted_chebyshev_polynomial_t = _shifted(chebyshev_polynomial_t)
shifted_chebyshev_polynomial_u = _shifted(chebyshev_polynomial_u)
shifted_chebyshev_polynomial_v = _shifted(chebyshev_polynomial_v)
shifted_chebyshev_polynomial_w = _shifted(chebyshev_polynomial_w)


def _gamma_series(a: Tensor, x: Tensor) -> Tensor:
    """sum_n x^n / (a (a+1) ... (a+n)): P's series, for x < a + 1."""
    term = 1 / a
    total = term
    ap = a
    for i in range(2000):
        ap = ap + 1
        term = term * x / ap
        total = total + term
        if i % 16 == 15 and bool((term.abs() <= total.abs() * 1e-17).all().item()):
            break
    return total


def _gamma_fraction(a: Tensor, x: Tensor) -> Tensor:
    """Q's continued fraction (modified Lentz), for x >= a + 1."""
    tiny = 1e-300 if a.dtype.name == "float64" else 1e-30
    b = x + 1 - a
    c = b * 0 + 1 / tiny
    d = 1 / where(b.abs() < tiny, tiny, b)
    h = d
    for i in range(1, 2000):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / where(d.abs() < tiny, tiny, d)
        c = b + an / c
        c = where(c.abs() < tiny, tiny, c)
        step = d * c
        h = h * step
        if i % 16 == 0 and bool(((step - 1).abs() <= 1e-16).all().item()):
            break
    return h


def _gammainc_pair(a: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    """(P(a, x), Q(a, x)) by series or continued fraction, elementwise."""
    from ._ops._composite import NoRecord

    with NoRecord():
        ok = (a > 0) & (x > 0)
        sa, sx = where(ok, a, 1.0), where(ok, x, 1.0)
        front = exp(-sx + sa * log(sx) - lgamma(sa))
        use_series = sx < sa + 1
        p_series = front * _gamma_series(sa, where(use_series, sx, 0.5 * sa))
        q_frac = front * _gamma_fraction(sa, where(use_series, sa + 1, sx))
        P = where(use_series, p_series, 1 - q_frac)
        Q = where(use_series, 1 - p_series, q_frac)
        P = where(x == 0, 0.0, where(ok, P, float("nan"))).to(front.dtype)
        Q = where(x == 0, 1.0, where(ok, Q, float("nan"))).to(front.dtype)
        a0 = (a == 0) & (x > 0)  # PyTorch: the a -> 0 limit
        P, Q = where(a0, 1.0, P).to(P.dtype), where(a0, 0.0, Q).to(Q.dtype)
        inf = x == float("inf")
        return where(inf, 1.0, P).to(P.dtype), where(inf, 0.0, Q).to(Q.dtype)


def _gammainc_rule(sign: float) -> Any:
    def rule(n: Any, g: Tensor) -> tuple:
        a, x = n.ctx
        if n.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        density = exp(-x + (a - 1) * log(x) - lgamma(a))
        return (None, g * sign * density)

    return rule


def _incomplete(name: str, which: int, sign: float) -> Any:
    def op(input: Any, other: Any) -> Tensor:
        a, x = _pair(input, other)
        shape = broadcast_shape(a._shape, x._shape)
        a, x = a.expand(shape), x.expand(shape)
        # The prefactor exp(-x + a log x - lgamma(a)) cancels large terms: work in float64.
        wide = D.float64 if D.float64 in a._be.backend.dtypes else a.dtype
        out = _gammainc_pair(a.to(wide), x.to(wide))[which].to(a.dtype)
        if _grad.enabled and (x.requires_grad or a.requires_grad):
            record(f"Special{name.capitalize()}Backward0", _gammainc_rule(sign), out, (a, x), (), (a, x))
        return out

    op.__name__ = name
    op.__doc__ = f"The regularized {'lower' if which == 0 else 'upper'} incomplete gamma function of ``(input, other)``."
    return op


gammainc = _incomplete("gammainc", 0, 1.0)
gammaincc = _incomplete("gammaincc", 1, -1.0)
