"""Hook handles and the simplified full backward hook of ``Module``."""

from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Any

from ..._tensor import Tensor
from ...autograd.grad_mode import state as _grad

__all__ = ["BackwardHookRunner", "RemovableHandle"]


class RemovableHandle:
    """What ``register_*_hook`` returns: ``handle.remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, *dicts: OrderedDict) -> None:
        self.id = next(RemovableHandle._ids)
        self._dicts = dicts

    def remove(self) -> None:
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _tensors(x: Any) -> list[Tensor]:
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for t in x if isinstance(t, Tensor)]
    return []


class BackwardHookRunner:
    """Calls ``hook(module, grad_input, grad_output)`` once per backward through a call.

    Inputs that require grad pass through an identity node, so the gradient arriving at
    them is the module's ``grad_input``; tensor hooks on the outputs collect ``grad_output``.
    """

    def __init__(self, module: Any, hooks: list) -> None:
        self.module = module
        self.hooks = hooks
        self.grad_output: list[Any] = []
        self.grad_input: list[Any] = []
        self.pending_in = 0
        self.pending_out = 0

    def wrap_inputs(self, args: tuple) -> tuple:
        out = []
        slots: list[Any] = []
        recording = _grad.enabled
        for a in args:
            if recording and isinstance(a, Tensor) and a.requires_grad:
                a = a.view_as(a)
                a.register_hook(self._in_hook(len(slots)))
                slots.append(a)
            out.append(a)
        self.grad_input = [None] * max(len(slots), 1)
        self.n_in = len(slots)
        return tuple(out)

    def watch_outputs(self, result: Any) -> None:
        outs = [t for t in _tensors(result) if t.requires_grad] if _grad.enabled else []
        self.grad_output = [None] * len(outs)
        self.pending_out = len(outs)
        for i, t in enumerate(outs):
            t.register_hook(self._out_hook(i))

    def _out_hook(self, i: int) -> Any:
        def hook(g: Tensor) -> None:
            self.grad_output[i] = g
            self.pending_out -= 1
            self.pending_in = self.n_in
            if self.pending_out == 0 and self.n_in == 0:
                self._call((None,))

        return hook

    def _in_hook(self, i: int) -> Any:
        def hook(g: Tensor) -> Any:
            self.grad_input[i] = g
            self.pending_in -= 1
            if self.pending_in == 0:
                new = self._call(tuple(self.grad_input))
                if new is not None:
                    return new[i]
            return None

        return hook

    def _call(self, grad_input: tuple) -> Any:
        result = None
        for hook in self.hooks:
            r = hook(self.module, grad_input if result is None else result, tuple(self.grad_output))
            if r is not None:
                result = tuple(r)
                if len(result) != len(grad_input):
                    raise RuntimeError(
                        f"Backward hook returned an invalid number of grad_input, got {len(result)}, "
                        f"but expected {len(grad_input)}"
                    )
        return result
