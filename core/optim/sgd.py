"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from typing import Any, cast

from .._creation import empty_like
from .._tensor import Tensor
from .optimizer import Optimizer, check_fused, check_range, fused_kernel, run_foreach, run_fused, state_fits

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (PyTorch's algorithm).

    For each parameter ``p`` with gradient ``g``::

        g = -g if maximize
        g = g + weight_decay * p                       if weight_decay != 0
        b = g (first step),  else  b = momentum * b + (1 - dampening) * g
        g = g + momentum * b if nesterov else b        if momentum != 0
        p = p - lr * g

    The backend's fused ``sgd_update`` kernel runs the same formula in one call when it has
    one (see ``fused_kernel``); its ``sgd_update_foreach`` runs a whole parameter group in one
    call with ``foreach=True`` (the numbers are the same either way).

    Example: ``opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)``.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_range("learning rate", lr)
        check_range("momentum value", momentum)
        check_range("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_fused(fused, foreach, differentiable)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)

    _foreach_op = "sgd_update_foreach"

    def _foreach(self, params: list[Tensor], group: dict[str, Any]) -> list[Tensor]:
        momentum = group["momentum"]
        ps, grads, bufs, firsts, rest = [], [], [], [], []
        for p in params:
            state = self.state.get(p)
            buf = state.get("momentum_buffer") if state is not None and momentum != 0 else None
            if not state_fits(p, buf):
                rest.append(p)
                continue
            first = momentum != 0 and buf is None
            if first:
                buf = empty_like(p)
                self.state[p] = {"momentum_buffer": buf} if state is None else state
                self.state[p]["momentum_buffer"] = buf
            ps.append(p)
            grads.append(p.grad)
            bufs.append(buf)
            firsts.append(first)
        if ps:
            params_ = (group["lr"], momentum, group["dampening"], group["weight_decay"], group["nesterov"])
            # run_foreach only reads its lists; list invariance alone keeps list[Tensor] from matching
            lists = (cast("list[Tensor | None]", ps), grads, bufs)
            run_foreach(ps[0]._be, self._foreach_op, lists, (*params_, group["maximize"], tuple(firsts)))
        return rest

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        k = fused_kernel(p, grad, group, "sgd_update")
        if k is None or not self._fused(k, p, grad, state, group):
            self._update_ops(p, grad, state, group)

    def _fused(self, k: Any, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> bool:
        momentum = group["momentum"]
        buf = state.get("momentum_buffer") if momentum != 0 else None
        first = momentum != 0 and buf is None
        if first:
            buf = empty_like(p)
        elif buf is not None and (buf.dtype is not p.dtype or buf._shape != p._shape):
            return False
        params = (group["lr"], momentum, group["dampening"], group["weight_decay"], group["nesterov"])
        if not run_fused(p, k, (p, grad, buf), (*params, group["maximize"], first)):
            return False
        if first:
            state["momentum_buffer"] = buf
        return True

    def _update_ops(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        momentum, wd = group["momentum"], group["weight_decay"]
        if group["maximize"]:
            grad = -grad
        if wd != 0:
            grad = grad.add(p, alpha=wd)
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(grad, alpha=-group["lr"])
