"""``ember.accelerator``: PyTorch 2.6+'s device-generic API over whichever accelerator is installed.

Which backend it is: ``EMBER_ACCELERATOR=name`` when set; else, of the installed backends
that declare themselves accelerators (every backend but ``cpu`` unless it says otherwise),
the available one of highest ``accelerator_priority`` (ties: name order), so a real device
wins over an example backend; else the best one installed that cannot run here
(``current_accelerator()`` names it, ``is_available()`` is False, as a CUDA build without a
GPU in PyTorch). Errors and their wording are PyTorch's.
"""

from __future__ import annotations

from typing import Any
from warnings import warn

from ember.backends import device

from . import memory
from ._current import choice, current_index, device_index_of, require, set_index
from ._streams import Event, Stream, current_stream, set_stream
from .memory import (
    empty_cache,
    empty_host_cache,
    get_memory_info,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)

__all__ = [
    "Event",
    "Stream",
    "current_accelerator",
    "current_device_idx",  # deprecated
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "empty_host_cache",
    "get_device_capability",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_device_idx",  # deprecated
    "set_device_index",
    "set_stream",
    "synchronize",
]


def current_accelerator(check_available: bool = False) -> device | None:
    """The accelerator's device type (index None, as PyTorch), or None without one; with
    ``check_available``, None also when it cannot run here."""
    found = choice()
    if found is None or (check_available and not found[1]):
        return None
    return device(found[0])


def is_available() -> bool:
    """True when the accelerator can run now (its backend is usable and has a device)."""
    found = choice()
    return found is not None and found[1]


def device_count() -> int:
    """How many devices the accelerator has (0 when there is none or it cannot run)."""
    found = choice()
    if found is None or not found[1]:
        return 0
    return require()[1].backend.device_count()


def current_device_index() -> int:
    """The index of this thread's current accelerator device (0 until set)."""
    return current_index(require()[0])


def set_device_index(device: Any, /) -> None:
    """Make a device of the accelerator current for this thread (a negative index: no-op)."""
    index = device_index_of(device, optional=False)
    if index < 0:
        return
    name, lb = require()
    set_index(name, lb, index)


def current_device_idx() -> int:
    """Deprecated alias of ``current_device_index``."""
    warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device: Any, /) -> None:
    """Deprecated alias of ``set_device_index``."""
    warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:
    """``with device_index(i):`` makes device ``i`` current, then restores the previous one;
    ``None`` switches nothing."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is None:
            return
        if not isinstance(self.idx, int):
            raise TypeError(f"device_index(): expected an int device index, got {type(self.idx).__name__}")
        name, lb = require()
        self.prev_idx = current_index(name)
        if self.idx >= 0:
            set_index(name, lb, self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            name, lb = require()
            set_index(name, lb, self.prev_idx)


def synchronize(device: Any = None, /) -> None:
    """Wait for all work queued on the device (default: the current one) to finish."""
    index = device_index_of(device, optional=True)
    name, lb = require()
    if index < 0:
        index = current_index(name)
    lb.backend.synchronize(index)


def get_device_capability(device: Any = None, /) -> dict[str, Any]:
    """What the device supports: ``{"supported_dtypes": set of dtypes}`` (the backend's
    declared dtypes, as PyTorch's key)."""
    index = device_index_of(device, optional=True)
    _, lb = require()
    count = lb.backend.device_count()
    if not 0 <= index < count:
        raise RuntimeError(f"device is out of range, device is {index}, total number of device is {count}.")
    return {"supported_dtypes": set(lb.backend.dtypes)}
