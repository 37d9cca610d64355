"""ember.onnx.export of the common layers, run in ONNX Runtime on fresh inputs of another
batch size (dynamic axes), matching ember to 1e-5."""

from __future__ import annotations

import io

import ember
import ember.jit
import ember.onnx
import numpy as np
import onnx
import pytest
from ember import nn
from ember.demo import build_model
from ember.onnx import UnsupportedOperatorError
from onnx_helpers import check, export_bytes, run_onnx

BATCH = {"input": {0: "batch"}, "output": {0: "batch"}}


def _fresh(*shape: int) -> ember.Tensor:
    return ember.randn(*shape)


@pytest.fixture(autouse=True)
def _seed() -> None:
    ember.manual_seed(0)


@pytest.mark.parametrize(
    "layer, shape",
    [
        (lambda: nn.Linear(6, 4), (6,)),
        (lambda: nn.Linear(6, 4, bias=False), (3, 6)),
        (lambda: nn.Conv1d(3, 5, 3, stride=2, padding=1), (3, 11)),
        (lambda: nn.Conv2d(4, 6, 3, padding="same", dilation=2, groups=2), (4, 9, 9)),
        (lambda: nn.Conv2d(3, 4, (3, 2), stride=(2, 1), bias=False), (3, 8, 7)),
        (lambda: nn.MaxPool1d(3, stride=2, padding=1), (3, 10)),
        (lambda: nn.MaxPool2d(2), (3, 8, 8)),
        (lambda: nn.AvgPool1d(2), (3, 10)),
        (lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), (3, 9, 9)),
        (lambda: nn.AdaptiveAvgPool2d(1), (3, 5, 5)),
        (lambda: nn.LayerNorm(6), (5, 6)),
        (lambda: nn.LayerNorm((5, 6), elementwise_affine=False), (5, 6)),
        (lambda: nn.Dropout(0.5), (7,)),
        (lambda: nn.Flatten(), (2, 3, 4)),
    ],
)
def test_layer_with_dynamic_batch(layer, shape) -> None:
    model = layer()
    for p in model.parameters():
        ember.nn.init.uniform_(p, -1, 1)
    check(model.eval(), (_fresh(2, *shape),), (_fresh(5, *shape),), BATCH)


@pytest.mark.parametrize("norm, shape", [(nn.BatchNorm1d, (4, 7)), (nn.BatchNorm2d, (4, 5, 5))])
def test_batch_norm_exports_running_statistics(norm, shape) -> None:
    model = norm(4)
    model(_fresh(8, *shape) * 3 + 1)  # training step: running statistics move away from 0 / 1
    nn.init.uniform_(model.weight, 0.5, 2)
    check(model, (_fresh(2, *shape),), (_fresh(3, *shape),), BATCH)
    assert model.training  # export ran in eval mode and put the mode back


def test_embedding_dynamic_batch_and_length() -> None:
    model = nn.Embedding(10, 4)
    axes = {"input": {0: "batch", 1: "length"}, "output": {0: "batch", 1: "length"}}
    proto = check(model, (ember.tensor([[1, 2, 3]]),), (ember.randint(0, 10, (4, 6)),), axes)
    dims = [d.dim_param for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "length"]


ACTIVATIONS = [
    nn.ReLU(),
    nn.Sigmoid(),
    nn.Tanh(),
    nn.GELU(),
    nn.GELU(approximate="tanh"),
    nn.SiLU(),
    nn.Mish(),
    nn.Softplus(beta=2.0),
    nn.LogSigmoid(),
    nn.LeakyReLU(0.2),
    nn.ELU(0.5),
    nn.CELU(1.5),
    nn.SELU(),
    nn.Hardtanh(-0.5, 0.5),
    nn.ReLU6(),
    nn.Hardsigmoid(),
    nn.Hardswish(),
    nn.Softmax(dim=1),
    nn.LogSoftmax(dim=-1),
]


@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda a: repr(a))
def test_activation(act) -> None:
    check(act, (_fresh(2, 5) * 4,), (_fresh(6, 5) * 4,), BATCH)


