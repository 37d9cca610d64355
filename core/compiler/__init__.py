"""``ember.compile`` and ``ember.compiler``: capture a function once per input signature, replay
it without Python dispatch.

The first call with a new signature runs the function eagerly while recording every kernel it
reaches through the dispatcher (``_capture``): forward, ``backward()``, and the update kernels
alike. Later calls with the same signature run the recording as one generated Python function
of kernel calls (``_codegen``), with no op functions, no autograd graph building, no dtype
promotion or shape checks; each run of kernel calls is first offered to its backend's optional
``compile_graph`` hook (``ember.backends.graph``), which may fuse it. The optimizers' ``step`` and
``zero_grad`` and the LR schedulers' ``step`` are marked ``disable``: replay calls them eagerly
where the function did, so learning rates, step counts and lazily made state stay right.

What replay does not repeat (as tinygrad's TinyJit, unlike ``torch.compile``'s bytecode
analysis): Python side effects other than tensor updates, ``.grad`` and random draws, and
Python values that change between calls without being arguments (a global learning rate used
in hand-written updates) — those are baked into the recording.
"""

from __future__ import annotations

import functools
from typing import Any

from ._config import config

__all__ = ["config", "disable", "is_compiling", "list_backends", "reset"]

_BACKENDS = ("default", "inductor", "replay", "eager")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_registry: list[Any] = []  # weak references to every compiled function, for reset()


def list_backends(exclude_tags: Any = None) -> list[str]:
    """``compile``'s ``backend`` names: ``default``/``inductor`` (replay, fused by the backend's
    hook), ``replay`` (no fusion), ``eager`` (no capture)."""
    return sorted(_BACKENDS)


def compile(
    model: Any = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str = "default",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    disable: bool = False,
) -> Any:
    """``ember.compile(fn_or_module)``: a callable that replays ``fn`` per input signature.

    ``dynamic`` is accepted for PyTorch's call shape; every new shape is captured anew (no
    symbolic shapes). ``fullgraph=True`` raises ``Unsupported`` where the function cannot be
    replayed whole instead of running it eagerly.
    """
    import weakref

    from ember.nn.modules.module import Module

    from ._compiled import CompiledFunction
    from ._module import OptimizedModule

    if model is None:
        return functools.partial(
            compile,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    if not isinstance(backend, str) or backend not in _BACKENDS:
        if callable(backend):
            raise NotImplementedError(
                "ember.compile: a callable backend is not supported; use one of list_backends()"
            )
        raise RuntimeError(
            f"Invalid backend: {backend!r}, see ember.compiler.list_backends() for available backends."
        )
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(m for m in _MODES if m)}")
    if not callable(model):
        raise TypeError(f"ember.compile: expected a callable or a Module, got {type(model).__name__}")
    if disable:
        return model
    if isinstance(model, Module):

        def call(*args: Any, **kwargs: Any) -> Any:
            return model(
                *args, **kwargs
            )  # through Module.__call__ as capture sees it: the root is guarded too

        om = OptimizedModule(model, CompiledFunction(call, fullgraph, backend))
        _registry.append(weakref.ref(om._compiled))
        return om
    cf = CompiledFunction(model, fullgraph, backend)
    _registry.append(weakref.ref(cf))
    return functools.wraps(model)(cf) if hasattr(model, "__name__") else cf


def reset() -> None:
    """Forget every capture: the next call of each compiled function captures again."""
    for ref in _registry:
        cf = ref()
        if cf is not None:
            cf.reset()
    _registry[:] = [r for r in _registry if r() is not None]


def is_compiling() -> bool:
    """True while ``ember.compile`` captures a function (as ``torch.compiler.is_compiling``)."""
    from ._capture import active

    return active() is not None


def disable(fn: Any = None, recursive: bool = True) -> Any:
    """Mark ``fn`` eager-only: captured as one call that replay makes in its place, so what it
    does (Python state, host reads) happens on every call."""
    if fn is None:
        return functools.partial(disable, recursive=recursive)
    from ._disable import eager_only

    return eager_only(fn)


def __getattr__(name: str) -> Any:
    if name == "Unsupported":
        from ._compiled import Unsupported

        return Unsupported
    raise AttributeError(f"module 'ember.compiler' has no attribute {name!r}")
