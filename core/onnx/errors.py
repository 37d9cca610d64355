"""ONNX export errors, named as PyTorch's ``torch.onnx.errors``."""

from __future__ import annotations

__all__ = ["OnnxExporterError", "UnsupportedOperatorError"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op of the trace has no ONNX mapping (the message names it)."""
