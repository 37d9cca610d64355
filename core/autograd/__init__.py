"""ember.autograd: reverse-mode differentiation over the recorded graph."""

from __future__ import annotations

from typing import Any

from . import functional, graph
from .anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import check_root_grad, run_backward
from .function import Function, FunctionCtx
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck

__all__ = [
    "Function",
    "FunctionCtx",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "profiler",
    "set_detect_anomaly",
    "set_grad_enabled",
]


def _as_list(x: Any) -> list:
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _root_grads(outputs: list, given: Any, create_graph: bool) -> list:
    from .._creation import ones_like

    grads = _as_list(given)
    out = []
    for i, t in enumerate(outputs):
        if given is not None and i >= len(grads):
            raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
        g = grads[i] if i < len(grads) else None
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t.dtype}"
                )
            g = ones_like(t)
        else:
            g = check_root_grad(i, g, t)
        out.append(g)
    return out


def _check_requires_grad(outputs: list) -> None:
    for i, t in enumerate(outputs):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (or ``inputs``)."""
    outs = _as_list(tensors)
    _check_requires_grad(outs)
    grads = _root_grads(outs, grad_tensors, create_graph)
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is not None:
        ins = _as_list(inputs)
        capture = {id(graph.edge(t)[0]): i for i, t in enumerate(ins) if graph.edge(t)[0] is not None}
        got = run_backward(outs, grads, retain, create_graph, capture, accumulate=False)
        for t, g in zip(ins, got):
            if g is not None:
                _accumulate_into(t, g, create_graph)
        return
    run_backward(outs, grads, retain, create_graph)


def _accumulate_into(t: Any, g: Any, create_graph: bool) -> None:
    g = g if create_graph else g.detach()
    t._grad = g if t._grad is None else t._grad + g


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    Example: ``g, = ember.autograd.grad(y, x, create_graph=True)`` for higher orders.
    """
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    _check_requires_grad(outs)
    for i, t in enumerate(ins):
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _root_grads(outs, grad_outputs, create_graph)
    retain = create_graph if retain_graph is None else retain_graph
    capture = {}
    for i, t in enumerate(ins):
        capture[id(graph.edge(t)[0])] = i
    got = run_backward(outs, grads, retain, create_graph, capture, accumulate=False)
    result = [None] * len(ins)
    for i, t in enumerate(ins):
        g = got[capture[id(graph.edge(t)[0])]]
        if g is None:
            if materialize_grads:
                from .._creation import zeros_like

                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
        result[i] = g if g is None or create_graph else g.detach()
    return tuple(result)


def __getattr__(name: str) -> Any:
    # ``ember.autograd.profiler`` (and ember.profiler behind it) loads on first use.
    if name == "profiler":
        import importlib

        return importlib.import_module(f"{__name__}.profiler")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
