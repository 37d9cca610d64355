"""ember's CPU backend: every primitive as NumPy kernels, views as NumPy views."""

from __future__ import annotations

from . import plugin
from .backend import CPUBackend

__all__ = ["CPUBackend", "plugin"]
