"""The device-generic API of PyTorch 2.6+: whichever non-CPU backend is installed and usable."""

from __future__ import annotations

from typing import Any

from ember.backends import device, registry

__all__ = ["current_accelerator", "device_count", "is_available", "synchronize"]


def _accelerator() -> str | None:
    for name in registry.available():
        if name != "cpu":
            return name
    return None


def is_available() -> bool:
    """True when a non-CPU backend (CUDA, OpenCL or a third party's) can run now."""
    return _accelerator() is not None


def current_accelerator() -> device | None:
    """The accelerator's device (index 0), or None on a CPU-only machine."""
    name = _accelerator()
    return None if name is None else device(name, 0)


def device_count() -> int:
    name = _accelerator()
    return 0 if name is None else registry.get(name).backend.device_count()


def synchronize(dev: Any = None) -> None:
    """Wait for all queued work on the accelerator (or ``dev``) to finish."""
    if dev is None:
        name = _accelerator()
        if name is None:
            return
        dev = device(name, 0)
    d = device(dev) if not isinstance(dev, device) else dev
    registry.get(d.type).backend.synchronize(d.index or 0)
