"""Custom differentiable operations: subclass ``Function`` with static forward/backward."""

from __future__ import annotations

from typing import Any

from .grad_mode import no_grad, state
from .graph import record

__all__ = ["Function", "FunctionCtx"]


class FunctionCtx:
    """What ``forward`` and ``backward`` share: saved tensors and flags."""

    def __init__(self) -> None:
        self.saved_tensors: tuple = ()
        self.needs_input_grad: tuple[bool, ...] = ()
        self.non_differentiable: set[int] = set()
        self.materialize_grads = True
        # (tensor, version) of each saved tensor when forward returned: backward refuses to
        # read one that was modified in place since, as for built-in ops.
        self.saved_versions: tuple = ()

    def save_for_backward(self, *tensors: Any) -> None:
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self.non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors: Any) -> None:
        return None

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class Function:
    """Define ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call ``Cls.apply(*args)``.

    Example::

        class Exp(ember.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp(); ctx.save_for_backward(y); return y
            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors; return g * y
    """

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function"
        )

    @classmethod
    def apply(cls, *args: Any) -> Any:
        from .._tensor import Tensor

        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args)
        ctx.saved_versions = tuple((t, t._vc[0]) for t in ctx.saved_tensors if hasattr(t, "_vc"))
        if not state.enabled or not any(ctx.needs_input_grad):
            return out
        outs = out if isinstance(out, tuple) else (out,)
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and id(o) not in ctx.non_differentiable:
                if o._base is not None or any(o is a for a in args):
                    o = o.view_as(o) if hasattr(o, "view_as") else o
                record(cls.__name__ + "Backward", _rule(cls, ctx, i, len(outs), outs), o, args, (), ctx)
                if isinstance(out, tuple):
                    outs = outs[:i] + (o,) + outs[i + 1 :]
        return outs if isinstance(out, tuple) else outs[0]


def _rule(cls: type, ctx: FunctionCtx, index: int, n_out: int, outs: tuple) -> Any:
    def rule(node: Any, g: Any) -> tuple:
        from .._creation import zeros_like

        for t, v in ctx.saved_versions:
            if t._vc[0] != v:
                raise RuntimeError(node._modified_message(t, v))
        grads = [g if i == index else zeros_like(o) for i, o in enumerate(outs)]
        res = cls.backward(ctx, *grads)  # type: ignore[attr-defined]
        res = res if isinstance(res, tuple) else (res,)
        n = len(node.next_functions)
        if len(res) < n:
            res = res + (None,) * (n - len(res))
        if len(res) > n:
            if any(r is not None for r in res[n:]):
                raise RuntimeError(
                    f"function {cls.__name__}Backward returned an incorrect number of gradients (expected {n}, got {len(res)})"
                )
            res = res[:n]
        return res

    return rule
