"""Device strings -> interned device objects and their loaded backends; the default device."""

from __future__ import annotations

import os
import re
from typing import Any

from ember.backends import device, registry
from ember.backends.registry import LoadedBackend

from ._public import op, public

PUBLIC = public(
    __name__,
    {
        "get_default_device": op(),
        "set_default_device": op(),
    },
)
__all__ = [*PUBLIC, "canonical", "resolve"]

# PyTorch's device-string grammar: letters and underscores, then an optional ``:index``
_DEVICE_STRING = re.compile(r"^[A-Za-z_]+(:(0|[1-9][0-9]*))?$")
_interned: dict[tuple[str, int], device] = {}
_by_input: dict[Any, tuple[device, LoadedBackend]] = {}
_default: list[Any] = [os.environ.get("EMBER_DEVICE") or "cpu"]


def canonical(type_: str, index: int) -> device:
    """One shared object per (type, index), so tensors compare devices with ``is``.

    CPU device 0 prints as ``cpu`` (index None) as in PyTorch; others always carry an index.
    """
    key = (type_, index)
    d = _interned.get(key)
    if d is None:
        d = device(type_) if type_ == "cpu" and index == 0 else device(type_, index)
        _interned[key] = d
    return d


def resolve(dev: Any) -> tuple[device, LoadedBackend]:
    """(canonical device, its backend) for a device string, device, index or None."""
    hit = _by_input.get(dev) if isinstance(dev, (str, int, type(None))) else None
    if hit is not None:
        return hit
    if dev is None:
        return resolve(_default[0])
    if isinstance(dev, int) and not isinstance(dev, bool):
        raise TypeError(
            f"a bare device index ({dev}) is ambiguous in ember; pass a device string such as 'cuda:{dev}'"
        )
    if isinstance(dev, str) and not _DEVICE_STRING.match(dev):
        raise RuntimeError(f"Invalid device string: '{dev}'")
    d = dev if isinstance(dev, device) else device(dev)
    try:
        lb = registry.get(d.type)
    except RuntimeError as e:
        if not str(e).startswith("Unknown device type"):
            raise
        # PyTorch's wording, with the device types installed here in place of its fixed list
        raise RuntimeError(
            f"Expected one of {', '.join(registry.available())} device type at start of device "
            f"string: {d.type}"
        ) from None
    index = 0 if d.index is None else d.index
    count = lb.backend.device_count()
    if index >= count:
        raise RuntimeError(
            f"Invalid device '{d}': backend '{d.type}' has {count} device(s) (indices 0..{count - 1})"
        )
    out = (canonical(d.type, index), lb)
    if isinstance(dev, (str, type(None))):
        _by_input[dev] = out
    return out


def get_default_device() -> device:
    """The device new tensors go to when no ``device=`` is given."""
    return resolve(None)[0]


def set_default_device(dev: Any) -> None:
    """Make ``dev`` ("cpu", "opencl", "cuda:1", ...) the default for new tensors."""
    resolve(dev)  # validate now, not at the next tensor
    _default[0] = str(dev) if not isinstance(dev, str) else dev
    _by_input.pop(None, None)
