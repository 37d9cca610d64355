"""ember's OpenCL backend: every primitive as generated OpenCL kernels (PyOpenCL, PoCL)."""

from __future__ import annotations

from . import plugin
from .backend import OpenCLBackend
from .clarray import CLArray

__all__ = ["CLArray", "OpenCLBackend", "plugin"]
