"""ember's OpenCL backend: every primitive as generated OpenCL kernels (PyOpenCL, PoCL)."""

from __future__ import annotations

from . import plugin
from .clarray import CLArray
from .backend import OpenCLBackend

__all__ = ["CLArray", "OpenCLBackend", "plugin"]
