"""The recorded graph: values, op nodes, and replay.

A trace is a straight line of public op calls (``nn.functional.linear``, ``add``, ...). Each
tensor the forward pass touched is a ``Value``: a graph input, a parameter or buffer of the
traced module (kept live, so replay sees training updates), a constant captured at trace time,
or the output of a node. Replay runs the same public functions again on new inputs, so every
op replays, mapped or not; exporters read the nodes and map them (``ember.onnx``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor

__all__ = ["Graph", "Node", "Value", "resolve"]


class Value:
    """One tensor of the trace. ``kind``: input, param, const or node; ``static``: does not
    depend on any graph input (params, constants and ops on them only)."""

    __slots__ = ("dtype", "index", "kind", "name", "shape", "static", "tensor")

    def __init__(self, kind: str, name: str, example: Any, index: int = -1) -> None:
        self.kind, self.name, self.index = kind, name, index
        self.shape: tuple[int, ...] = tuple(example.shape)
        self.dtype = example.dtype
        self.static = kind != "input"
        # params/consts: the tensor itself (a param stays live); inputs/nodes: None.
        self.tensor = example if kind in ("param", "const") else None

    def __repr__(self) -> str:
        return f"%{self.name}"


class Node:
    """One op call: the public name, the function replay calls, its arguments (parameter name,
    parameter kind, value with Values in place of tensors) and its outputs (same shape as the
    result, Values in place of tensors). ``module`` is set for a module recorded whole (LSTM)."""

    __slots__ = ("args", "fn", "module", "name", "outputs")

    def __init__(self, name: str, fn: Callable, args: list, outputs: Any, module: Any = None) -> None:
        self.name, self.fn, self.args, self.outputs, self.module = name, fn, args, outputs, module

    def arg(self, name: str, default: Any = None, pos: int | None = None) -> Any:
        """An argument by parameter name, else by position, else ``default``."""
        for i, (n, _, v) in enumerate(self.args):
            if n == name or (pos is not None and i == pos):
                return v
        return default

    def output_values(self) -> list[Value]:
        return [v for v in flatten(self.outputs) if isinstance(v, Value)]

    def input_values(self) -> list[Value]:
        return [v for _, _, a in self.args for v in flatten(a) if isinstance(v, Value)]

    def call(self, env: dict[Value, Any]) -> Any:
        pos: list[Any] = []
        kw: dict[str, Any] = {}
        for name, kind, value in self.args:
            value = substitute(value, env)
            if kind == inspect.Parameter.VAR_POSITIONAL:
                pos.extend(value)
            elif kind == inspect.Parameter.VAR_KEYWORD:
                kw.update(value)
            elif kind == inspect.Parameter.KEYWORD_ONLY:
                kw[name] = value
            else:
                pos.append(value)
        return self.fn(*pos, **kw)

    def __str__(self) -> str:
        shown = ", ".join(f"{n}={a!r}" for n, _, a in self.args)
        return f"{self.outputs!r} = {self.name}({shown})"


def flatten(obj: Any) -> list[Any]:
    """Leaves of nested tuples, lists and dict values, in order."""
    if isinstance(obj, (tuple, list)):
        return [leaf for item in obj for leaf in flatten(item)]
    if isinstance(obj, dict):
        return [leaf for item in obj.values() for leaf in flatten(item)]
    return [obj]


def substitute(obj: Any, env: dict[Value, Any]) -> Any:
    """``obj`` with each Value replaced by its tensor in ``env`` (or its own, for params and
    constants)."""
    if isinstance(obj, Value):
        return env.get(obj, obj.tensor)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(substitute(o, env) for o in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(substitute(o, env) for o in obj)
    if isinstance(obj, dict):
        return {k: substitute(v, env) for k, v in obj.items()}
    return obj


def bind(template: Any, result: Any, env: dict[Value, Any]) -> None:
    """Store the tensors of ``result`` under the Values at the same places of ``template``."""
    if isinstance(template, Value):
        env[template] = result
    elif isinstance(template, (tuple, list)):
        for t, r in zip(template, result, strict=False):
            bind(t, r, env)
    elif isinstance(template, dict):
        for k, t in template.items():
            bind(t, result[k], env)


@functools.cache
def resolve(name: str) -> Callable:
    """The public function a recorded op name stands for."""
    import ember  # cycle: ember (the namespaces are read at run time)

    if name.startswith("Tensor."):
        return getattr(Tensor, name[7:])
    module: Any = ember
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    return getattr(module, leaf)


class Graph:
    """Inputs (flattened, in order), the nodes, and the outputs' structure (Values in place of
    tensors). ``run`` replays the nodes on new input tensors."""

    def __init__(self, inputs: list[Value], nodes: list[Node], outputs: Any, params: dict[int, str]) -> None:
        self.inputs, self.nodes, self.outputs, self.params = inputs, nodes, outputs, params

    def run(self, flat_inputs: list[Any]) -> tuple[Any, dict[Value, Any]]:
        """The outputs for these input tensors, and every value computed on the way."""
        if len(flat_inputs) != len(self.inputs):
            raise RuntimeError(
                f"traced graph expects {len(self.inputs)} input tensors, got {len(flat_inputs)}"
            )
        env: dict[Value, Any] = dict(zip(self.inputs, flat_inputs, strict=True))
        for node in self.nodes:
            bind(node.outputs, node.call(env), env)
        return substitute(self.outputs, env), env

    def __str__(self) -> str:
        lines = [f"graph({', '.join(repr(v) for v in self.inputs)}):"]
        lines += [f"  {node}" for node in self.nodes]
        lines.append(f"  return {self.outputs!r}")
        return "\n".join(lines)
