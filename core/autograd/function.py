"""Custom differentiable operations: subclass ``Function`` with static forward/backward."""

from __future__ import annotations

from typing import Any

from .._creation import zeros_like
from .._tensor import Tensor
from .engine import check_function_grads
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
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args)
        ctx.saved_versions = tuple((t, t._vc[0]) for t in ctx.saved_tensors if hasattr(t, "_vc"))
        if not state.enabled or not any(ctx.needs_input_grad):
            return out
        outs = out if isinstance(out, tuple) else (out,)
        metas = _metas(args)
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and id(o) not in ctx.non_differentiable:
                if o._base is not None or any(o is a for a in args):
                    o = o.view_as(o) if hasattr(o, "view_as") else o
                record(cls.__name__ + "Backward", _rule(cls, ctx, i, outs, metas), o, args, (), ctx)
                if isinstance(out, tuple):
                    outs = outs[:i] + (o,) + outs[i + 1 :]
        return outs if isinstance(out, tuple) else outs[0]


def _metas(args: tuple) -> tuple:
    """Per argument: ``(shape, dtype, device)`` of a tensor requiring grad, False for another tensor,
    None for a non-tensor. Not the tensors themselves, which the graph must not keep alive."""
    return tuple(
        ((a._shape, a.dtype, a._device) if a.requires_grad else False) if isinstance(a, Tensor) else None
        for a in args
    )


def _rule(cls: type, ctx: FunctionCtx, index: int, outs: tuple, metas: tuple) -> Any:
    def rule(node: Any, g: Any) -> tuple:
        for t, v in ctx.saved_versions:
            if t._vc[0] != v:
                raise RuntimeError(node._modified_message(t, v))
        grads = [g if i == index else zeros_like(o) for i, o in enumerate(outs)]
        res = cls.backward(ctx, *grads)  # type: ignore[attr-defined]
        return _checked(cls.__name__ + "Backward", res, metas)

    return rule


def _checked(name: str, res: Any, metas: tuple) -> tuple:
    """What ``backward`` returned, checked as PyTorch does: one gradient (or None) per forward argument."""
    res = res if isinstance(res, tuple) else (res,)
    n = len(metas)
    if len(res) > n and all(r is None for r in res[n:]):
        res = res[:n]  # extra Nones are allowed
    if len(res) != n:
        raise RuntimeError(
            f"function {name} returned an incorrect number of gradients (expected {n}, got {len(res)})"
        )
    for i, (r, meta) in enumerate(zip(res, metas)):
        if r is None:
            continue
        if meta is None:
            raise RuntimeError(
                f"function {name} returned a gradient different than None at position {i + 1}, but the "
                "corresponding forward input was not a Variable"
            )
        if not isinstance(r, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")  # noqa: TRY004 - as PyTorch
    return check_function_grads(name, metas, res)
