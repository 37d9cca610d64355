"""THE mapping from ember's public op names to ONNX builders: one table.

Keys are public names without their namespace (``linear`` stands for ``nn.functional.linear``
and ``Tensor.linear``; ``relu`` also for the in-place ``relu_``); modules recorded whole by the
tracer are keyed ``nn.<Class>``. An op of a trace with no entry raises
``UnsupportedOperatorError`` naming it. To add an op: write a builder (context, node -> ONNX
output names) and add its line here.
"""

from __future__ import annotations

from . import _attention, _nn, _rnn
from . import _basic as b
from ._basic import Builder

TABLE: dict[str, Builder] = {
    # layers
    "linear": _nn.linear,
    "conv1d": _nn.conv,
    "conv2d": _nn.conv,
    "max_pool1d": _nn.max_pool,
    "max_pool2d": _nn.max_pool,
    "avg_pool1d": _nn.avg_pool,
    "avg_pool2d": _nn.avg_pool,
    "adaptive_avg_pool1d": _nn.adaptive_avg_pool,
    "adaptive_avg_pool2d": _nn.adaptive_avg_pool,
    "batch_norm": _nn.batch_norm,
    "layer_norm": _nn.layer_norm,
    "embedding": _nn.embedding,
    "dropout": b.identity,  # export runs in eval mode: dropout is the identity
    "dropout1d": b.identity,
    "dropout2d": b.identity,
    "alpha_dropout": b.identity,
    "multi_head_attention_forward": _attention.multi_head_attention,
    "nn.LSTM": _rnn.rnn,
    "nn.GRU": _rnn.rnn,
    "nn.RNN": _rnn.rnn,
    # activations
    "relu": b.unary("Relu"),
    "sigmoid": b.unary("Sigmoid"),
    "tanh": b.unary("Tanh"),
    "gelu": b.gelu,
    "silu": b.silu,
    "mish": b.mish,
    "softplus": b.softplus,
    "logsigmoid": b.logsigmoid,
    "leaky_relu": b.with_attr("LeakyRelu", "alpha", "negative_slope", 0.01, 1),
    "elu": b.with_attr("Elu", "alpha", "alpha", 1.0, 1),
    "celu": b.with_attr("Celu", "alpha", "alpha", 1.0, 1),
    "selu": b.unary("Selu"),
    "hardtanh": b.clip("min_val", "max_val", -1.0, 1.0),
    "relu6": b.clip("_", "_", 0.0, 6.0),
    "hardsigmoid": b.unary("HardSigmoid", alpha=1 / 6, beta=0.5),
    "hardswish": b.unary("HardSwish"),
    "softmax": b.softmax("Softmax"),
    "log_softmax": b.softmax("LogSoftmax"),
    # element-wise
    "add": b.binary("Add"),
    "sub": b.binary("Sub"),
    "mul": b.binary("Mul"),
    "div": b.binary("Div"),
    "true_divide": b.binary("Div"),
    "eq": b.binary("Equal", compare=True),
    "ne": b.not_equal,
    "not_equal": b.not_equal,
    "gt": b.binary("Greater", compare=True),
    "greater": b.binary("Greater", compare=True),
    "ge": b.binary("GreaterOrEqual", compare=True),
    "greater_equal": b.binary("GreaterOrEqual", compare=True),
    "lt": b.binary("Less", compare=True),
    "less": b.binary("Less", compare=True),
    "le": b.binary("LessOrEqual", compare=True),
    "less_equal": b.binary("LessOrEqual", compare=True),
    "logical_not": b.unary("Not"),
    "pow": b.pow_,
    "neg": b.unary("Neg"),
    "exp": b.unary("Exp"),
    "log": b.unary("Log"),
    "sqrt": b.unary("Sqrt"),
    "rsqrt": b.rsqrt,
    "abs": b.unary("Abs"),
    "reciprocal": b.unary("Reciprocal"),
    "sin": b.unary("Sin"),
    "cos": b.unary("Cos"),
    "erf": b.unary("Erf"),
    "matmul": b.matmul,
    "mm": b.matmul,
    "bmm": b.matmul,
    "masked_fill": b.masked_fill,
    "where": b.where,
    "mean": b.reduce("ReduceMean"),
    "sum": b.reduce("ReduceSum"),
    # shapes, copies, casts
    "view": b.reshape,
    "reshape": b.reshape,
    "flatten": b.flatten,
    "transpose": b.transpose,
    "t": b.transpose,
    "permute": b.permute,
    "unsqueeze": b.unsqueeze,
    "squeeze": b.squeeze,
    "chunk": b.split_like_outputs,
    "split": b.split_like_outputs,
    "unbind": b.split_like_outputs,
    "cat": b.cat,
    "concat": b.cat,
    "stack": b.stack,
    "select": b.select,
    "expand": b.expand,
    "__getitem__": _nn.getitem,
    "contiguous": b.identity,
    "clone": b.identity,
    "detach": b.identity,
    "to": b.cast_to_output,
    "type": b.cast_to_output,
    "float": b.cast_to_output,
    "double": b.cast_to_output,
    "half": b.cast_to_output,
    "long": b.cast_to_output,
    "int": b.cast_to_output,
    "cpu": b.identity,
}

_NAMESPACES = ("nn.functional.", "Tensor.", "special.", "linalg.")


def builder_for(name: str) -> Builder | None:
    """The builder of a recorded op name, or None."""
    if name in TABLE:
        return TABLE[name]
    for prefix in _NAMESPACES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]  # the in-place form maps as the out-of-place one
    return TABLE.get(name)