def test_demo_cnn_with_dynamic_batch() -> None:
    model = build_model().eval()
    axes = {"images": {0: "batch"}, "logits": {0: "batch"}}
    proto = check(
        model,
        (_fresh(2, 1, 8, 8),),
        (_fresh(9, 1, 8, 8),),
        axes,
        input_names=["images"],
        output_names=["logits"],
    )
    # Parameters are initializers under their state_dict names, holding their values.
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    for name, p in model.state_dict().items():
        np.testing.assert_array_equal(inits[name], p.numpy())
    assert [o.name for o in proto.graph.output] == ["logits"]
    out_dims = proto.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in out_dims] == ["batch", 10]


def test_functional_code_and_constant_folding() -> None:
    w = ember.randn(3, 4)

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = nn.Parameter(ember.tensor([2.0, 3.0, 4.0]))

        def forward(self, x, y):
            mask = ember.tril(ember.ones(3, 3)) > 0  # built from sizes: a constant of the trace
            h = (x @ w.t() * self.scale.exp() - y[:, :3]).masked_fill(mask[0], 0.0)
            return ember.cat([h.unsqueeze(1), h[:, None] ** 2], 1).flatten(1).mean(-1, keepdim=True)

    args = (_fresh(2, 4), _fresh(2, 5))
    check(Model(), args, (_fresh(7, 4), _fresh(7, 5)), {"input": {0: "b"}, "input.1": {0: "b"}})


def test_unmapped_op_raises_naming_it() -> None:
    def f(x):
        return ember.cumsum(x, 0)

    with pytest.raises(
        UnsupportedOperatorError, match="Exporting the operator 'cumsum' to ONNX opset version 17"
    ):
        export_bytes(f, (_fresh(3),))


def test_writes_a_file_and_keeps_the_default_names(tmp_path) -> None:
    path = tmp_path / "m.onnx"
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    x = _fresh(4, 3)
    ember.onnx.export(model, x, str(path))
    proto = onnx.load(str(path))
    assert [i.name for i in proto.graph.input] == ["input"]
    assert [o.name for o in proto.graph.output] == ["output"]
    assert proto.opset_import[0].version == 17
    np.testing.assert_allclose(run_onnx(path.read_bytes(), x)[0], model(x).detach().numpy(), atol=1e-6)


def test_file_object_and_opset() -> None:
    f = io.BytesIO()
    ember.onnx.export(nn.LayerNorm(3), (_fresh(2, 3),), f, opset_version=18)
    assert onnx.load_from_string(f.getvalue()).opset_import[0].version == 18
    with pytest.raises(ValueError, match="Unsupported ONNX opset version: 9"):
        ember.onnx.export(nn.ReLU(), (_fresh(2),), io.BytesIO(), opset_version=9)


