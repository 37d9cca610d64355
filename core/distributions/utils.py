"""Helpers the distributions share: broadcasting parameters, probs <-> logits, lazy properties."""

from __future__ import annotations

from numbers import Number
from typing import Any

from . import _ember as ember

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "standard_normal",
    "xlogy",
]


def broadcast_all(*values: Any) -> tuple[Any, ...]:
    """Tensors broadcast together; numbers become tensors of the first tensor's dtype and device."""
    if not all(isinstance(v, (ember.Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, ember.Tensor) for v in values):
        opts: dict[str, Any] = {"dtype": ember.get_default_dtype()}
        for v in values:
            if isinstance(v, ember.Tensor):
                opts = {"dtype": v.dtype, "device": v.device}
                break
        values = tuple(v if isinstance(v, ember.Tensor) else ember.tensor(v, **opts) for v in values)
    return tuple(ember.broadcast_tensors(*values))


def standard_normal(shape: Any, dtype: Any, device: Any) -> Any:
    """N(0, 1) draws from ember's generator (``ember.manual_seed`` fixes them)."""
    return ember.randn(tuple(shape), dtype=dtype, device=device)


def clamp_probs(probs: Any) -> Any:
    """Probabilities kept inside ``[eps, 1 - eps]`` so their logs stay finite."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Any, is_binary: bool = False) -> Any:
    """Sigmoid for a binary event, softmax over the last dim for a categorical one."""
    return ember.sigmoid(logits) if is_binary else ember.softmax(logits, dim=-1)


def probs_to_logits(probs: Any, is_binary: bool = False) -> Any:
    """The inverse of ``logits_to_probs`` (log-odds for binary, log-probs otherwise)."""
    p = clamp_probs(probs)
    return ember.log(p) - ember.log1p(-p) if is_binary else ember.log(p)


class lazy_property:
    """Computed on first access, then stored in the instance (``probs`` from ``logits``)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, 0 where ``x == 0`` and ``y <= 0``, with PyTorch's gradient ``log(y)`` in ``x``.

    ``ember.xlogy`` picks 0 with ``where`` at ``x == 0``, so its gradient in ``x`` is 0 there,
    where PyTorch's is ``log(y)``: a Gamma or Dirichlet with concentration exactly 1 would get
    a wrong gradient. This form multiplies by a masked log instead.
    """
    y = ember.as_tensor(y) if not isinstance(y, ember.Tensor) else y
    masked = (x == 0) & (y <= 0)
    safe_y = ember.where(masked, ember.ones_like(y), y)  # no 0 * inf in the gradient of log
    return x * ember.where(masked, ember.zeros_like(y), ember.log(safe_y))
