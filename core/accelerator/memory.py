"""``ember.accelerator.memory``: PyTorch 2.8+'s device-generic allocator statistics.

They come from the accelerator backend's optional ``memory_stats(index)`` (a flat dict with
PyTorch's key names, e.g. ``"allocated_bytes.all.current"``; empty before the device's
allocator is first used), ``reset_peak_memory_stats(index)``, ``empty_cache(index)`` and
``memory_info(index)``. A backend without ``memory_stats`` cannot say how much it holds: the
readers raise rather than report 0 bytes; the resets and ``empty_cache`` have nothing to do.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ember.backends.registry import LoadedBackend

from ._current import device_index_of, require

__all__ = [
    "empty_cache",
    "empty_host_cache",
    "get_memory_info",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
]


def _backend(device_index: Any) -> tuple[str, LoadedBackend, int]:
    name, lb = require()  # as PyTorch: no accelerator is the first error, whatever the argument
    return name, lb, device_index_of(device_index, optional=True)


def memory_stats(device_index: Any = None, /) -> OrderedDict[str, Any]:
    """The allocator's statistics for a device, sorted by name (empty before its first use)."""
    name, lb, index = _backend(device_index)
    read = getattr(lb.backend, "memory_stats", None)
    if read is None:
        raise RuntimeError(
            f"backend '{name}' does not report memory statistics (it has no memory_stats method)"
        )
    return OrderedDict(sorted(read(index).items()))


def memory_allocated(device_index: Any = None, /) -> int:
    """Bytes held by live tensors on the device."""
    return int(memory_stats(device_index).get("allocated_bytes.all.current", 0))


def max_memory_allocated(device_index: Any = None, /) -> int:
    """The most ``memory_allocated`` has been since start or ``reset_peak_memory_stats``."""
    return int(memory_stats(device_index).get("allocated_bytes.all.peak", 0))


def memory_reserved(device_index: Any = None, /) -> int:
    """Bytes the allocator holds from the device: live tensors plus its cache."""
    return int(memory_stats(device_index).get("reserved_bytes.all.current", 0))


def max_memory_reserved(device_index: Any = None, /) -> int:
    return int(memory_stats(device_index).get("reserved_bytes.all.peak", 0))


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    """Start the peaks again from the current values."""
    _, lb, index = _backend(device_index)
    reset = getattr(lb.backend, "reset_peak_memory_stats", None)
    if reset is not None:
        reset(index)


def reset_accumulated_memory_stats(device_index: Any = None, /) -> None:
    """ember's backends keep no accumulated counters (only current values and peaks)."""
    _, lb, index = _backend(device_index)
    reset = getattr(lb.backend, "reset_accumulated_memory_stats", None)
    if reset is not None:
        reset(index)


def empty_cache() -> None:
    """Give the device memory the allocator caches but no tensor uses back, on every device."""
    _, lb = require()
    release = getattr(lb.backend, "empty_cache", None)
    if release is not None:
        for index in range(lb.backend.device_count()):
            release(index)


def empty_host_cache() -> None:
    """ember has no pinned host memory to cache: nothing to release."""
    require()


def get_memory_info(device_index: Any = None, /) -> tuple[int, int]:
    """(free, total) bytes of the device, from the backend's ``memory_info``."""
    name, lb, index = _backend(device_index)
    read = getattr(lb.backend, "memory_info", None)
    if read is None:
        raise RuntimeError(
            f"backend '{name}' cannot tell the device's free memory (it has no memory_info method)"
        )
    free, total = read(index)
    return int(free), int(total)
