"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

from typing import Any

from .._creation import zeros_like
from .._ops.pointwise_binary import maximum
from .._tensor import Tensor
from ._functional import addcdiv_, lerp_
from .adam import _check_adam
from .optimizer import Optimizer, init_step

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax (Kingma & Ba, section 7), as PyTorch implements it.

    For each parameter ``p`` with gradient ``g`` at step ``t``::

        g = -g if maximize
        g = g + weight_decay * p                  if weight_decay != 0
        m = m + (1 - beta1) * (g - m)
        u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u

    Example: ``opt = ember.optim.Adamax(model.parameters())``.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_adam(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        if not state:
            state["exp_avg"] = zeros_like(p)
            state["exp_inf"] = zeros_like(p)
        step = init_step(state)
        m, u = state["exp_avg"], state["exp_inf"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        lerp_(m, grad, 1 - beta1)
        u.copy_(maximum(u.mul_(beta2), grad.abs().add_(group["eps"])))
        addcdiv_(p, m, u, -group["lr"] / (1 - beta1**step))
