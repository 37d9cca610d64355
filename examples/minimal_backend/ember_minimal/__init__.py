"""ember-minimal: the smallest complete ember backend, on NumPy, for people to copy.

Arrays are ``MinArray`` wrappers (so they are visibly not the CPU backend's arrays);
every primitive op has a kernel in ``kernels.py``; ``plugin.py`` holds the two hooks.
"""

from __future__ import annotations

from . import plugin
from .backend import MinArray, MinimalBackend

__all__ = ["MinArray", "MinimalBackend", "plugin"]
