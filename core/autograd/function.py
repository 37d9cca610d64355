"""Custom differentiable operations: subclass ``Function`` with static forward/backward.

Both of PyTorch's styles work: ``forward(ctx, *args)``, or ``forward(*args)`` plus
``setup_context(ctx, inputs, output)``. One ``backward`` call receives the gradients of all
outputs: each output's node hands its gradient to one shared node that runs ``backward``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from .engine import check_function_grads
from .grad_mode import no_grad, state
from .graph import _FREED, Node, edge, record

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """What ``forward`` and ``backward`` share: saved tensors and flags."""

    def __init__(self) -> None:
        self._saved: tuple = ()
        self._freed = False
        self._node: Node | None = None
        self.needs_input_grad: tuple[bool, ...] = ()
        self.non_differentiable: set[int] = set()
        self.dirty_tensors: tuple = ()
        self.materialize_grads = True
        # (tensor, version) of each saved tensor when forward returned: backward refuses to
        # read one that was modified in place since, as for built-in ops.
        self.saved_versions: tuple = ()

    def save_for_backward(self, *tensors: Any) -> None:
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple:
        """The saved tensors; refused once freed by a backward or modified in place since."""
        if self._freed:
            raise RuntimeError(_FREED)
        for t, v in self.saved_versions:
            if t._vc[0] != v:
                raise RuntimeError(self._node._modified_message(t, v) if self._node else "modified")
        return self._saved

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self.non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors: Any) -> None:
        self.dirty_tensors = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class _FunctionNode(Node):
    """A custom Function's node: ``release`` frees the ctx's saved tensors."""

    __slots__ = ()

    def release(self) -> None:
        ctx = self._ctx
        if isinstance(ctx, FunctionCtx):
            ctx._freed = True
            ctx._saved = ()
            ctx.saved_versions = ()

    @property
    def saved_tensors(self) -> tuple:
        return self._ctx.saved_tensors if isinstance(self._ctx, FunctionCtx) else ()


_classes: dict[str, type] = {}


def _node_class(name: str) -> type:
    cls = _classes.get(name)
    if cls is None:
        cls = _classes[name] = type(name, (_FunctionNode,), {"__slots__": ()})
    return cls


def _uses_setup_context(cls: type) -> bool:
    return getattr(cls, "setup_context", None) is not Function.setup_context


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

    generate_vmap_rule = False

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function"
        )

    @classmethod
    def apply(cls, *args: Any) -> Any:
        ctx = FunctionCtx()
        recording = state.enabled and any(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            if _uses_setup_context(cls):
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args)
        outs = out if isinstance(out, tuple) else (out,)
        _mark_dirty(ctx, outs, recording)
        if not recording:
            ctx.saved_versions = _versions(ctx._saved)
            return out
        for i, t in enumerate(ctx._saved):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type {type(t).__name__}"
                )
        outs = _wrap_outputs(cls, ctx, args, outs)
        ctx.saved_versions = _versions(ctx._saved)
        return outs if isinstance(out, tuple) else outs[0]


def _versions(saved: tuple) -> tuple:
    return tuple((t, t._vc[0]) for t in saved if isinstance(t, Tensor))


def _mark_dirty(ctx: FunctionCtx, outs: tuple, recording: bool) -> None:
    """Inputs modified in place must be returned; their version moves on, as in PyTorch."""
    for t in ctx.dirty_tensors:
        if not any(o is t for o in outs):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as output. "
                "The inputs that are modified inplace must all be outputs of the Function."
            )
        if recording and t.requires_grad and t.grad_fn is None and t._base is None:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        t._vc[0] += 1


def _wrap_outputs(cls: type, ctx: FunctionCtx, args: tuple, outs: tuple) -> tuple:
    """Give the differentiable outputs their nodes; returned inputs that are not dirty become views."""
    name = cls.__name__ + "Backward"
    dirty = {id(t) for t in ctx.dirty_tensors}
    outs = tuple(
        o.view_as(o) if isinstance(o, Tensor) and id(o) not in dirty and any(o is a for a in args) else o
        for o in outs
    )
    diff = [
        i
        for i, o in enumerate(outs)
        if isinstance(o, Tensor)
        and id(o) not in ctx.non_differentiable
        and (o.dtype.is_floating_point or o.dtype.is_complex)
    ]
    if not diff:
        return outs
    edges = tuple(edge(a) for a in args)  # before a dirty input gets its new node
    meta = _metas(args)
    node = _node_class(name)(_rule(cls, ctx, meta, outs), edges, ctx)
    ctx._node = node
    if len(diff) == 1:
        _attach(outs[diff[0]], node)
    else:
        for i in diff:
            _attach(outs[i], _node_class(name)(_pass(i, len(outs)), ((node, 0),), None))
    for t in ctx.dirty_tensors:
        if t._base is not None:
            from .._ops.inplace import rebase_view

            rebase_view(t)
    return outs


def _attach(o: Tensor, node: Node) -> None:
    o.grad_fn = node
    node._out_id = id(o)
    o._requires_grad = True


class _Grads:
    """The gradients of several outputs on their way to the shared node (the engine sums with ``+``)."""

    __slots__ = ("gs",)

    def __init__(self, gs: list) -> None:
        self.gs = gs

    def __add__(self, other: _Grads) -> _Grads:
        return _Grads([b if a is None else a if b is None else a + b for a, b in zip(self.gs, other.gs)])


def _pass(index: int, n: int) -> Callable[..., tuple]:
    def rule(node: Any, g: Any) -> tuple:
        gs: list = [None] * n
        gs[index] = g
        return (_Grads(gs),)

    return rule


def _metas(args: tuple) -> tuple:
    """Per argument: ``(shape, dtype, device)`` of a tensor requiring grad, False for another tensor,
    None for a non-tensor. Not the tensors themselves, which the graph must not keep alive."""
    return tuple(
        ((a._shape, a.dtype, a._device) if a.requires_grad else False) if isinstance(a, Tensor) else None
        for a in args
    )


def _rule(cls: type, ctx: FunctionCtx, metas: tuple, outs: tuple) -> Callable[..., tuple]:
    # Outputs are kept as (shape, dtype, device) so the node does not hold them alive.
    shapes = tuple((o._shape, o.dtype, o._device) if isinstance(o, Tensor) else None for o in outs)

    def rule(node: Any, g: Any) -> tuple:
        gs = g.gs if isinstance(g, _Grads) else [g]
        grads = []
        for gi, sh in zip(gs, shapes):
            if gi is None and ctx.materialize_grads and sh is not None:
                from .._creation import zeros

                gi = zeros(sh[0], dtype=sh[1], device=sh[2])
            grads.append(gi)
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


_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


def _refuse(node: Any, g: Any) -> tuple:
    raise RuntimeError(_TWICE)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``backward`` without recording a graph; differentiating its result again raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        needs = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        if not (state.enabled and needs):
            return outputs
        tup = outputs if isinstance(outputs, tuple) else (outputs,)
        wrapped = tuple(
            record("DelayedError", _refuse, o.detach(), tuple(needs)) if isinstance(o, Tensor) else o
            for o in tup
        )
        return wrapped if isinstance(outputs, tuple) else wrapped[0]

    return wrapper
