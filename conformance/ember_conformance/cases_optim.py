"""Records for the fused optimizer updates (``sgd_update``, ``adam_update``, and their
multi-tensor ``*_foreach`` forms over a list of differently shaped tensors).

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


_SHAPES = ((3, 5), (7,), (2, 3, 4))  # a foreach sample's tensors: one parameter group


def _sgd_foreach_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """Three tensors of different shapes and layouts; the middle one on its first step."""
    out = []
    for label, (mom, damp, wd, nest, maxi, first) in _sgd_params():
        if first:
            continue
        ps, gs, bs = ([_lay(values(rng, s, dtype), i) for i, s in enumerate(_SHAPES)] for _ in range(3))
        bufs = bs if mom != 0 else [None] * 3
        firsts = (False, mom != 0, False)
        out.append(Sample(label, (ps, gs, bufs, 0.1, mom, damp, wd, nest, maxi, firsts)))
    return out


def _sgd_foreach_call(kernel, ps, gs, bufs, lr, mom, damp, wd, nest, maxi, firsts):  # type: ignore[no-untyped-def]
    for i in range(STEPS):
        kernel(ps, gs, bufs, lr, mom, damp, wd, nest, maxi, tuple(f and i == 0 for f in firsts))
    return tuple(a for p, b in zip(ps, bufs) for a in (p, b if b is not None else p))


def _sgd_foreach_ref(ps, gs, bufs, lr, mom, damp, wd, nest, maxi, firsts):  # type: ignore[no-untyped-def]
    return tuple(
        a
        for p, g, b, f in zip(ps, gs, bufs, firsts)
        for a in _sgd_ref(p, g, b, lr, mom, damp, wd, nest, maxi, f)
    )


def _adam_foreach_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """Three tensors at different steps (a parameter added to the group later)."""
    out = []
    for label, (wd, ams, maxi, _step, dec) in _adam_params():
        if _step != 1.0:
            continue
        lists = [[_lay(values(rng, s, dtype), i) for i, s in enumerate(_SHAPES)] for _ in range(3)]
        vs = [_lay(np.abs(values(rng, s, dtype)), i) for i, s in enumerate(_SHAPES)]
        vmax = (
            [_lay(np.abs(values(rng, s, dtype)) + 0.5, i) for i, s in enumerate(_SHAPES)]
            if ams
            else [None] * 3
        )
        args = (*lists, vs, vmax, 0.01, 0.9, 0.999, 1e-3, wd, ams, maxi, (1.0, 4.0, 2.0), dec)
        out.append(Sample(label, args))
    return out


def _adam_foreach_call(kernel, ps, gs, ms, vs, vmax, lr, b1, b2, eps, wd, ams, maxi, steps, dec):  # type: ignore[no-untyped-def]
    for i in range(STEPS):
        kernel(ps, gs, ms, vs, vmax, lr, b1, b2, eps, wd, ams, maxi, tuple(s + i for s in steps), dec)
    return tuple(a for p, m, v, x in zip(ps, ms, vs, vmax) for a in (p, m, v, x if x is not None else v))


def _adam_foreach_ref(ps, gs, ms, vs, vmax, lr, b1, b2, eps, wd, ams, maxi, steps, dec):  # type: ignore[no-untyped-def]
    return tuple(
        a
        for p, g, m, v, x, s in zip(ps, gs, ms, vs, vmax, steps)
        for a in _adam_ref(p, g, m, v, x if ams else v, lr, b1, b2, eps, wd, ams, maxi, s, dec)
    )


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
    OpCase(
        "sgd_update_foreach",
        _sgd_foreach_samples,
        _sgd_foreach_ref,
        FLOAT,
        "optimizer state is float32/float64; lists of tensors of one group",
        out_dtype=lambda d: (d,) * 6,
        tol_scale=4.0,
        call=_sgd_foreach_call,
    ),
    OpCase(
        "adam_update_foreach",
        _adam_foreach_samples,
        _adam_foreach_ref,
        FLOAT,
        "optimizer state is float32/float64; lists of tensors of one group",
        out_dtype=lambda d: (d,) * 12,
        tol_scale=8.0,
        call=_adam_foreach_call,
    ),
]
