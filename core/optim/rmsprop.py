"""RMSprop, optionally centered and with momentum."""

from __future__ import annotations

from typing import Any

from .._creation import zeros_like
from .._tensor import Tensor
from ._functional import addcdiv_, addcmul_, lerp_
from .optimizer import Optimizer, check_range, init_step

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop (Hinton), as PyTorch implements it.

    For each parameter ``p`` with gradient ``g``::

        g = -g if maximize
        g = g + weight_decay * p                  if weight_decay != 0
        v = alpha * v + (1 - alpha) * g * g
        a = g_avg + (1 - alpha) * (g - g_avg);  avg = sqrt(v - a * a)   if centered
        avg = sqrt(v)                                                   otherwise
        avg = avg + eps
        b = momentum * b + g / avg;  p = p - lr * b                     if momentum > 0
        p = p - lr * g / avg                                            otherwise

    Example: ``opt = ember.optim.RMSprop(model.parameters(), lr=0.01)``.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_range("learning rate", lr)
        check_range("epsilon value", eps)
        check_range("momentum value", momentum)
        check_range("weight_decay value", weight_decay)
        check_range("alpha value", alpha)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        alpha, momentum = group["alpha"], group["momentum"]
        if not state:
            state["square_avg"] = zeros_like(p)
            if momentum > 0:
                state["momentum_buffer"] = zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = zeros_like(p)
        init_step(state)
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        v = addcmul_(state["square_avg"].mul_(alpha), grad, grad, 1 - alpha)
        if group["centered"]:
            a = lerp_(state["grad_avg"], grad, 1 - alpha)
            avg = addcmul_(v.clone(), a, a, -1).sqrt_()
        else:
            avg = v.sqrt()
        avg.add_(group["eps"])
        if momentum > 0:
            buf = addcdiv_(state["momentum_buffer"].mul_(momentum), grad, avg)
            p.add_(buf, alpha=-group["lr"])
        else:
            addcdiv_(p, grad, avg, -group["lr"])
