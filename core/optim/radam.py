"""RAdam: Adam with a rectified adaptive learning rate."""

from __future__ import annotations

from typing import Any

from .._creation import zeros_like
from .._tensor import Tensor
from ._functional import addcmul_, lerp_
from .adam import _check_adam
from .optimizer import Optimizer, init_step

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam (Liu et al.), as PyTorch implements it.

    For each parameter ``p`` with gradient ``g`` at step ``t``::

        g = -g if maximize
        p = p * (1 - lr * weight_decay)          if decoupled_weight_decay
        g = g + weight_decay * p                 otherwise, if weight_decay != 0
        m = m + (1 - beta1) * (g - m)
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        if rho_t > 5:
            r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
            p = p - m_hat * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r
        else:
            p = p - m_hat * lr

    Example: ``opt = ember.optim.RAdam(model.parameters())``.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_adam(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, wd = group["lr"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        if not state:
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
        step = init_step(state)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        if group["maximize"]:
            grad = -grad
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        lerp_(m, grad, 1 - beta1)
        addcmul_(v.mul_(beta2), grad, grad, 1 - beta2)
        bias2 = 1 - beta2**step
        m_hat = m / (1 - beta1**step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = (bias2**0.5) / v.sqrt().add_(group["eps"])
            p.add_(m_hat.mul_(lr).mul_(adaptive).mul_(rect), alpha=-1.0)
        else:
            p.add_(m_hat.mul_(lr), alpha=-1.0)
