"""ASGD: SGD with Polyak-Ruppert averaging of the iterates."""

from __future__ import annotations

from typing import Any

from .._creation import ones, tensor, zeros_like
from .._tensor import Tensor
from .optimizer import Optimizer, check_range, init_step

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Averaged SGD (Polyak & Juditsky), as PyTorch implements it.

    For each parameter ``p`` with gradient ``g`` at step ``t`` (``eta`` starts at ``lr``, ``mu`` at 1)::

        g = -g if maximize
        g = g + weight_decay * p                   if weight_decay != 0
        p = p * (1 - lambd * eta) - eta * g
        ax = ax + mu * (p - ax)   (ax = p while mu == 1)
        eta = lr / (1 + lambd * lr * t) ** alpha;   mu = 1 / max(1, t - t0)

    ``state[p]["ax"]`` holds the averaged parameters.
    Example: ``opt = ember.optim.ASGD(model.parameters(), lr=0.01)``.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_range("learning rate", lr)
        check_range("weight_decay value", weight_decay)
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, lambd = group["lr"], group["lambd"]
        if not state:
            state["eta"] = tensor(float(lr), device=p.device)
            state["mu"] = ones((), device=p.device)
            state["ax"] = zeros_like(p)
        step = init_step(state)
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        eta = state["eta"].item()
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        ax = state["ax"]
        if state["mu"].item() != 1:
            ax.add_(p.sub(ax).mul_(state["mu"].item()))
        else:
            ax.copy_(p)
        state["eta"].fill_(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        state["mu"].fill_(1 / max(1, step - group["t0"]))
