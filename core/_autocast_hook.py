"""The seam autocast stands on: each op PyTorch's autocast policy names (``matmul``,
``nn.functional.linear``, ``exp``, ``cat``, ...) is marked ``@autocast_op(name)`` where it is
defined, and runs through the active autocast hook (``ember.amp`` installs one on entering an
autocast region); outside one it pays one list read.

Why a wrapper and not a dispatch mode: autocast changes dtypes above autograd (the casts are
recorded, so gradients reach float32 weights as float32), which only the op level can do.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["AUTOCAST_OPS", "autocast_op", "hook", "set_hook"]

F = TypeVar("F", bound=Callable[..., Any])

# The hook while an autocast region is active: ``hook(name, fn, args, kwargs)`` runs the op.
hook: list[Callable[[str, Callable[..., Any], tuple, dict[str, Any]], Any] | None] = [None]
# Every marked op: public name -> the undecorated function.
AUTOCAST_OPS: dict[str, Callable[..., Any]] = {}


def set_hook(fn: Callable[[str, Callable[..., Any], tuple, dict[str, Any]], Any] | None) -> None:
    """Install (or, with None, remove) the hook every marked op runs through."""
    hook[0] = fn


def autocast_op(name: str) -> Callable[[F], F]:
    """Mark ``fn`` as the op ``name`` of the autocast policy (``"matmul"``,
    ``"nn.functional.linear"``, ``"linalg.norm"``)."""

    def mark(fn: F) -> F:
        AUTOCAST_OPS[name] = fn

        @functools.wraps(fn)
        def op(*args: Any, **kwargs: Any) -> Any:
            h = hook[0]
            if h is None:
                return fn(*args, **kwargs)
            return h(name, fn, args, kwargs)

        op.__autocast_op__ = name  # type: ignore[attr-defined]
        return op  # type: ignore[return-value]

    return mark
