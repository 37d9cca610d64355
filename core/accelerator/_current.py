"""Which installed backend is the accelerator, and the current device index on it.

PyTorch fixes its accelerator when it is built; ember picks among the installed backends on
every call (cheap once they are loaded), so a backend registered in-process counts at once:
``EMBER_ACCELERATOR=name`` if set, else the available accelerator of highest priority
(``registry.accelerators()``), else the best installed one that cannot run here (PyTorch's
"built for CUDA, no GPU present": ``current_accelerator()`` names it, ``is_available()`` is
False).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ember.backends import BackendError, device, registry
from ember.backends.registry import LoadedBackend

__all__ = ["NONE_AVAILABLE", "choice", "current_index", "device_index_of", "require", "set_index"]

NONE_AVAILABLE = "Cannot access accelerator device when none is available."
ENV = "EMBER_ACCELERATOR"


class _PerThread(threading.local):
    """The current device index per accelerator name, per thread (as CUDA's current device)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}


_state = _PerThread()


def choice() -> tuple[str, bool] | None:
    """(name, available now) of the accelerator, or None when no accelerator is installed."""
    found = registry.accelerators()
    wanted = os.environ.get(ENV, "")
    if wanted:
        for name, ok in found:
            if name == wanted:
                if not ok:
                    raise RuntimeError(f"{ENV}={wanted!r}: {_why_unavailable(name)}{_listing(found)}")
                return name, ok
        raise RuntimeError(f"{ENV}={wanted!r}: {_why_not(wanted)}{_listing(found)}")
    for name, ok in found:
        if ok:
            return name, True
    return found[0] if found else None


def _why_unavailable(name: str) -> str:
    try:
        registry.get(name)
    except BackendError as e:
        return str(e)
    return f"backend '{name}' is unavailable"  # pragma: no cover - it became available since


def _why_not(name: str) -> str:
    rows = {r["name"]: r for r in registry.status()}
    if name not in rows:
        return "no installed backend has this name"
    if rows[name]["available"] or rows[name].get("distribution"):
        return f"backend '{name}' is not an accelerator"
    return f"backend '{name}' cannot be loaded: {rows[name]['reason']}"


def _listing(found: list[tuple[str, bool]]) -> str:
    installed = ", ".join(r["name"] for r in registry.status()) or "none"
    usable = ", ".join(n for n, ok in found if ok) or "none"
    return f" (installed backends: {installed}; available accelerators: {usable})"


def require() -> tuple[str, LoadedBackend]:
    """The accelerator's name and loaded backend; PyTorch's error when there is none."""
    found = choice()
    if found is None:
        raise RuntimeError(NONE_AVAILABLE)
    return found[0], registry.get(found[0])  # an unavailable one raises, saying why


def current_index(name: str) -> int:
    return _state.index.get(name, 0)


def set_index(name: str, lb: LoadedBackend, index: int) -> None:
    """Make ``index`` current for this thread; PyTorch's XPU wording for one out of range."""
    count = lb.backend.device_count()
    if not 0 <= index < count:
        raise RuntimeError(f"device is out of range, device is {index}, total number of device is {count}.")
    _state.index[name] = index


def device_index_of(dev: Any, optional: bool = False) -> int:
    """PyTorch's ``torch.accelerator._utils._get_device_index``: an int passes as is; a device
    (or string) must be of the accelerator's type; without an index, the current one."""
    if isinstance(dev, int):
        return dev
    if isinstance(dev, str):
        dev = device(dev)
    index: int | None = None
    if isinstance(dev, device):
        found = choice()
        if found is None:
            raise RuntimeError("Accelerator expected")
        if found[0] != dev.type:
            raise ValueError(f"{dev.type} doesn't match the current accelerator {found[0]}.")
        index = dev.index
    if index is None:
        if not optional:
            raise ValueError(f"Expected an ember.device with a specified index or an integer, but got:{dev}")
        return current_index(require()[0])
    return index
