"""The allowlist a weights-only load may use beyond ember's own, and the loader's messages.

``add_safe_globals``/``safe_globals`` add the user's trusted classes and functions (PyTorch's
API); ``brief`` describes an untrusted object for an error message without a deep or huge repr.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = [
    "Malformed",
    "Refused",
    "add_safe_globals",
    "brief",
    "clear_safe_globals",
    "get_safe_globals",
    "safe_globals",
    "set_state",
    "unsafe_hint",
    "unsupported_global",
    "user_globals",
]

# -- the user's allowlist --------------------------------------------------------------------
_user_globals: dict[str, Any] = {}


def _qualname(obj: Any) -> str:
    if isinstance(obj, tuple):
        return obj[1]
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow ``load(weights_only=True)`` to build these classes or call these functions.

    Items are objects or ``(object, "module.name")`` pairs.
    Example: ``ember.serialization.add_safe_globals([MyNet])``.
    """
    for g in safe_globals:
        _user_globals[_qualname(g)] = g[0] if isinstance(g, tuple) else g


def get_safe_globals() -> list[Any]:
    """The objects added with ``add_safe_globals``."""
    return list(_user_globals.values())


def clear_safe_globals() -> None:
    """Forget every object added with ``add_safe_globals``."""
    _user_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list[Any]) -> Iterator[None]:
    """``with ember.serialization.safe_globals([MyNet]): ember.load(f)`` allowlists only inside."""
    saved = dict(_user_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_globals.clear()
        _user_globals.update(saved)


def user_globals() -> dict[str, Any]:
    return _user_globals


# -- messages --------------------------------------------------------------------------------
def unsafe_hint(label: str) -> str:
    """PyTorch's preamble for a refused weights-only load, naming the file."""
    return (
        f"Weights only load failed for {label}. This file can still be loaded, to do so you have two "
        "options, do those steps only if you trust the source of the checkpoint.\n\t(1) In ember, "
        "`weights_only=True` is the default (as in PyTorch 2.6+). Re-running `ember.load` with "
        "`weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. "
        "Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to load with "
        "`weights_only=True` please check the recommended steps in the following error message.\n\t"
        "WeightsUnpickler error: "
    )


def unsupported_global(full: str) -> str:
    name = full.removeprefix("builtins.")
    return (
        f"Unsupported global: GLOBAL {name} was not an allowed global by default. Please use "
        f"`ember.serialization.add_safe_globals([{name}])` or the "
        f"`ember.serialization.safe_globals([{name}])` context manager to allowlist this global if you "
        "trust this class/function."
    )


def brief(obj: Any, depth: int = 0) -> str:
    """A short description of an untrusted object for an error message: never a deep or huge repr."""
    if isinstance(obj, (str, bytes, bytearray)):
        return repr(obj[:60]) + ("..." if len(obj) > 60 else "")
    if type(obj) in (int, bool, float, complex, type(None)):
        text = repr(obj)
        return text if len(text) <= 60 else text[:60] + "..."
    if isinstance(obj, tuple) and depth < 2:
        items = ", ".join(brief(x, depth + 1) for x in obj[:4])
        return f"({items}{', ...' if len(obj) > 4 else ''})"
    if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__"):
        return f"{getattr(obj, '__module__', '?')}.{obj.__qualname__}"
    return f"<{type(obj).__name__}>"


class Malformed(Exception):
    """Internal: the stream is not a well-formed pickle (turned into UnpicklingError with the file)."""


class Refused(Exception):
    """Internal: a well-formed pickle asked for something weights-only loading never does."""


def set_state(inst: Any, state: Any) -> None:
    """``pickle``'s BUILD for an instance of a user-allowlisted class (the user trusts the class)."""
    setstate = getattr(inst, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        inst.__dict__.update(state)
    for k, v in (slots or {}).items():
        setattr(inst, k, v)
