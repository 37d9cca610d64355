"""Adadelta: step sizes from running averages of squared gradients and updates."""

from __future__ import annotations

from typing import Any

from .._creation import zeros_like
from .._tensor import Tensor
from ._functional import addcmul_
from .optimizer import Optimizer, check_range, init_step

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler), as PyTorch implements it.

    For each parameter ``p`` with gradient ``g``::

        g = -g if maximize
        g = g + weight_decay * p                  if weight_decay != 0
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    Example: ``opt = ember.optim.Adadelta(model.parameters())``.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_range("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_range("epsilon value", eps)
        check_range("weight_decay value", weight_decay)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        rho, eps = group["rho"], group["eps"]
        if not state:
            state["square_avg"] = zeros_like(p)
            state["acc_delta"] = zeros_like(p)
        init_step(state)
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        v = addcmul_(state["square_avg"].mul_(rho), grad, grad, 1 - rho)
        u = state["acc_delta"]
        delta = u.add(eps).sqrt_().div_(v.add(eps).sqrt_()).mul_(grad)
        addcmul_(u.mul_(rho), delta, delta, 1 - rho)
        p.add_(delta, alpha=-group["lr"])
