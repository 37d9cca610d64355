"""Recording one forward pass: an ``OpObserver`` that turns the public op calls into nodes.

The observer sees the outermost public op calls only, so ``F.linear`` is one node, not the
``matmul`` and ``add`` it runs. Three additions make a trace exportable:

- ``Tensor.__getitem__``/``__setitem__`` (indexing is a dunder, not a public op name) and the
  Python conversions (``__bool__``, ``__float__``, ``__int__``, ``__index__``) are added to the
  observer's table while a trace runs; converting a traced tensor to a Python value warns
  ``TracerWarning``, as PyTorch does: the value is baked into the trace.
- Modules that have a one-operator form elsewhere (``nn.LSTM``, ``nn.GRU``, ``nn.RNN``: ONNX
  LSTM/GRU/RNN) are recorded whole: their ``forward`` is wrapped for the trace, the ops inside
  are not recorded, and the node replays the module.
- An op whose tensor inputs are all constants (factories, masks built from sizes) is not
  recorded: its result is a constant of the trace.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

from ember import _op_trace
from ember._tensor import Tensor

from ._graph import Node, Value, resolve

__all__ = ["LEAF_MODULES", "Tracer", "TracerWarning"]


class TracerWarning(Warning):
    """A trace that may not generalise to other inputs (PyTorch's ``torch.jit.TracerWarning``)."""


_CONVERSIONS = {
    "Tensor.item": "number",
    "Tensor.__float__": "float",
    "Tensor.__int__": "integer",
    "Tensor.__index__": "index",
    "Tensor.__bool__": "boolean",
    "Tensor.tolist": "list",
}
_DUNDERS = ("__getitem__", "__setitem__", "__bool__", "__float__", "__int__", "__index__")
# Ops that return nothing but write a traced tensor: recorded so replay does the same.
_WRITES = {"Tensor.__setitem__"}


def _leaf_types() -> tuple[type, ...]:
    from ember.nn.modules.rnn import GRU, LSTM, RNN

    return (LSTM, GRU, RNN)


LEAF_MODULES = "nn.LSTM, nn.GRU, nn.RNN"


class Tracer(_op_trace.OpObserver):
    """Maps each tensor seen (by id; every one is kept alive, so ids are not reused) to its
    Value and appends a Node per recorded op call."""

    def __init__(self, params: dict[int, str]) -> None:
        self.params = params
        self.values: dict[int, Value] = {}
        self.keep: list[Any] = []
        self.nodes: list[Node] = []
        self.pending: list[tuple[str, Callable, dict[str, Any]]] = []
        self.suspended = 0
        self._added: list[Any] = []
        self._wrapped: list[Any] = []

    # -- values ----------------------------------------------------------------------------
    def add_input(self, tensor: Any, index: int) -> Value:
        v = Value("input", f"input{index}" if index else "input", tensor, index)
        self._remember(tensor, v)
        return v

    def _remember(self, tensor: Any, value: Value) -> None:
        self.values[id(tensor)] = value
        self.keep.append(tensor)

    def value_of(self, tensor: Any) -> Value:
        v = self.values.get(id(tensor))
        if v is None:
            name = self.params.get(id(tensor))
            v = Value("param", name, tensor) if name else Value("const", f"c{len(self.keep)}", tensor)
            self._remember(tensor, v)
        return v

    def wrap(self, obj: Any) -> Any:
        """``obj`` with each tensor replaced by its Value."""
        if isinstance(obj, Tensor):
            return self.value_of(obj)
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return type(obj)(*(self.wrap(o) for o in obj))
        if isinstance(obj, (tuple, list)):
            return type(obj)(self.wrap(o) for o in obj)
        if isinstance(obj, dict):
            return {k: self.wrap(v) for k, v in obj.items()}
        return obj

    def _outputs(self, result: Any, static: bool) -> Any:
        if isinstance(result, Tensor):
            v = Value("node", f"t{len(self.keep)}", result)
            v.static = static
            self._remember(result, v)
            return v
        if isinstance(result, tuple) and hasattr(result, "_fields"):
            return type(result)(*(self._outputs(r, static) for r in result))
        if isinstance(result, (tuple, list)):
            return type(result)(self._outputs(r, static) for r in result)
        return result

    # -- recording -------------------------------------------------------------------------
    def op_enter(self, name: str, arguments: dict[str, Any]) -> None:
        # The observer has told apart ops one factory makes (``exp``, ``tanh``) by their closures.
        self.pending.append((name, resolve(name), arguments))
        kind = _CONVERSIONS.get(name)
        if kind and not self.suspended:
            v = self.values.get(id(arguments.get("self", arguments.get("input"))))
            if v is not None and v.kind != "const":
                warnings.warn(
                    f"Converting a tensor to a Python {kind} might cause the trace to be incorrect. "
                    "We can't record the data flow of Python values, so this value will be treated "
                    "as a constant in the future. This means that the trace might not generalize to "
                    "other inputs!",
                    TracerWarning,
                    stacklevel=3,
                )

    def op_exit(self, name: str, result: Any) -> None:
        name, fn, arguments = self.pending.pop()
        if self.suspended or name in _CONVERSIONS:
            return
        self.record(name, fn, inspect.signature(_op_trace._unwrap(fn)), arguments, result)

    def record(
        self,
        name: str,
        fn: Callable,
        sig: inspect.Signature,
        arguments: dict,
        result: Any,
        module: Any = None,
    ) -> None:
        has_tensor = _has_tensor(result)
        if not has_tensor and name not in _WRITES:
            return  # sizes, dtypes, Python numbers: constants of the trace
        args = [
            (p, param.kind, self.wrap(arguments[p])) for p, param in sig.parameters.items() if p in arguments
        ]
        inputs = [v for _, _, a in args for v in _values(a)]
        if all(v.kind == "const" for v in inputs):
            self.wrap(result)  # a constant of the trace: nothing it reads is an input or a parameter
            return
        outputs = self._outputs(result, static=all(v.static for v in inputs))
        self.nodes.append(Node(name, fn, args, outputs, module))

    # -- entering --------------------------------------------------------------------------
    def __enter__(self) -> Tracer:  # noqa: PYI034 - typing.Self needs Python 3.11
        table = _op_trace.public_ops()
        for dunder in _DUNDERS:
            code = _op_trace._unwrap(getattr(Tensor, dunder)).__code__
            if code not in table:
                table[code] = f"Tensor.{dunder}"
                self._added.append(code)
        super().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        table = _op_trace.public_ops()
        for code in self._added:
            table.pop(code, None)
        self._added.clear()
        for module in self._wrapped:
            module.__dict__.pop("forward", None)
        self._wrapped.clear()

    def wrap_leaves(self, root: Any) -> None:
        """Record each LSTM/GRU/RNN under ``root`` as one node (see the module docstring)."""
        for prefix, module in root.named_modules():
            if isinstance(module, _leaf_types()) and "forward" not in module.__dict__:
                object.__setattr__(module, "forward", self._leaf_forward(module, prefix))
                self._wrapped.append(module)

    def _leaf_forward(self, module: Any, prefix: str) -> Callable:
        original = type(module).forward.__get__(module)
        sig = inspect.signature(original)

        def forward(*args: Any, **kwargs: Any) -> Any:
            if self.suspended:
                return original(*args, **kwargs)
            self.suspended += 1
            try:
                result = original(*args, **kwargs)
            finally:
                self.suspended -= 1
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            self.record(f"nn.{type(module).__name__}", original, sig, dict(bound.arguments), result, module)
            return result

        return forward


def _has_tensor(obj: Any) -> bool:
    if isinstance(obj, Tensor):
        return True
    if isinstance(obj, (tuple, list)):
        return any(_has_tensor(o) for o in obj)
    return False


def _values(obj: Any) -> list[Value]:
    if isinstance(obj, Value):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [v for o in obj for v in _values(o)]
    if isinstance(obj, dict):
        return [v for o in obj.values() for v in _values(o)]
    return []
