"""ember's CUDA backend: CuPy arrays, cuBLAS through CuPy, named CuPy kernels for the rest."""

from __future__ import annotations

from . import plugin
from .backend import CUDABackend

__all__ = ["CUDABackend", "plugin"]
