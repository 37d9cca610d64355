"""LSTM/GRU/RNN export as ONNX LSTM/GRU/RNN operators, and multi-head attention and the
Transformer encoder, run in ONNX Runtime on another sequence length and batch size."""

from __future__ import annotations

import ember
import onnx
import pytest
from ember import nn
from onnx_helpers import check


@pytest.fixture(autouse=True)
def _seed() -> None:
    ember.manual_seed(0)


SEQ_BATCH = {"input": {0: "seq", 1: "batch"}}


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
@pytest.mark.parametrize("layers, bidirectional", [(1, False), (2, True)])
def test_recurrent_with_initial_state(cls, layers, bidirectional) -> None:
    model = cls(4, 5, layers, bidirectional=bidirectional)
    d = 2 if bidirectional else 1

    def args(seq: int, batch: int) -> tuple:
        h = ember.randn(layers * d, batch, 5)
        return (ember.randn(seq, batch, 4), (h, ember.randn(layers * d, batch, 5)) if cls is nn.LSTM else h)

    axes = {**SEQ_BATCH, "input.1": {1: "batch"}}
    if cls is nn.LSTM:
        axes["input.2"] = {1: "batch"}
    proto = check(model, args(3, 2), args(7, 4), axes)
    ops = {n.op_type for n in proto.graph.node}
    assert {"LSTM": "LSTM", "GRU": "GRU", "RNN": "RNN"}[cls.__name__] in ops
    assert sum(n.op_type == cls.__name__ for n in proto.graph.node) == layers


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_recurrent_batch_first_without_state(cls) -> None:
    model = cls(3, 4, 2, batch_first=True, bias=False)
    check(model, (ember.randn(2, 5, 3),), (ember.randn(6, 8, 3),), {"input": {0: "batch", 1: "seq"}})


def test_rnn_relu() -> None:
    model = nn.RNN(3, 4, nonlinearity="relu")
    check(model, (ember.randn(5, 2, 3),), (ember.randn(5, 3, 3),), SEQ_BATCH)


def test_multihead_attention_with_weights_and_padding_mask() -> None:
    model = nn.MultiheadAttention(8, 2)

    def args(batch: int) -> tuple:
        q, kv = ember.randn(3, batch, 8), ember.randn(5, batch, 8)
        pad = ember.zeros(batch, 5, dtype=ember.bool)
        pad[:, -1] = True
        return (q, kv, kv, pad)

    axes = {"input": {1: "b"}, "input.1": {1: "b"}, "input.2": {1: "b"}, "input.3": {0: "b"}}
    check(model, args(2), args(4), axes)


def test_multihead_attention_batch_first() -> None:
    model = nn.MultiheadAttention(6, 3, batch_first=True)
    x = ember.randn(2, 4, 6)
    y = ember.randn(5, 4, 6)
    check(lambda t: model(t, t, t, need_weights=False)[0], (x,), (y,), {"input": {0: "b"}})


def test_transformer_encoder_with_causal_mask() -> None:
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1)
    model = nn.TransformerEncoder(layer, 2)
    mask = nn.Transformer.generate_square_subsequent_mask(4)

    def forward(src):
        return model(src, mask=mask)

    model.eval()
    proto = check(forward, (ember.randn(4, 2, 8),), (ember.randn(4, 5, 8),), {"input": {1: "b"}})
    assert {"LayerNormalization", "Softmax", "MatMul"} <= {n.op_type for n in proto.graph.node}
    assert not any(n.op_type == "Dropout" for n in proto.graph.node)


def test_transformer_encoder_norm_first_gelu_batch_first() -> None:
    layer = nn.TransformerEncoderLayer(8, 4, 16, activation="gelu", batch_first=True, norm_first=True)
    model = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).eval()
    proto = check(model, (ember.randn(2, 3, 8),), (ember.randn(6, 3, 8),), {"input": {0: "b"}})
    onnx.checker.check_model(proto)


def test_encoder_decoder_transformer_with_target_mask() -> None:
    model = nn.Transformer(8, 2, 1, 1, 16).eval()
    mask = nn.Transformer.generate_square_subsequent_mask(3)

    def forward(src, tgt):
        return model(src, tgt, tgt_mask=mask)

    axes = {"input": {1: "b"}, "input.1": {1: "b"}}
    check(
        forward,
        (ember.randn(4, 2, 8), ember.randn(3, 2, 8)),
        (ember.randn(4, 5, 8), ember.randn(3, 5, 8)),
        axes,
    )
