"""``ember.jit.script``: PyTorch's TorchScript entry point, served by ``ember.compile``'s capture.

ember has no TorchScript compiler: ``script(fn)`` returns a ``ScriptFunction`` and
``script(module)`` a ``RecursiveScriptModule`` whose calls go through a ``CompiledFunction``
(``ember.compiler``): the first call per input signature runs eagerly and is captured, later
calls replay the captured kernel calls. So Python control flow is specialised per signature
(shapes, non-tensor argument values, grad mode, the module's ``training`` flag), not compiled.

``.code`` and ``.graph`` show what was captured. PyTorch fills them when ``script`` returns;
ember has nothing to show until the function has run once, so before the first call they say
so (a comment, not an error, so ``print(scripted.code)`` in tutorial code still works). Pass
``example_inputs`` (PyTorch's profile-directed typing argument, which also runs the function)
to capture at ``script`` time.

A scripted module shares the original's parameters, buffers and submodules (as PyTorch's does)
and its ``state_dict`` keys are the original's; ``train()``/``eval()`` on it also set the
original's flag, since the replayed forward is the original's.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from ember.compiler._compiled import CompiledFunction
from ember.nn.modules.module import Module

__all__ = [
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptGraph",
    "ScriptModule",
    "script",
    "script_method",
]

_NOTHING = (
    "# nothing captured yet: ember.jit.script captures on the first call (per input signature);\n"
    "# call it once, or pass example_inputs=[(x, ...)] to ember.jit.script\n"
)
_KERNEL = re.compile(r"\bK(\d+)\['(\w+)'\]\(")
_INPUT = re.compile(r"\bI\[(\d+)\]\._data\b")
_VALUE = re.compile(r"\b(v\d+)\b")


def _compiled(fn: Callable) -> CompiledFunction:
    """A CompiledFunction through ``ember.compile`` (so ``ember.compiler.reset()`` reaches it)."""
    from ember import compiler

    cf = compiler.compile(fn)
    assert isinstance(cf, CompiledFunction)
    cf.warmup = 0  # a scripted function shows its code from the first call, as TorchScript's at once
    return cf


def _signature(inputs: list[tuple]) -> str:
    """The tensor arguments of a captured signature, as ``float32(2, 3, cpu)``."""
    parts: list[str] = []
    for shape, dtype, device, grad in inputs:
        name = str(dtype).rsplit(".", 1)[-1]
        dims = ", ".join(str(n) for n in shape)
        parts.append(
            f"%I{len(parts)} : {name}({dims}{', ' if dims else ''}{device}{', grad' if grad else ''})"
        )
    return ", ".join(parts)


class ScriptGraph:
    """What ``.graph`` shows: per captured signature, the kernel calls replay makes, in order.

    ``nodes()`` lists the forward's kernel names (``"matmul"``, ``"add"``, ...) of the latest
    capture; ``str()`` shows every signature, forward then backward, one call a line."""

    def __init__(self, cf: CompiledFunction | None) -> None:
        self._sections: list[tuple[str, str, dict[str, Any]]] = []
        if cf is None:
            return
        for plans in cf._cache.values():
            for plan in plans:
                sig = _signature(plan.inputs)
                for part, prog in (("forward", plan.forward), ("backward", plan.backward)):
                    if prog is not None:
                        self._sections.append((f"{part}({sig})", prog.source, prog.names))
                if plan.forward is None:
                    self._sections.append((f"eager({sig})", "", {"why": plan.why}))

    def nodes(self, which: str = "forward") -> list[str]:
        """The kernel names of the latest ``which`` ("forward" or "backward") capture."""
        for head, source, _ in reversed(self._sections):
            if head.startswith(which + "("):
                return [m.group(2) for m in _KERNEL.finditer(source)]
        return []

    def __str__(self) -> str:
        if not self._sections:
            return _NOTHING
        out = []
        for head, source, names in self._sections:
            out.append(f"graph {head}:")
            if not source:
                out.append(f"  # runs eagerly: {names['why']}")
            for line in source.splitlines()[1:]:
                line = line.strip()
                if line.startswith(("del ", "if ")):
                    continue
                line = _KERNEL.sub(functools.partial(_kernel_name, names), line)
                out.append("  " + _VALUE.sub(r"%\1", _INPUT.sub(r"%I\1", line)))
        return "\n".join(out) + "\n"

    __repr__ = __str__


def _kernel_name(names: dict[str, Any], m: re.Match[str]) -> str:
    """``K0['add'](`` as ``cpu::add(``: the backend's name, then the kernel's."""
    loaded = names.get("L" + m.group(1))
    return f"{getattr(loaded, 'name', 'kernel')}::{m.group(2)}("


def _code(cf: CompiledFunction | None) -> str:
    code = "" if cf is None else cf.code
    return code or _NOTHING


def _run_examples(call: Callable, examples: Any, keys: tuple) -> None:
    """Capture on ``example_inputs``: a list of argument tuples, or a dict of them keyed by
    the function, the module or its ``forward`` (PyTorch's two forms)."""
    if examples is None:
        return
    if isinstance(examples, dict):
        found = [v for k, v in examples.items() if any(k is x or k == x for x in keys)]
        examples = found[0] if found else []
    if not isinstance(examples, (list, tuple)):
        raise TypeError("example_inputs must be a list of tuples of arguments (or a dict of them)")
    for ex in examples:
        call(*(ex if isinstance(ex, tuple) else (ex,)))


class ScriptFunction:
    """``ember.jit.script(fn)``: call it as ``fn``; ``.code``/``.graph`` show the capture."""

    def __init__(self, fn: Callable) -> None:
        self._compiled = _compiled(fn)
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    @property
    def name(self) -> str:
        return str(getattr(self.__wrapped__, "__name__", "fn"))  # type: ignore[attr-defined]

    @property
    def code(self) -> str:
        return _code(self._compiled)

    @property
    def graph(self) -> ScriptGraph:
        return ScriptGraph(self._compiled)

    def explain(self) -> list[str]:
        """Why each captured signature runs eagerly (empty: every one replays)."""
        return self._compiled.explain()

    def save(self, f: Any, _extra_files: Any = None) -> None:
        from ._save import save

        save(self, f, _extra_files)

    def __repr__(self) -> str:
        return f"<ember.jit.ScriptFunction {self.name}>"


def _run_method(owner: Module, training: bool, fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """What a scripted method captures; ``training`` is an argument so that it keys the capture
    (the compiler guards only the flags of modules called inside)."""
    return fn(owner, *args, **kwargs)


def _call_module(owner: Module, training: bool, *args: Any, **kwargs: Any) -> Any:
    return owner(*args, **kwargs)


class _ScriptMethod:
    """``@script_method``: the method, compiled once per instance on first use."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", "forward")
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        cache = obj.__dict__.setdefault("_script_cache", {})
        cf = cache.get(self.name)
        if cf is None:
            cf = cache[self.name] = _compiled(_run_method)
        fn = self.fn

        def bound(*args: Any, **kwargs: Any) -> Any:
            return cf(obj, obj.training, fn, *args, **kwargs)

        return functools.update_wrapper(bound, fn)


def script_method(fn: Callable) -> Any:
    """Mark a ``ScriptModule`` method (``forward``) as compiled (PyTorch's older API)."""
    return _ScriptMethod(fn)


class ScriptModule(Module):
    """A module whose ``forward`` replays captured kernel calls; subclass it with
    ``@ember.jit.script_method`` on ``forward``, or get one from ``ember.jit.script(module)``."""

    def _script_forward(self) -> CompiledFunction | None:
        return self.__dict__.get("_script_cache", {}).get("forward")

    @property
    def code(self) -> str:
        return _code(self._script_forward())

    @property
    def graph(self) -> ScriptGraph:
        return ScriptGraph(self._script_forward())

    def explain(self) -> list[str]:
        cf = self._script_forward()
        return [] if cf is None else cf.explain()

    def save(self, f: Any, _extra_files: Any = None) -> None:
        from ._save import save

        save(self, f, _extra_files)

    def _apply(self, fn: Callable) -> Module:  # moved or cast tensors: capture anew
        for cf in self.__dict__.get("_script_cache", {}).values():
            cf.reset()
        return super()._apply(fn)

    def __getstate__(self) -> dict:  # copies capture anew: a plan holds the original's tensors
        state = super().__getstate__()
        state.pop("_script_cache", None)
        return state


class RecursiveScriptModule(ScriptModule):
    """``ember.jit.script(module)``: the original's tensors and submodules, its forward compiled."""

    def __init__(self, original: Module) -> None:
        super().__init__()
        d = self.__dict__
        for reg in ("_parameters", "_buffers", "_non_persistent_buffers_set", "_modules"):
            d[reg] = original.__dict__[reg]  # shared, as PyTorch's script module shares them
        d["training"] = original.training
        d["_orig"] = original
        d["original_name"] = type(original).__name__
        d["_script_cache"] = {"forward": _compiled(_call_module)}

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        cache = self.__dict__.setdefault("_script_cache", {})
        cf = cache.get("forward")
        if cf is None:  # a copy: capture anew
            cf = cache["forward"] = _compiled(_call_module)
        return cf(self._orig, self.training, *args, **kwargs)

    def train(self, mode: bool = True) -> RecursiveScriptModule:
        super().train(mode)
        self._orig.training = mode
        return self

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            orig = self.__dict__.get("_orig")
            if orig is None:
                raise
            return getattr(orig, name)

    def _get_name(self) -> str:
        return "RecursiveScriptModule"

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"


def script(
    obj: Any,
    optimize: Any = None,
    _frames_up: int = 0,
    _rcb: Any = None,
    example_inputs: Any = None,
) -> Any:
    """Compile ``obj`` (a function or a Module) with ember's capture-and-replay.

    A function gives a ``ScriptFunction``; a module a ``RecursiveScriptModule`` (a
    ``ScriptModule``, already scripted objects are returned as they are). With
    ``example_inputs`` (a list of argument tuples) each example is run once now, so ``.code``
    and ``.graph`` show its capture at once.
    """
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        _run_examples(obj, example_inputs, (obj, getattr(obj, "forward", None)))
        return obj
    if isinstance(obj, type):
        raise NotImplementedError(
            f"ember.jit.script: scripting a class ({obj.__qualname__}) is not supported; "
            "script an instance (a Module) or a function"
        )
    if isinstance(obj, Module):
        scripted: Any = RecursiveScriptModule(obj)
        _run_examples(scripted, example_inputs, (obj, obj.forward, scripted))
        return scripted
    if not callable(obj):
        raise TypeError(f"ember.jit.script: expected a function or Module, got {type(obj).__name__}")
    fn = ScriptFunction(obj)
    _run_examples(fn, example_inputs, (obj, fn))
    return fn
