"""Op-level events: which public op ran (``ember.add``, ``nn.functional.linear``,
``Tensor.float``, ...), with its arguments and result.

Kernel-level layers are dispatch modes (``_dispatch.DispatchMode``); what stands above the
kernels (the profiler's op rows, ``ember.jit.trace``, ONNX export) needs the public op a user
called instead. An ``OpObserver`` gets the outermost public op calls only (``F.linear``, not the
``matmul`` it runs). It costs nothing while none is active: the hook is Python's
``sys.setprofile``, installed only while an observer is entered (and slow while it is: it
sees every Python call, which is fine for profiling and tracing, never for training).
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any

__all__ = ["OpObserver", "public_name", "public_ops"]

_NAMESPACES = (
    ("ember", ""),
    ("ember.nn.functional", "nn.functional."),
    ("ember.linalg", "linalg."),
    ("ember.special", "special."),
    ("ember.fft", "fft."),
)

_table: dict[types.CodeType, str] | None = None


def public_ops() -> dict[types.CodeType, str]:
    """Each public op function's code object -> its public name (namespace names win over
    Tensor method names, so ``x.add(y)`` and ``ember.add(x, y)`` both read ``add``)."""
    global _table
    if _table is None:
        import ember  # cycle: built on first use, after ember has finished importing

        names: dict[types.CodeType, set[str]] = {}
        for name, value in vars(ember.Tensor).items():
            code = getattr(_unwrap(value), "__code__", None)
            if code is not None and not name.startswith("_"):
                names.setdefault(code, set()).add(f"Tensor.{name}")
        # A closure shared by several methods (the dtype casts, the in-place forms) names none
        # of them: the op it runs is reported instead.
        table = {code: n.pop() for code, n in names.items() if len(n) == 1}
        for modname, prefix in reversed(_NAMESPACES):
            module = sys.modules.get(modname)
            for name in getattr(module, "__all__", ()):
                fn = _unwrap(getattr(module, name, None))
                code = getattr(fn, "__code__", None)
                if code is not None and (code not in table or fn.__name__ == name):
                    table[code] = prefix + name  # an alias keeps the function's own name
        _table = table
    return _table


def _unwrap(fn: Any) -> Any:
    """The function under a ``functools.wraps`` wrapper (the autocast seam wraps ops)."""
    try:
        return inspect.unwrap(fn) if callable(fn) else fn
    except ValueError:
        return fn


def public_name(code: types.CodeType) -> str | None:
    """The public op whose function has this code, or None."""
    return public_ops().get(code)


class OpObserver:
    """Sees the outermost public op calls while entered (``with``); subclasses override
    ``op_enter`` (the arguments as the function received them, by parameter name) and
    ``op_exit`` (the result, or None when the op raised)."""

    def op_enter(self, name: str, arguments: dict[str, Any]) -> None:
        """Called as the op starts."""

    def op_exit(self, name: str, result: Any) -> None:
        """Called as the op returns."""

    def __enter__(self) -> OpObserver:  # noqa: PYI034 - typing.Self needs Python 3.11
        _observers.append(self)
        if len(_observers) == 1:
            _saved.append(sys.getprofile())
            sys.setprofile(_hook)
        return self

    def __exit__(self, *exc: object) -> None:
        if not _observers or _observers[-1] is not self:
            raise RuntimeError("op observers must be exited in the reverse order they were entered")
        _observers.pop()
        if not _observers:
            sys.setprofile(_saved.pop())


_observers: list[OpObserver] = []
_saved: list[Any] = []
# The frame of the outermost public op running now (inner ops are not reported).
_current: list[Any] = [None]


def _arguments(frame: types.FrameType) -> dict[str, Any]:
    code = frame.f_code
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
    loc = frame.f_locals
    return {k: loc[k] for k in code.co_varnames[:n] if k in loc}


def _hook(frame: types.FrameType, event: str, arg: Any) -> None:
    if event == "call":
        if _current[0] is None:
            name = public_ops().get(frame.f_code)
            if name is not None:
                _current[0] = frame
                args = _arguments(frame)
                for obs in _observers:
                    obs.op_enter(name, args)
    elif event == "return" and frame is _current[0]:
        _current[0] = None
        name = public_ops()[frame.f_code]
        for obs in reversed(list(_observers)):
            obs.op_exit(name, arg)
