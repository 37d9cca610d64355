"""Export to bytes, run in ONNX Runtime, compare with ember's own outputs."""

from __future__ import annotations

import io
from typing import Any

import ember
import ember.jit
import ember.onnx
import numpy as np
import onnx
import onnxruntime as ort
from ember.jit._graph import flatten

ATOL = 1e-5


def export_bytes(model: Any, args: Any, **kwargs: Any) -> bytes:
    f = io.BytesIO()
    ember.onnx.export(model, args, f, **kwargs)
    return f.getvalue()


def run_onnx(data: bytes, *inputs: Any) -> list[np.ndarray]:
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    assert len(names) == len(inputs), names
    return session.run(None, {n: x.numpy() for n, x in zip(names, inputs, strict=True)})


def tensors(obj: Any) -> list[Any]:
    return [t for t in flatten(obj) if isinstance(t, ember.Tensor)]


def check(
    model: Any, args: tuple, fresh: tuple, dynamic_axes: dict | None = None, **kwargs: Any
) -> onnx.ModelProto:
    """Export on ``args``, run the file on ``fresh`` and compare with ``model(*fresh)``."""
    data = export_bytes(model, args, dynamic_axes=dynamic_axes, **kwargs)
    proto = onnx.load_from_string(data)
    onnx.checker.check_model(proto, full_check=True)
    training = isinstance(model, ember.nn.Module) and model.training
    if training:
        model.eval()  # export runs the model in eval mode
    with ember.no_grad():
        expected = tensors(model(*fresh))
    if training:
        model.train()
    got = run_onnx(data, *tensors(fresh))
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == tuple(e.shape)
        assert g.dtype == e.numpy().dtype
        np.testing.assert_allclose(g, e.numpy(), rtol=ATOL, atol=ATOL)
    return proto