def test_view_by_the_traced_batch_size_follows_a_dynamic_batch() -> None:
    class Head(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(12, 2)

        def forward(self, x):
            return self.fc(x.view(x.size(0), -1))

    check(Head(), (_fresh(2, 3, 4),), (_fresh(6, 3, 4),), BATCH)


def test_export_of_a_traced_module_and_refused_modes() -> None:
    model = nn.Linear(3, 2)
    traced = ember.jit.trace(model, _fresh(2, 3))
    check(traced, (_fresh(2, 3),), (_fresh(5, 3),), BATCH)
    with pytest.raises(ember.onnx.OnnxExporterError, match="eval mode only"):
        export_bytes(model, (_fresh(2, 3),), training=ember.onnx.TrainingMode.TRAINING)
    with pytest.raises(ember.onnx.OnnxExporterError, match="export_params=False is not supported"):
        export_bytes(model, (_fresh(2, 3),), export_params=False)


def test_unknown_dynamic_axes_key_warns() -> None:
    with pytest.warns(
        UserWarning, match="Provided key nope for dynamic axes is not a valid input/output name"
    ):
        export_bytes(nn.Linear(2, 2), (_fresh(1, 2),), dynamic_axes={"nope": [0]})


def test_is_in_onnx_export_while_exporting_only() -> None:
    seen = []

    def f(x):
        seen.append(ember.onnx.is_in_onnx_export())
        return x * 2

    assert not ember.onnx.is_in_onnx_export()
    export_bytes(f, (_fresh(2),))
    assert seen == [True]
    assert not ember.onnx.is_in_onnx_export()


def test_without_constant_folding_the_ops_on_parameters_are_exported() -> None:
    class Scaled(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.log_scale = nn.Parameter(ember.tensor([0.5, -1.0]))
            self.register_buffer("table", ember.arange(12.0).reshape(6, 2))

        def forward(self, x):
            return x * self.log_scale.exp() + self.table[: x.size(1)].sum(0)

    model = Scaled()
    proto = check(model, (_fresh(3, 4, 2),), (_fresh(5, 4, 2),), BATCH, do_constant_folding=False)
    ops = [n.op_type for n in proto.graph.node]
    assert "Exp" in ops and "Slice" in ops and "ReduceSum" in ops
    folded = check(model, (_fresh(3, 4, 2),), (_fresh(5, 4, 2),), BATCH)
    assert "Exp" not in [n.op_type for n in folded.graph.node]


@pytest.mark.parametrize("opset", [17, 18, 21])
def test_attention_weights_and_means_across_opsets(opset) -> None:
    model = nn.MultiheadAttention(4, 2)
    x = _fresh(3, 2, 4)
    y = _fresh(3, 5, 4)
    axes = {"input": {1: "b"}, "input.1": {1: "b"}, "input.2": {1: "b"}}
    check(model, (x, x, x), (y, y, y), axes, opset_version=opset)
    check(lambda t: t.mean((0, 2)), (x,), (y,), {"input": {1: "b"}}, opset_version=opset)


def test_elementwise_comparison_and_shape_ops() -> None:
    def f(x, y):
        flags = (x > y.long()).float() + (x == 0).float() + (x <= 0.5).float() + (x != y).float()
        picked = ember.where(x >= 0, x, y) + x.div(2) + y.abs().sqrt() + x.masked_fill(x < 0, 1.5)
        shaped = ember.stack([x, y], -1).sum(-1) + x.transpose(0, 1).t() + x.unsqueeze(0).squeeze(0)
        indexed = (
            x[..., 1:2] + x[:, -1:] + x[0] + x.select(1, 0).unsqueeze(1) + y.split([1, 3], 1)[1].sum(1, True)
        )
        mixed = ember.softmax(x, 1) + x.to(ember.float64).float() + x.pow(2) + 2**x - x @ ember.ones(4, 4)
        return flags + picked + shaped + indexed + mixed + ember.bmm(x[None], ember.ones(1, 4, 3)).sum()

    axes = {"input": {0: "b"}, "input.1": {0: "b"}}
    check(f, (_fresh(2, 4), _fresh(2, 4)), (_fresh(2, 4), _fresh(2, 4)))
    check(lambda x, y: f(x, y)[:, :2], (_fresh(3, 4), _fresh(3, 4)), (_fresh(6, 4), _fresh(6, 4)), axes)


def test_keyword_options_of_pytorchs_signature() -> None:
    model = nn.Linear(3, 2)
    x = _fresh(2, 3)
    data = export_bytes(model, (x,), dynamo=False, external_data=False, keep_initializers_as_inputs=True)
    proto = onnx.load_from_string(data)
    assert [i.name for i in proto.graph.input] == ["input", "weight", "bias"]
    session_out = ort_run_with_initializers(data, x)
    np.testing.assert_allclose(session_out, model(x).detach().numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError):
        ember.onnx.export(model, (x,), io.BytesIO(), True)  # options are keyword-only, as PyTorch's
    with pytest.raises(ember.onnx.OnnxExporterError, match="dynamic_shapes is not supported"):
        export_bytes(model, (x,), dynamic_shapes={"input": {0: "b"}})


def ort_run_with_initializers(data: bytes, x: ember.Tensor) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return session.run(None, {"input": x.numpy()})[0]
