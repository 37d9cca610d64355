"""Gamma draws with implicit reparameterisation gradients, in ember ops (any backend).

Sampling is Marsaglia and Tsang's squeeze-rejection method, vectorised: every element draws
until accepted, rounds repeat only for the rejected ones (about 2-5% per round). Shape
``alpha < 1`` draws ``Gamma(alpha + 1) * U**(1/alpha)``.

The gradient of a draw ``x`` with respect to ``alpha`` is the implicit one PyTorch uses,
``dx/dalpha = -(dP(alpha, x)/dalpha) / p(x; alpha)`` with ``P`` the regularised lower
incomplete gamma function. PyTorch evaluates it with fitted approximations; here it is the
series ``P = sum_n x**(alpha+n) e**-x / Gamma(alpha+n+1)`` differentiated term by term and
divided by the density in log space, summed in float64, so it is exact to rounding while the
draw lies within a few standard deviations of the mean (where draws lie).
"""

from __future__ import annotations

import math
from typing import Any

from ember.autograd import Function

from . import _ember as ember

__all__ = ["standard_gamma", "standard_gamma_grad"]

_MAX_ROUNDS = 200


def _draw(alpha: Any) -> Any:
    """Gamma(alpha, 1) draws, no graph, in ``alpha``'s dtype."""
    dt, dev = alpha.dtype, alpha.device
    shape = tuple(alpha.shape)
    small = alpha < 1
    a = ember.where(small, alpha + 1, alpha)
    d = a - 1.0 / 3.0
    c = (9 * d).rsqrt()
    out = ember.zeros(shape, dtype=dt, device=dev)
    done = ember.zeros(shape, dtype=ember.bool, device=dev)
    for _ in range(_MAX_ROUNDS):
        z = ember.randn(shape, dtype=dt, device=dev)
        u = ember.rand(shape, dtype=dt, device=dev)
        v = (1 + c * z) ** 3
        pos = v > 0
        safe_v = ember.where(pos, v, ember.ones_like(v))
        ok = pos & (ember.log(u) < 0.5 * z * z + d - d * safe_v + d * ember.log(safe_v))
        out = ember.where(ok & ~done, d * safe_v, out)
        done = done | ok
        if bool(done.all()):
            break
    u = 1 - ember.rand(shape, dtype=dt, device=dev)  # in (0, 1]: its log is finite
    boosted = out * ember.exp(ember.log(u) / alpha)
    out = ember.where(small, boosted, out)
    return out.clamp(min=ember.finfo(dt).tiny)


_CHUNK_ELEMENTS = 1 << 22  # series terms held at once (32 MiB of float64)


def _series_grad(a: Any, xd: Any) -> Any:
    """``dx/dalpha`` for flat float64 ``a`` and ``xd``: the series, with enough terms for the largest draw."""
    logx = ember.log(xd)
    beyond = float((xd - a).max())
    top = float(xd.max())
    n_terms = int(max(beyond, 0.0) + 12 * math.sqrt(max(top, 1.0)) + 40)
    n = ember.arange(n_terms, dtype=ember.float64, device=xd.device)
    an = a.unsqueeze(-1) + n + 1  # alpha + n + 1
    # r_n = x**(n+1) Gamma(alpha) / Gamma(alpha+n+1): term n of P divided by the density.
    log_r = (n + 1) * logx.unsqueeze(-1) - ember.lgamma(an) + ember.lgamma(a).unsqueeze(-1)
    terms = ember.exp(log_r) * (logx.unsqueeze(-1) - ember.digamma(an))
    return -terms.sum(-1)


def standard_gamma_grad(alpha: Any, x: Any) -> Any:
    """``d x / d alpha`` for Gamma(alpha, 1) draws ``x`` held at their CDF value (float64 inside).

    The series needs about ``12 sqrt(x)`` terms, so the draws go through in chunks that keep
    ``elements * terms`` bounded (a shape of 1e5 needs ~4000 terms per draw).
    """
    a = alpha.to(ember.float64).reshape(-1)
    xd = x.to(ember.float64).reshape(-1)
    if xd.numel() == 0:
        return ember.zeros_like(x)
    terms = int(max(float((xd - a).max()), 0.0) + 12 * math.sqrt(max(float(xd.max()), 1.0)) + 40)
    step = max(1, _CHUNK_ELEMENTS // terms)
    parts = [_series_grad(a[i : i + step], xd[i : i + step]) for i in range(0, xd.numel(), step)]
    out = parts[0] if len(parts) == 1 else ember.cat(parts)
    return out.reshape(tuple(x.shape)).to(x.dtype)


class _StandardGamma(Function):
    """Draws in forward; the implicit gradient in backward."""

    @staticmethod
    def forward(ctx: Any, alpha: Any) -> Any:
        x = _draw(alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        alpha, x = ctx.saved_tensors
        return grad * standard_gamma_grad(alpha, x)


def standard_gamma(alpha: Any) -> Any:
    """Gamma(alpha, 1) draws, differentiable in ``alpha`` when it requires grad."""
    if alpha.requires_grad and ember.is_grad_enabled():
        return _StandardGamma.apply(alpha)
    with ember.no_grad():
        return _draw(alpha)
