"""Graph nodes: one class per op, named as PyTorch names them (``MulBackward0``).

An op records a node only when grad mode is on and an input requires grad. The node holds
the derivative rule (a function written in ember ops, beside the op's definition), the
saved tensors with their versions, and ``next_functions`` edges to the inputs' nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.backends.dtypes import FLOAT as _FLOAT

from .._dtype import pt_name as _pt
from .grad_mode import state

__all__ = ["AccumulateGrad", "Node", "edge", "meta", "node_class", "record", "relabel"]

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class Node:
    """A recorded op. ``rule(node, grad)`` returns one gradient (or None) per input."""

    __slots__ = (
        "__weakref__",
        "_ctx",
        "_hooks",
        "_out_id",  # id() of the tensor this node produced (named in the version error)
        "_pre_hooks",
        "_real_out",  # the tensor it produced is real: a complex gradient reaching it is cut to its real part
        "_released",
        "_versions",
        "next_functions",
        "rule",
    )

    def __init__(self, rule: Callable[..., Any], nexts: tuple, ctx: Any) -> None:
        self.rule = rule
        self.next_functions = nexts
        self._ctx = ctx
        # Saved tensors (those in a tuple ctx) with their versions at save time.
        self._versions = _versions(ctx) if type(ctx) is tuple else ()
        self._released = False
        self._out_id = 0
        self._real_out = False
        self._pre_hooks: list | None = None
        self._hooks: list | None = None

    def name(self) -> str:
        return type(self).__name__

    @property
    def ctx(self) -> Any:
        """What the rule needs; refuses after release or after a saved tensor changed."""
        if self._released:
            raise RuntimeError(_FREED)
        for t, v in self._versions:
            if t._vc[0] != v:
                raise RuntimeError(self._modified_message(t, v))
        return self._ctx

    def _modified_message(self, t: Any, v: int) -> str:
        """PyTorch's text: names the tensor's type, shape and the op that produced it."""
        producer = self if id(t) == self._out_id else t.grad_fn
        which = f", which is output 0 of {_short(producer.name())}," if producer is not None else ""
        return (
            "one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [ember.{_pt(t.dtype)}Tensor {list(t._shape)}]{which} is at version {t._vc[0]}; "
            f"expected version {v} instead. Hint: enable anomaly detection to find the operation that "
            "failed to compute its gradient, with ember.autograd.set_detect_anomaly(True, check_nan=False)."
        )

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        return tuple([n is not None for n, _ in self.next_functions])  # a list: no generator frame

    def release(self) -> None:
        """Free saved tensors (after a backward without retain_graph)."""
        if self._versions:
            self._released = True
            self._ctx = None
            self._versions = ()

    def register_hook(self, fn: Callable[..., Any]) -> Any:
        """``fn(grad_inputs, grad_outputs)`` after this node ran."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return _Handle(self._hooks, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> Any:
        """``fn(grad_outputs)`` before this node runs; may return replacement grads."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return _Handle(self._pre_hooks, fn)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


def _short(name: str) -> str:
    """``AddBackward0`` -> ``Add``, as PyTorch names producers in the version error."""
    cut = name.rfind("Backward")
    return name[:cut] if cut > 0 else name


class AccumulateGrad(Node):
    """The sink for a leaf tensor: adds the incoming gradient into ``leaf.grad``."""

    __slots__ = ("variable",)

    def __init__(self, leaf: Any) -> None:
        super().__init__(_no_rule, (), None)
        self.variable = leaf


def _no_rule(node: Node, g: Any) -> tuple:
    return ()


class _Handle:
    """What ``register_hook`` returns: ``handle.remove()`` undoes the registration."""

    def __init__(self, hooks: list, fn: Any) -> None:
        self._hooks, self._fn = hooks, fn

    def remove(self) -> None:
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


_classes: dict[str, type] = {}


def node_class(name: str) -> type:
    """The Node subclass called ``name`` (created once), so ``type(t.grad_fn).__name__`` works."""
    cls = _classes.get(name)
    if cls is None:
        cls = type(name, (Node,), {"__slots__": ()})
        _classes[name] = cls
    return cls


def relabel(out: Any, name: str) -> Any:
    """Name a composite op's outermost node as PyTorch names the whole op (``ReluBackward0``).

    Only for nodes the op itself just created; the rule is unchanged.
    """
    n = out.grad_fn
    if n is not None:
        n.__class__ = node_class(name)
    return out


_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)


def meta(t: Any) -> dict:
    """The rarely-used autograd state of a tensor (hooks, retain_grad, its AccumulateGrad)."""
    m = t._meta
    if m is None:
        m = t._meta = {}
    return m


def edge(t: Any) -> tuple[Node | None, int]:
    if not getattr(t, "_requires_grad", False):
        return _NO_EDGE
    if t.grad_fn is not None:
        return (t.grad_fn, 0)
    return (_accumulator(t), 0)


_NO_EDGE: tuple[None, int] = (None, 0)
_new = object.__new__


def _accumulator(t: Any) -> AccumulateGrad:
    """The leaf's AccumulateGrad, created on first use and kept in its meta."""
    m = meta(t)
    acc = m.get("acc")
    if acc is None:
        acc = m["acc"] = AccumulateGrad(t)
    return acc


def _versions(ctx: tuple) -> tuple:
    """(tensor, version) of each Tensor in ``ctx``; an inference tensor cannot be saved."""
    out = []
    for t in ctx:
        vc = getattr(t, "_vc", None)
        if vc is not None:
            if t._meta is not None and t._meta.get("inference"):
                raise RuntimeError(_INFERENCE_SAVED)
            out.append((t, vc[0]))
    return tuple(out) if out else ()


def record(
    name: str, rule: Callable[..., Any], out: Any, inputs: tuple, saved: tuple = (), ctx: Any = None
) -> Any:
    # ``saved`` is unused: saved tensors are the Tensors in a tuple ``ctx`` (kept for callers).
    """Attach a ``name`` node to ``out`` if grad mode is on and an input requires grad.

    The hot path of every differentiable op: one loop over the inputs builds the edges.
    """
    if not state.enabled or out.dtype.category < _FLOAT:
        return out
    nexts = []
    wanted = False
    for t in inputs:
        if getattr(t, "_requires_grad", False):
            wanted = True
            fn = t.grad_fn
            if fn is None:  # a leaf: its AccumulateGrad (inlined: this loop runs per op)
                m = t._meta
                fn = m.get("acc") if m else None
                if fn is None:
                    fn = _accumulator(t)
            nexts.append((fn, 0))
        else:
            nexts.append(_NO_EDGE)
    if not wanted:
        return out
    # Node.__init__'s work, inlined: a class call with a Python __init__ costs a frame more.
    node: Node = _new(_classes.get(name) or node_class(name))
    out.grad_fn = node
    node.rule = rule
    node.next_functions = tuple(nexts)
    node._ctx = ctx
    versions: Any = ()
    if type(ctx) is tuple:  # _versions, inlined
        for t in ctx:
            vc = getattr(t, "_vc", None)
            if vc is not None:
                if t._meta is not None and t._meta.get("inference"):
                    raise RuntimeError(_INFERENCE_SAVED)
                versions = (*versions, (t, vc[0]))
    node._versions = versions
    node._released = False
    node._out_id = id(out)
    node._real_out = out.dtype.category == _FLOAT
    node._pre_hooks = None
    node._hooks = None
    out._requires_grad = True
    return out
