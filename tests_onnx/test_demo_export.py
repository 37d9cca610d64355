"""``ember demo --export FILE``: the trained demo CNN written as ONNX runs in ONNX Runtime on
any batch size and gives ember's logits (to 1e-5)."""

from __future__ import annotations

import ember
import numpy as np
import onnx
import onnxruntime as ort
from ember import demo


def test_demo_exports_the_trained_model(tmp_path, capsys) -> None:
    path, ckpt = tmp_path / "demo.onnx", tmp_path / "digits.pt"
    assert demo.main(["--epochs", "1", "--checkpoint", str(ckpt), "--export", str(path)]) == 0
    assert f"exported ONNX model {path}" in capsys.readouterr().out
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    assert [i.name for i in proto.graph.input] == ["images"]
    dims = [d.dim_param or d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", 1, 8, 8]

    model = demo.build_model()
    model.load_state_dict(ember.load(str(ckpt)))
    model.eval()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for batch in (1, 37):
        x = ember.rand(batch, 1, 8, 8)
        (logits,) = session.run(["logits"], {"images": x.numpy()})
        with ember.no_grad():
            np.testing.assert_allclose(logits, model(x).numpy(), rtol=1e-5, atol=1e-5)
