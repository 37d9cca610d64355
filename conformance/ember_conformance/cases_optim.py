"""Records for the fused optimizer updates (``sgd_update``, ``adam_update``).

Both write in place and return None; the record's ``call`` returns the written arrays
(param and state buffers) so the harness compares them with a float64 NumPy reference of
the formula in ``ember.backends.ops``.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .records import OpCase, Sample
from .samples import contig, transposed, values

__all__ = ["RECORDS"]

FLOAT = ("float32", "float64")
STEPS = 3  # each sample runs this many steps on the same state, so later steps read it back


def _sgd_params() -> list[tuple[str, tuple[Any, ...]]]:
    """Every combination PyTorch allows: (label, (momentum, dampening, weight_decay, nesterov,
    maximize, first_step)); nesterov needs momentum and no dampening."""
    out = []
    for mom, damp, wd, nest, maxi, first in itertools.product(
        (0.0, 0.9), (0.0, 0.1), (0.0, 0.01), (False, True), (False, True), (False, True)
    ):
        if (mom == 0 and (damp or nest or first)) or (nest and damp):
            continue
        label = f"mom={mom}-damp={damp}-wd={wd}-nesterov={nest}-maximize={maxi}-first={first}"
        out.append((label, (mom, damp, wd, nest, maxi, first)))
    return out


def _adam_params() -> list[tuple[str, tuple[Any, ...]]]:
    """(label, (weight_decay, amsgrad, maximize, first step, decoupled)) for every combination."""
    out = []
    for i, (wd, ams, maxi, dec) in enumerate(
        itertools.product((0.0, 0.1), (False, True), (False, True), (False, True))
    ):
        step = 1.0 if i % 2 else 5.0
        label = f"wd={wd}-amsgrad={ams}-maximize={maxi}-decoupled={dec}-step={step:g}"
        out.append((label, (wd, ams, maxi, step, dec)))
    return out


def _lay(v: np.ndarray, i: int) -> Any:
    return transposed(v) if i % 2 else contig(v)


def _sgd_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = []
    for i, (label, (mom, damp, wd, nest, maxi, first)) in enumerate(_sgd_params()):
        p, g, b = (values(rng, (3, 5), dtype) for _ in range(3))
        buf = _lay(b, i) if mom != 0 else None
        out.append(Sample(label, (_lay(p, i), _lay(g, i), buf, 0.1, mom, damp, wd, nest, maxi, first)))
    return out


def _sgd_call(kernel, p, g, buf, lr, mom, damp, wd, nest, maxi, first):  # type: ignore[no-untyped-def]
    """``STEPS`` steps: the first as the sample says, then later steps reading ``buf`` back."""
    for i in range(STEPS):
        kernel(p, g, buf, lr, mom, damp, wd, nest, maxi, first and i == 0)
    return (p, buf) if buf is not None else (p, p)


def _sgd_ref(p, g, buf, lr, mom, damp, wd, nesterov, maximize, first):  # type: ignore[no-untyped-def]
    p = p.copy()
    for i in range(STEPS):
        d = -g if maximize else g
        d = d + wd * p
        if mom != 0:
            buf = d.copy() if first and i == 0 else mom * buf + (1 - damp) * d
            d = d + mom * buf if nesterov else buf
        p = p - lr * d
    return (p, buf) if mom != 0 else (p, p)


def _adam_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """The AMSGrad running max grows where the gradient is large against ``v`` and stays
    where an earlier step left it high (alternate columns)."""
    out = []
    for i, (label, (wd, ams, maxi, step, dec)) in enumerate(_adam_params()):
        p, g, m = (values(rng, (3, 6), dtype) for _ in range(3))
        v = np.abs(values(rng, (3, 6), dtype)) * np.array([0.01, 1.0] * 3, dtype=p.dtype)
        high = np.array([0.0, 1.0] * 3, dtype=p.dtype) * (2 + np.abs(values(rng, (3, 6), dtype)))
        vmax = _lay((v + high).astype(p.dtype), i) if ams else None
        args = (_lay(p, i), _lay(g, i), _lay(m, i), _lay(v, i), vmax)
        out.append(Sample(label, (*args, 0.01, 0.9, 0.999, 1e-3, wd, ams, maxi, step, dec)))
    return out


def _adam_call(kernel, p, g, m, v, vmax, lr, b1, b2, eps, wd, ams, maxi, step, dec):  # type: ignore[no-untyped-def]
    for i in range(STEPS):
        kernel(p, g, m, v, vmax, lr, b1, b2, eps, wd, ams, maxi, step + i, dec)
    return (p, m, v, vmax if vmax is not None else v)


def _adam_ref(p, g, m, v, vmax, lr, b1, b2, eps, wd, amsgrad, maximize, step, decoupled):  # type: ignore[no-untyped-def]
    for i in range(STEPS):
        d = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * wd)
        else:
            d = d + wd * p
        m = m + (1 - b1) * (d - m)
        v = b2 * v + (1 - b2) * d * d
        vmax = np.maximum(vmax, v) if amsgrad else v
        denom = np.sqrt(vmax) / np.sqrt(1 - b2 ** (step + i)) + eps
        p = p - lr / (1 - b1 ** (step + i)) * m / denom
    return (p, m, v, vmax)


def _four(dtype: str) -> tuple[str, ...]:
    return (dtype,) * 4


RECORDS = [
    OpCase(
        "sgd_update",
        _sgd_samples,
        _sgd_ref,
        FLOAT,
        "optimizer state is float32/float64",
        out_dtype=lambda d: (d, d),
        tol_scale=4.0,
        call=_sgd_call,
    ),
    OpCase(
        "adam_update",
        _adam_samples,
        _adam_ref,
        FLOAT,
        "optimizer state is float32/float64",
        out_dtype=_four,
        tol_scale=8.0,
        call=_adam_call,
    ),
]
