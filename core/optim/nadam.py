"""NAdam: Adam with Nesterov momentum and momentum decay."""

from __future__ import annotations

from typing import Any

from .._creation import ones, zeros_like
from .._tensor import Tensor
from ._functional import addcdiv_, addcmul_, lerp_
from .adam import _check_adam
from .optimizer import Optimizer, check_range, init_step

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""NAdam (Dozat), as PyTorch implements it.

    For each parameter ``p`` with gradient ``g`` at step ``t``::

        g = -g if maximize
        p = p * (1 - lr * weight_decay)          if decoupled_weight_decay
        g = g + weight_decay * p                 otherwise, if weight_decay != 0
        mu_t    = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_prod = mu_prod * mu_t                 (a float32 product over steps)
        m = m + (1 - beta1) * (g - m)
        v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - mu_prod) * g / denom
              - lr * mu_next / (1 - mu_prod * mu_next) * m / denom

    Example: ``opt = ember.optim.NAdam(model.parameters(), lr=2e-3)``.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_adam(lr, betas, eps, weight_decay)
        check_range("momentum_decay value", momentum_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, wd, decay = group["lr"], group["weight_decay"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        if not state:
            state["mu_product"] = ones(())
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
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        mu_product = state["mu_product"].mul_(mu).item()
        lerp_(m, grad, 1 - beta1)
        addcmul_(v.mul_(beta2), grad, grad, 1 - beta2)
        denom = v.div(1 - beta2**step).sqrt_().add_(group["eps"])
        addcdiv_(p, grad, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
        addcdiv_(p, m, denom, (-lr * mu_next) / (1.0 - mu_product * mu_next))
