"""``ember.jit.trace``: record one forward pass as a graph of public op calls, and replay it.

The graph (``ember.jit._graph.Graph``) is the base for export (``ember.onnx.export``) and for
graph-level work by backends later. Like PyTorch's tracer it records what ran for the example
inputs: Python control flow is baked in, and converting a traced tensor to a Python value
(``bool(t)``, ``t.item()``, ``t.tolist()``) warns ``TracerWarning``. Shapes read with
``size()``/``shape`` are constants of the trace.

``ember.jit.script`` (``_script``) is TorchScript's entry point served by ``ember.compile``'s
capture-and-replay; ``ember.jit.save``/``load`` (``_save``) keep a scripted module as data.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn.modules.module import Module

from ._graph import Graph, Node, Value, flatten
from ._save import load, save
from ._script import RecursiveScriptModule, ScriptFunction, ScriptGraph, ScriptModule, script, script_method
from ._tracer import Tracer, TracerWarning

__all__ = [
    "Graph",
    "Node",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptGraph",
    "ScriptModule",
    "TracedGraph",
    "TracerWarning",
    "Value",
    "is_scripting",
    "is_tracing",
    "load",
    "save",
    "script",
    "script_method",
    "trace",
]


def _param_names(func: Any) -> dict[int, str]:
    owner = func if isinstance(func, Module) else getattr(func, "__self__", None)
    if not isinstance(owner, Module):
        return {}
    names: dict[int, str] = {}
    for name, t in [*owner.named_parameters(), *owner.named_buffers()]:
        names.setdefault(id(t), name)
    return names


def _as_args(example_inputs: Any) -> tuple:
    if example_inputs is None:
        return ()
    return example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)


def _tensors(obj: Any) -> list[Any]:
    return [t for t in flatten(obj) if isinstance(t, Tensor)]


def record(func: Callable, args: tuple, kwargs: dict | None = None) -> tuple[Graph, Any]:
    """Run ``func(*args, **kwargs)`` once under a tracer: the graph and the result."""
    kwargs = kwargs or {}
    tracer = Tracer(_param_names(func))
    inputs = [tracer.add_input(t, i) for i, t in enumerate(_tensors((args, kwargs)))]
    owner = func if isinstance(func, Module) else getattr(func, "__self__", None)
    _tracing.append(tracer)
    try:
        with tracer:
            if isinstance(owner, Module):
                tracer.wrap_leaves(owner)
            result = func(*args, **kwargs)
    finally:
        _tracing.pop()
    outputs = tracer.wrap(result)
    return Graph(inputs, tracer.nodes, outputs, dict(tracer.params)), result


_tracing: list[Tracer] = []


def is_tracing() -> bool:
    """True while ``trace`` (or ``ember.onnx.export``) records a forward pass."""
    return bool(_tracing)


def is_scripting() -> bool:
    """Always False: ember has no TorchScript compiler (code that asks takes its eager path)."""
    return False


class TracedGraph:
    """A traced function or module: call it like the original (tensors in the same places);
    it replays the recorded ops. ``graph`` is the recorded Graph."""

    def __init__(self, graph: Graph, original: Callable) -> None:
        self.graph = graph
        self.original = original

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.graph.run(_tensors((args, kwargs)))[0]

    forward = __call__

    @property
    def code(self) -> str:
        return str(self.graph)

    def __repr__(self) -> str:
        return f"TracedGraph(\n{self.graph}\n)"


def _close(a: Any, b: Any, tol: float) -> bool:
    ta, tb = _tensors(a), _tensors(b)
    if len(ta) != len(tb):
        return False
    return all(
        x.shape == y.shape and bool((x - y).abs().le(tol + tol * y.abs()).all()) for x, y in zip(ta, tb)
    )


def trace(
    func: Callable,
    example_inputs: Any = None,
    optimize: Any = None,
    check_trace: bool = True,
    check_inputs: list | None = None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    example_kwarg_inputs: dict | None = None,
) -> TracedGraph:
    """Trace ``func`` (a function or a Module) on ``example_inputs`` (a tensor or a tuple of
    arguments). With ``check_trace``, the trace is replayed on ``check_inputs`` (default: the
    example) and compared with ``func``; a mismatch warns ``TracerWarning`` (a Python branch
    or baked value made the trace input-dependent)."""
    if not callable(func):
        raise TypeError(f"trace expected a function or Module, got {type(func).__name__}")
    args = _as_args(example_inputs)
    with no_grad():
        graph, _ = record(func, args, example_kwarg_inputs)
    traced = TracedGraph(graph, func)
    if check_trace:
        for check in check_inputs or [args]:
            check = _as_args(check)
            with no_grad():
                expected = func(*check)
                got = traced(*check)
            if not _close(expected, got, check_tolerance):
                warnings.warn(
                    "Output nr 1. of the traced function does not match the corresponding output of "
                    "the Python function. Detailed error:\nthe trace depends on its inputs through "
                    "Python control flow or values converted from tensors",
                    TracerWarning,
                    stacklevel=2,
                )
                break
    return traced
