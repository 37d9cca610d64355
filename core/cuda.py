"""``ember.cuda``: the parts of ``torch.cuda`` that device-agnostic scripts call."""

from __future__ import annotations

from ember.backends import registry

from .amp.legacy import cuda_amp as amp

__all__ = ["amp", "device_count", "is_available", "manual_seed", "manual_seed_all", "synchronize"]


def is_available() -> bool:
    """True when the ``cuda`` backend is installed and has a usable GPU."""
    return "cuda" in registry.available()


def device_count() -> int:
    return registry.get("cuda").backend.device_count() if is_available() else 0


def synchronize(device: int = 0) -> None:
    if is_available():
        registry.get("cuda").backend.synchronize(device)


def manual_seed(seed: int) -> None:
    """Seeds the one Philox generator ember uses on every device."""
    from ._random import manual_seed as _seed

    _seed(seed)


manual_seed_all = manual_seed
