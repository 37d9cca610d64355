"""Adagrad: per-coordinate learning rates from the sum of squared gradients."""

from __future__ import annotations

from typing import Any

from .._creation import full_like, tensor
from .._tensor import Tensor
from ._functional import addcdiv_, addcmul_
from .optimizer import Optimizer, check_range, init_step

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al.), as PyTorch implements it.

    For each parameter ``p`` with gradient ``g`` at step ``t``::

        g = -g if maximize
        g = g + weight_decay * p                 if weight_decay != 0
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                            (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    Example: ``opt = ember.optim.Adagrad(model.parameters(), lr=0.01)``.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_range("learning rate", lr)
        check_range("lr_decay value", lr_decay)
        check_range("weight_decay value", weight_decay)
        check_range("initial_accumulator_value value", initial_accumulator_value)
        check_range("epsilon value", eps)
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = tensor(0.0)
                state["sum"] = full_like(p, group["initial_accumulator_value"])

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if "sum" not in state:  # a parameter added later with add_param_group
            state["sum"] = full_like(p, group["initial_accumulator_value"])
        step = init_step(state)
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        s = addcmul_(state["sum"], grad, grad, 1)
        addcdiv_(p, grad, s.sqrt().add_(group["eps"]), -clr)
