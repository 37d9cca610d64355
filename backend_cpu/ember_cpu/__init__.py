"""ember's CPU backend: every primitive as NumPy kernels, views as NumPy views."""

from __future__ import annotations

from . import plugin
from .backend import CPUBackend
from .hostmem import cache as _cache

__all__ = ["CPUBackend", "empty_cache", "plugin"]


def empty_cache() -> int:
    """Return the idle large buffers the CPU backend keeps for reuse to the system (like
    ``torch.cuda.empty_cache``); returns the bytes released."""
    return _cache.empty_cache()
