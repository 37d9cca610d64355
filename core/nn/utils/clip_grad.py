"""Gradient clipping: by total norm and by value (in place, without recording).

As PyTorch's, ``foreach`` (default on) takes the norms of each (device, dtype) group of
gradients in one ``norm_foreach`` call and scales them in one ``mul_foreach`` call, where the
backend has those kernels; otherwise (and with ``foreach=False``) one norm and one ``mul_``
per gradient, the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ember.backends.dtypes import to_real

from ..._creation import tensor
from ..._dispatch import call, has_kernel
from ..._ops import pointwise_unary as U
from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm"]

_HALF = ("bfloat16", "float16")


def _grads(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _groups(ts: list[Tensor]) -> list[list[Tensor]]:
    """``ts`` grouped by (device, dtype), in order of first appearance (PyTorch's grouping)."""
    out: dict[Any, list[Tensor]] = {}
    for t in ts:
        out.setdefault((t._device, t.dtype), []).append(t)
    return list(out.values())


def _norm(t: Tensor, p: float) -> Tensor:
    """``linalg.vector_norm(t, p)`` in ember ops (half types accumulate in float32)."""
    if t.dtype.name in _HALF:
        return _norm(t.float(), p).to(t.dtype)
    if p == 2 and t.dtype.is_floating_point:  # no |t| pass: one product and its sum
        return (t * t).sum().sqrt()
    a = U.abs(t)
    if p == math.inf:
        return a.amax()
    if p == -math.inf:
        return a.amin()
    if p == 0:
        return (a != 0).sum().to(a.dtype)
    return (a**p).sum() ** (1.0 / p)


def _norms(ts: list[Tensor], p: float) -> Tensor:
    """The ``p``-norm of each tensor of one (device, dtype) group, as one 1-D tensor."""
    if math.isinf(p) and any(t.numel() == 0 for t in ts):
        raise RuntimeError(
            "_foreach_norm cannot compute the infinity norm on an empty tensor because the operation "
            "does not have an identity"
        )
    t0 = ts[0]
    if not has_kernel(t0._be, "norm_foreach"):  # its decomposition: one norm per tensor
        return _stack([_norm(t, p) for t in ts])
    data = call(t0._be, "norm_foreach", [t._data for t in ts], p)
    return wrap(data, t0._be, t0._device, to_real(t0.dtype), (len(ts),))


def get_total_norm(
    tensors: Iterable[Tensor], norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach: Any = None
) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` taken together (of their norms, as PyTorch)."""
    ts = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if not ts:
        return tensor(0.0)
    norm_type = float(norm_type)
    first = ts[0]._device
    with no_grad():
        if foreach is False:
            norms = _stack([_norm(t, norm_type) for t in ts])
        else:
            parts = [_norms(g, norm_type) for g in _groups(ts)]
            norms = parts[0] if len(parts) == 1 else _cat([n.to(first) for n in parts])
        total = _norms([norms], norm_type).reshape(())
    if error_if_nonfinite and not bool(U.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total


def _stack(ts: list[Tensor]) -> Tensor:
    from ..._ops.join import stack

    return stack(ts)


def _cat(ts: list[Tensor]) -> Tensor:
    from ..._ops.join import cat

    return cat(ts)


def _scale(grads: list[Tensor], coef: Tensor) -> None:
    """``g *= coef`` for one group: one ``mul_foreach`` call where the backend has it (a writing kernel:
    ``graph.WRITES_FIRST`` and the registry's aliasing set name it, so captures and
    contiguous-only wrappers keep the write)."""
    be = grads[0]._be
    fused = has_kernel(be, "mul_foreach") and (
        not getattr(be.backend, "contiguous_only", False) or all(g.is_contiguous() for g in grads)
    )
    if not fused:
        for g in grads:
            g.mul_(coef)
        return
    call(be, "mul_foreach", [g._data for g in grads], coef._data)
    for g in grads:
        g._vc[0] += 1


def clip_grad_norm_(
    parameters: Any,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Any = None,
) -> Tensor:
    """Scale all gradients by ``min(1, max_norm / (total_norm + 1e-6))``; returns the total norm."""
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    if not grads:
        return total
    with no_grad():
        coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
        for group in _groups(grads):
            c = coef.to(group[0]._device)
            if foreach is False:
                for g in group:
                    g.mul_(c)
            else:
                _scale(group, c)
    return total


def clip_grad_value_(parameters: Any, clip_value: float, foreach: Any = None) -> None:
    """Clamp every gradient into ``[-clip_value, clip_value]`` in place."""
    v = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-v, v)
