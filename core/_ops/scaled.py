"""``x + alpha * y`` rounded once: PyTorch's add/sub with ``alpha`` (a fused multiply-add), through
the ``add_scaled`` composite or its decomposition. ``add``/``sub`` (pointwise_binary.py) and
``add_``/``sub_`` (convert.py) call here."""

from __future__ import annotations

from typing import Any

import numpy as _np
from ember.backends import dtypes as D

from .._dispatch import call, has_kernel
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from .pointwise_binary import _HALF, _operands, _reduce_pair, _round_scalar

__all__ = ["FUSED", "add_scaled_data", "scaled_add"]

FUSED = frozenset({D.float32, D.float64})  # the dtypes add_scaled takes


def scaled_add(a: Tensor, b: Tensor, alpha: float, node: str) -> Tensor | None:
    """``a + alpha * b`` rounded once, as PyTorch's add/sub with ``alpha`` (a fused multiply-add;
    sub passes ``-alpha``), recorded as one ``node``; None (the caller multiplies, then adds)
    unless the result is real floating and both are on one device. float16/bfloat16 compute in
    float32 with alpha rounded to their dtype, rounding once at the end, as PyTorch's CPU kernels."""
    if a._device is not b._device:
        return None
    be, dev, dt, shape, xa, xb = _operands(a, b, "add")
    if dt in FUSED:
        data = add_scaled_data(be, xa, xb, alpha, dt)
    elif dt in _HALF:
        f32 = D.float32
        wide = add_scaled_data(
            be, call(be, "cast", xa, f32), call(be, "cast", xb, f32), _round_scalar(alpha, dt), f32
        )
        data = call(be, "cast", wide, dt)
    else:
        return None
    out = wrap(data, be, dev, dt, shape)
    if _grad.enabled and (a._requires_grad or b._requires_grad):
        record(node, _scaled_rule, out, (a, b), (), (None, None, a._shape, b._shape, alpha))
    return out


def add_scaled_data(be: Any, x: Any, y: Any, alpha: float, dt: Any) -> Any:
    """The ``add_scaled`` kernel, or its decomposition: float32 through float64 where the backend
    has it (the product exact, the sum rounded once more: the fused result but for a rare tie),
    else a multiply, then an add."""
    if has_kernel(be, "add_scaled"):
        return call(be, "add_scaled", x, y, alpha)
    if dt is D.float32 and D.float64 in be.backend.dtypes:
        f64 = D.float64
        wide = call(be, "mul", call(be, "cast", y, f64), float(_np.float32(alpha)))
        return call(be, "cast", call(be, "add", call(be, "cast", x, f64), wide), dt)
    return call(be, "add", x, call(be, "mul", y, alpha))


def _scaled_rule(n: Any, g: Tensor) -> tuple:
    return _reduce_pair(n, g, g * n.ctx[4] if n.needs_input_grad[1] else None)
