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


def public_ops() -> dict[types.CodeType, Any]:
    """Each public op function's code object -> its public name (namespace names win over
    Tensor method names, so ``x.add(y)`` and ``ember.add(x, y)`` both read ``add``); for a
    code shared by several ops (those one factory makes: ``exp``, ``tanh``, ...), the
    ``(function, name)`` pairs, told apart by their closures when one runs."""
    global _table
    if _table is None:
        import ember  # cycle: built on first use, after ember has finished importing

        found: dict[types.CodeType, dict[int, tuple[Any, str]]] = {}
        for modname, prefix in _NAMESPACES:
            module = sys.modules.get(modname)
            for name in getattr(module, "__all__", ()):
                fn = _unwrap(getattr(module, name, None))
                code = getattr(fn, "__code__", None)
                if code is None:
                    continue
                per_fn = found.setdefault(code, {})
                # The first namespace wins (ember.matmul, not linalg.matmul), and an alias
                # keeps the function's own name (ember.subtract reads sub).
                seen = per_fn.get(id(fn))
                if seen is None or (fn.__name__ == name and not seen[1].endswith(name)):
                    per_fn[id(fn)] = (fn, prefix + name)
        for name, value in vars(ember.Tensor).items():
            fn = _unwrap(value)
            code = getattr(fn, "__code__", None)
            if code is not None and not name.startswith("_"):
                found.setdefault(code, {}).setdefault(id(fn), (fn, f"Tensor.{name}"))
        table: dict[types.CodeType, Any] = {}
        for code, per_fn in found.items():
            pairs = tuple(per_fn.values())
            table[code] = pairs[0][1] if len(pairs) == 1 else pairs
        _table = table
    return _table


def _name_of(frame: types.FrameType) -> str | None:
    """The public op running in ``frame``, or None."""
    entry = public_ops().get(frame.f_code)
    if entry is None or isinstance(entry, str):
        return entry
    loc = frame.f_locals
    for fn, name in entry:
        cells = fn.__closure__ or ()
        try:
            if all(loc.get(v) is c.cell_contents for v, c in zip(fn.__code__.co_freevars, cells)):
                return name
        except ValueError:  # an empty cell
            continue
    return None


def _unwrap(fn: Any) -> Any:
    """The function under a ``functools.wraps`` wrapper (the autocast seam wraps ops)."""
    try:
        return inspect.unwrap(fn) if callable(fn) else fn
    except ValueError:
        return fn


def public_name(frame: types.FrameType) -> str | None:
    """The public op running in ``frame``, or None."""
    return _name_of(frame)


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
            saved = _saved.pop()
            # A C-level profiler (cProfile) cannot be handed back through sys.setprofile.
            sys.setprofile(saved if callable(saved) else None)


_observers: list[OpObserver] = []
_saved: list[Any] = []
# The frame of the outermost public op running now (inner ops are not reported).
_current: list[Any] = [None, None]  # its frame and name


def _arguments(frame: types.FrameType) -> dict[str, Any]:
    code = frame.f_code
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
    loc = frame.f_locals
    return {k: loc[k] for k in code.co_varnames[:n] if k in loc}


def _hook(frame: types.FrameType, event: str, arg: Any) -> None:
    if event == "call":
        if _current[0] is None and frame.f_code in public_ops():
            name = _name_of(frame)
            if name is not None:
                _current[0], _current[1] = frame, name
                args = _arguments(frame)
                for obs in _observers:
                    obs.op_enter(name, args)
    elif event == "return" and frame is _current[0]:
        name = _current[1]
        _current[0] = _current[1] = None
        for obs in reversed(list(_observers)):
            obs.op_exit(name, arg)
