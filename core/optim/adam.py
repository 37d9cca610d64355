"""Adam and AdamW (decoupled weight decay)."""

from __future__ import annotations

from typing import Any

from .._creation import zeros_like
from .._ops.pointwise_binary import maximum
from .._tensor import Tensor
from ._functional import addcdiv_, addcmul_, lerp_
from .optimizer import (
    Optimizer,
    check_fused,
    check_range,
    fused_kernel,
    init_step,
    run_foreach,
    run_fused,
    state_fits,
)

__all__ = ["Adam", "AdamW"]


def _check_adam(lr: float, betas: tuple[float, float], eps: float, weight_decay: float) -> None:
    check_range("learning rate", lr)
    check_range("epsilon value", eps)
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    check_range("weight_decay value", weight_decay)


class Adam(Optimizer):
    r"""Adam (Kingma & Ba), as PyTorch implements it.

    For each parameter ``p`` with gradient ``g`` at step ``t``::

        g = -g if maximize
        p = p * (1 - lr * weight_decay)      if decoupled (AdamW)
        g = g + weight_decay * p             otherwise, if weight_decay != 0
        m = m + (1 - beta1) * (g - m)
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                if amsgrad (and v := v_max below)
        denom = sqrt(v) / sqrt(1 - beta2**t) + eps
        p = p - lr / (1 - beta1**t) * m / denom

    The backend's fused ``adam_update`` kernel runs the same formula in one call when it has
    one (see ``fused_kernel``); its ``adam_update_foreach`` runs a whole parameter group in one
    call with ``foreach=True`` (the numbers are the same either way).

    Example: ``opt = ember.optim.Adam([w], lr=0.1)``.
    """

    _decoupled = False

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_adam(lr, betas, eps, weight_decay)
        check_fused(fused, foreach, differentiable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay or self._decoupled,
        }
        super().__init__(params, defaults)

    _foreach_op = "adam_update_foreach"

    def _foreach(self, params: list[Tensor], group: dict[str, Any]) -> list[Tensor]:
        amsgrad = group["amsgrad"]
        lists: tuple[list[Any], ...] = ([], [], [], [], [])
        steps = []
        for p in params:
            state = self.state.get(p)
            if state is None:
                state = self.state[p] = {}
            if not state:
                self._init_state(p, state, amsgrad)
            step = init_step(state)
            bufs = (state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq") if amsgrad else None)
            if (amsgrad and bufs[2] is None) or not all(state_fits(p, b) for b in bufs):
                self._update_ops(p, p.grad, state, group, step)  # type: ignore[arg-type]
                continue
            for lst, t in zip(lists, (p, p.grad, *bufs)):
                lst.append(t)
            steps.append(step)
        if steps:
            beta1, beta2 = group["betas"]
            params_ = (group["lr"], beta1, beta2, group["eps"], group["weight_decay"], amsgrad)
            extra = (group["maximize"], tuple(steps), group["decoupled_weight_decay"])
            run_foreach(lists[0][0]._be, self._foreach_op, lists, (*params_, *extra))
        return []

    @staticmethod
    def _init_state(p: Tensor, state: dict[str, Any], amsgrad: bool) -> None:
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)
        if amsgrad:
            state["max_exp_avg_sq"] = zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            self._init_state(p, state, group["amsgrad"])
        step = init_step(state)
        k = fused_kernel(p, grad, group, "adam_update")
        if k is None or not self._fused(k, p, grad, state, group, step):
            self._update_ops(p, grad, state, group, step)

    def _fused(
        self, k: Any, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any], step: float
    ) -> bool:
        bufs = (
            state["exp_avg"],
            state["exp_avg_sq"],
            state.get("max_exp_avg_sq") if group["amsgrad"] else None,
        )
        if group["amsgrad"] and bufs[2] is None:
            return False
        if any(b is not None and (b.dtype is not p.dtype or b._shape != p._shape) for b in bufs):
            return False
        beta1, beta2 = group["betas"]
        params = (group["lr"], beta1, beta2, group["eps"], group["weight_decay"], group["amsgrad"])
        return run_fused(
            p, k, (p, grad, *bufs), (*params, group["maximize"], step, group["decoupled_weight_decay"])
        )

    def _update_ops(
        self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any], step: float
    ) -> None:
        lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
        beta1, beta2 = group["betas"]
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
        if group["amsgrad"]:
            v = state["max_exp_avg_sq"].copy_(maximum(state["max_exp_avg_sq"], v))
        step_size = lr / (1 - beta1**step)
        denom = v.sqrt().div_((1 - beta2**step) ** 0.5).add_(eps)
        addcdiv_(p, m, denom, -step_size)


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter): ``p *= 1 - lr * weight_decay``
    before the Adam step (see ``Adam`` for the rest of the formula). Default weight_decay 0.01.

    Example: ``opt = ember.optim.AdamW(model.parameters(), lr=1e-3)``.
    """

    _decoupled = True

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
        )
