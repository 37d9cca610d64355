"""Multi-tensor kernels for gradient clipping (PyTorch's ``_foreach_norm`` and ``_foreach_mul_``):
a list of gradients in one call, so ``clip_grad_norm_`` costs two calls, not three per tensor.

The 2-norm of a contiguous real array is one BLAS dot product (no ``x * x`` temporary); half
types accumulate in float32 and round the norm once to their dtype, as PyTorch does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .dtypes import HALF

__all__ = ["FOREACH_KERNELS", "mul_foreach", "norm_foreach"]

_F32 = np.dtype(np.float32)
_INF = math.inf


def _norm(a: np.ndarray, ord: float) -> float:
    """``a``'s ``ord``-norm as a Python float (the caller rounds it to the result's dtype)."""
    if a.dtype in HALF:
        a = a.astype(_F32)
    if ord == 2 and a.size:
        flat = np.ascontiguousarray(a).reshape(-1)
        return math.sqrt(abs(np.vdot(flat, flat)))  # vdot: conj(a) . a, real for complex a
    m = np.abs(a)
    if ord == _INF:
        return float(m.max())
    if ord == -_INF:
        return float(m.min())
    if ord == 0:
        return float(np.count_nonzero(m))
    if ord == 1:
        return float(m.sum())
    return float(np.sum(m**ord) ** (1.0 / ord))


def norm_foreach(arrays: list[np.ndarray], ord: float) -> np.ndarray:
    """The ``ord``-norm of each array, as one 1-D array of their real dtype."""
    real = np.abs(np.zeros((), arrays[0].dtype)).dtype if arrays else _F32
    return np.array([_norm(a, ord) for a in arrays], dtype=real)


def mul_foreach(arrays: list[np.ndarray], s: np.ndarray) -> None:
    """Each array ``*= s`` in place (in the wider dtype of the two, rounded to the array's)."""
    for a in arrays:
        np.multiply(a, s, out=a, casting="unsafe")


FOREACH_KERNELS: dict[str, Callable[..., Any]] = {"norm_foreach": norm_foreach, "mul_foreach": mul_foreach}
