"""The device value type: a backend name and an index, parsed from PyTorch-style strings."""

from __future__ import annotations

import re

__all__ = ["DeviceLike", "device"]

_DEVICE_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?::(\d+))?$")


class device:
    """Where a tensor lives: ``ember.device("cuda:1")`` or ``ember.device("cpu")``.

    Example: ``ember.device("opencl", 0).type == "opencl"``.
    """

    __slots__ = ("index", "type")
    type: str
    index: int | None

    def __init__(self, type: str | device, index: int | None = None) -> None:
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): an index was given twice")
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string or device, got {type!r}")
        m = _DEVICE_RE.match(type.strip())
        if m is None:
            raise RuntimeError(
                f"Invalid device string: '{type}' (expected a backend name with an optional "
                "index, such as 'cpu', 'cuda:1' or 'opencl:0')"
            )
        name, idx = m.group(1), m.group(2)
        if idx is not None and index is not None:
            raise RuntimeError(f"Invalid device string: '{type}' with a second index {index}")
        if idx is not None:
            index = int(idx)
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = name
        self.index = index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))


DeviceLike = str | device | int | None
