"""``ember.amp``: automatic mixed precision (autocast regions and loss scaling), PyTorch's API."""

from __future__ import annotations

from .autocast_mode import (
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .custom_fn import custom_bwd, custom_fwd
from .grad_scaler import GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "clear_autocast_cache",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]
