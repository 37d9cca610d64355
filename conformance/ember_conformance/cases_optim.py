"""Records for the fused optimizer updates (``sgd_update``, ``adam_update``).

Both write in place and return None; the record's ``call`` returns the written arrays
(param and state buffers) so the harness compares them with a float64 NumPy reference of
the formula in ``ember.backends.ops``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .records import OpCase, Sample
from .samples import contig, transposed, values

__all__ = ["RECORDS"]

FLOAT = ("float32", "float64")
_SGD = [  # label, momentum, dampening, weight_decay, nesterov, maximize, first_step
    ("plain", 0.0, 0.0, 0.0, False, False, False),
    ("momentum-first", 0.9, 0.0, 0.01, False, False, True),
    ("momentum", 0.9, 0.1, 0.01, False, True, False),
    ("nesterov", 0.8, 0.0, 0.1, True, False, False),
]
_ADAM = [  # label, weight_decay, amsgrad, maximize, step, decoupled
    ("adam", 0.0, False, False, 1.0, False),
    ("adam-l2-amsgrad", 0.1, True, False, 3.0, False),
    ("adamw-maximize", 0.5, False, True, 2.0, True),
    ("adamw-amsgrad", 0.01, True, False, 7.0, True),
]


def _lay(v: np.ndarray, i: int) -> Any:
    return transposed(v) if i % 2 else contig(v)


def _sgd_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = []
    for i, (label, mom, damp, wd, nest, maxi, first) in enumerate(_SGD):
        p, g, b = (values(rng, (3, 4), dtype) for _ in range(3))
        buf = _lay(b, i) if mom != 0 else None
        out.append(Sample(label, (_lay(p, i), _lay(g, i), buf, 0.1, mom, damp, wd, nest, maxi, first)))
    return out


def _sgd_call(kernel, p, g, buf, *params):  # type: ignore[no-untyped-def]
    kernel(p, g, buf, *params)
    return (p, buf) if buf is not None else (p, p)


def _sgd_ref(p, g, buf, lr, mom, damp, wd, nesterov, maximize, first):  # type: ignore[no-untyped-def]
    p = p.copy()
    g = -g if maximize else g
    g = g + wd * p
    if mom != 0:
        buf = g.copy() if first else mom * buf + (1 - damp) * g
        g = g + mom * buf if nesterov else buf
    p -= lr * g
    return (p, buf) if mom != 0 else (p, p)


def _adam_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = []
    for i, (label, wd, ams, maxi, step, dec) in enumerate(_ADAM):
        p, g, m = (values(rng, (3, 4), dtype) for _ in range(3))
        v = np.abs(values(rng, (3, 4), dtype))
        vmax = _lay(v + np.abs(values(rng, (3, 4), dtype)), i) if ams else None
        args = (_lay(p, i), _lay(g, i), _lay(m, i), _lay(v, i), vmax)
        out.append(Sample(label, (*args, 0.01, 0.9, 0.999, 1e-3, wd, ams, maxi, step, dec)))
    return out


def _adam_call(kernel, p, g, m, v, vmax, *params):  # type: ignore[no-untyped-def]
    kernel(p, g, m, v, vmax, *params)
    return (p, m, v, vmax if vmax is not None else v)


def _adam_ref(p, g, m, v, vmax, lr, b1, b2, eps, wd, amsgrad, maximize, step, decoupled):  # type: ignore[no-untyped-def]
    g = -g if maximize else g
    if decoupled:
        p = p * (1 - lr * wd)
    else:
        g = g + wd * p
    m = m + (1 - b1) * (g - m)
    v = b2 * v + (1 - b2) * g * g
    vmax = np.maximum(vmax, v) if amsgrad else v
    denom = np.sqrt(vmax) / np.sqrt(1 - b2**step) + eps
    return (p - lr / (1 - b1**step) * m / denom, m, v, vmax)


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
