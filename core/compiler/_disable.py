"""``ember.compiler.disable``: functions replay calls eagerly (kept import-light: the optimizers
use it at class creation)."""

from __future__ import annotations

import functools
import threading
from typing import Any

__all__ = ["eager_only"]

# The running capture, if any (``_capture`` appends and pops; kept here so that marking a
# function needs no import of the capture machinery).
capturing: list[Any] = []


def eager_only(fn: Any, idempotent: bool = False) -> Any:
    """``fn`` made eager-only (``idempotent``: a second run changes nothing, as ``zero_grad``:
    replay may then still fall back to eager after it)."""
    if getattr(fn, "__ember_eager_only__", False):
        return fn

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if capturing and not capturing[-1].paused and capturing[-1].thread == threading.get_ident():
            return capturing[-1].call_eagerly(fn, args, kwargs, idempotent)
        return fn(*args, **kwargs)

    run.__ember_eager_only__ = True  # type: ignore[attr-defined]
    return run
