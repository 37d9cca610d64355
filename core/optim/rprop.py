"""Rprop: per-coordinate step sizes adapted from the sign of successive gradients."""

from __future__ import annotations

from typing import Any

from .._creation import full_like, zeros_like
from .._ops.select import where
from .._tensor import Tensor
from ._functional import addcmul_
from .optimizer import Optimizer, check_range, init_step

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Resilient backpropagation (Riedmiller & Braun), as PyTorch implements it.

    For each parameter ``p`` with gradient ``g`` and previous (kept) gradient ``g_prev``::

        g = -g if maximize
        f = etaplus if g * g_prev > 0, etaminus if < 0, else 1
        s = clamp(s * f, step_size_min, step_size_max)      (s starts at lr)
        g = 0 where f == etaminus
        p = p - sign(g) * s;   g_prev = g

    Example: ``opt = ember.optim.Rprop(model.parameters(), lr=0.01)``.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_range("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        if not state:
            state["prev"] = zeros_like(p)
            state["step_size"] = full_like(grad, group["lr"])
        init_step(state)
        if group["maximize"]:
            grad = -grad
        prev, size = state["prev"], state["step_size"]
        sign = grad.mul(prev).sign()
        factor = where(sign > 0, etaplus, where(sign < 0, etaminus, 1.0)).to(p.dtype)
        size.mul_(factor).clamp_(lo, hi)
        grad = where(factor == etaminus, 0.0, grad)
        addcmul_(p, grad.sign(), size, -1)
        prev.copy_(grad)
