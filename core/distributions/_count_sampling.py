"""Poisson and binomial draws in ember ops, vectorised over every element (any backend).

Small means use inversion (walk the CDF, all elements in lockstep, in float64 so the CDF reaches
its tail); large means use Hoermann's transformed rejection (PTRS for Poisson, BTRS for the
binomial, W. Hoermann 1993), repeated only while some element is still rejected. Both follow
the published algorithms; the draws come from ember's generator, so ``ember.manual_seed``
fixes them.
"""

from __future__ import annotations

import math
from typing import Any

from . import _ember as ember

__all__ = ["binomial", "poisson"]

_SMALL = 10.0
_MAX_ROUNDS = 500


def _walk(u: Any, first: Any, ratio: Any, limit: Any, steps: int) -> Any:
    """Inversion: the smallest ``k`` with ``u <= F(k)``, where ``p(k+1) = p(k) * ratio(k)``."""
    k = ember.zeros_like(u)
    p = first
    cdf = first
    for i in range(steps):
        active = (u > cdf) & (k < limit)
        if not bool(active.any()):
            break
        k = k + active.to(k.dtype)
        p = p * ratio(float(i))
        cdf = cdf + p
    return k


def poisson(rate: Any) -> Any:
    """Poisson(rate) draws, in ``rate``'s dtype."""
    dt, dev, shape = rate.dtype, rate.device, tuple(rate.shape)
    lam = rate.detach().to(ember.float64)
    small = lam < _SMALL
    out = ember.zeros(shape, dtype=ember.float64, device=dev)
    if bool(small.any()):
        lam_s = ember.where(small, lam, ember.zeros_like(lam))
        u = ember.rand(shape, dtype=ember.float64, device=dev)
        steps = int(_SMALL + 12 * math.sqrt(_SMALL) + 30)
        inf = ember.full_like(lam, math.inf)
        out = _walk(u, ember.exp(-lam_s), lambda i: lam_s / (i + 1), inf, steps)
    big = ~small
    if bool(big.any()):
        out = ember.where(big, _ptrs(ember.where(big, lam, ember.full_like(lam, 100.0))), out)
    return out.to(dt)


def _ptrs(lam: Any) -> Any:
    """PTRS for ``lam >= 10``."""
    shape, dev = tuple(lam.shape), lam.device
    slam, loglam = lam.sqrt(), lam.log()
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    out = ember.zeros_like(lam)
    done = ember.zeros(shape, dtype=ember.bool, device=dev)
    for _ in range(_MAX_ROUNDS):
        u = ember.rand(shape, dtype=ember.float64, device=dev) - 0.5
        v = ember.rand(shape, dtype=ember.float64, device=dev)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + lam + 0.43).floor()
        quick = (us >= 0.07) & (v <= vr)
        bad = (k < 0) | ((us < 0.013) & (v > us))
        safe_k = k.clamp(min=0)
        lhs = ember.log(v) + ember.log(inv_alpha) - ember.log(a / (us * us) + b)
        slow = lhs <= -lam + safe_k * loglam - ember.lgamma(safe_k + 1)
        ok = quick | (~bad & slow)
        out = ember.where(ok & ~done, k, out)
        done = done | ok
        if bool(done.all()):
            break
    return out


def binomial(count: Any, prob: Any) -> Any:
    """Binomial(count, prob) draws, in ``prob``'s dtype (``count`` and ``prob`` broadcast)."""
    dt, dev = prob.dtype, prob.device
    n, p = ember.broadcast_tensors(count.detach().to(ember.float64), prob.detach().to(ember.float64))
    shape = tuple(n.shape)
    flip = p > 0.5
    q = ember.where(flip, 1 - p, p)  # q <= 1/2, flipped back at the end
    small = n * q < _SMALL
    out = ember.zeros(shape, dtype=ember.float64, device=dev)
    if bool(small.any()):
        qs = ember.where(small, q, ember.zeros_like(q))
        ns = ember.where(small, n, ember.zeros_like(n))
        odds = qs / (1 - qs)
        u = ember.rand(shape, dtype=ember.float64, device=dev)
        steps = int(_SMALL + 12 * math.sqrt(_SMALL) + 30)
        first = ember.exp(ns * ember.log1p(-qs))
        out = _walk(u, first, lambda i: (ns - i) / (i + 1) * odds, ns, steps)
    big = ~small
    if bool(big.any()):
        nb = ember.where(big, n, ember.full_like(n, 100.0))
        qb = ember.where(big, q, ember.full_like(q, 0.5))
        out = ember.where(big, _btrs(nb, qb), out)
    out = ember.where(flip, n - out, out)
    return out.to(dt)


def _btrs(n: Any, p: Any) -> Any:
    """BTRS for ``n * p >= 10`` and ``p <= 1/2``."""
    shape, dev = tuple(n.shape), n.device
    spq = (n * p * (1 - p)).sqrt()
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = ember.log(p / (1 - p))
    m = ((n + 1) * p).floor()
    h = ember.lgamma(m + 1) + ember.lgamma(n - m + 1)
    out = ember.zeros_like(n)
    done = ember.zeros(shape, dtype=ember.bool, device=dev)
    for _ in range(_MAX_ROUNDS):
        u = ember.rand(shape, dtype=ember.float64, device=dev) - 0.5
        v = ember.rand(shape, dtype=ember.float64, device=dev)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + c).floor()
        bad = (k < 0) | (k > n)
        quick = (us >= 0.07) & (v <= vr)
        safe_k = k.clamp(min=0).minimum(n)
        lhs = ember.log(v * alpha / (a / (us * us) + b))
        slow = lhs <= h - ember.lgamma(safe_k + 1) - ember.lgamma(n - safe_k + 1) + (safe_k - m) * lpq
        ok = ~bad & (quick | slow)
        out = ember.where(ok & ~done, k, out)
        done = done | ok
        if bool(done.all()):
            break
    return out
