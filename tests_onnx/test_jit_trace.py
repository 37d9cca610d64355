"""ember.jit.trace: record one forward pass, replay it on new inputs, warn where Python values
made the trace input-dependent (PyTorch's TracerWarning and its wording)."""

from __future__ import annotations

import warnings

import ember
import ember.jit
import pytest
from ember import nn
from ember.demo import build_model
from ember.jit import TracerWarning


@pytest.fixture(autouse=True)
def _seed() -> None:
    ember.manual_seed(0)


def _ops(traced) -> list[str]:
    return [n.name for n in traced.graph.nodes]


def test_module_trace_replays_on_another_batch() -> None:
    model = build_model().eval()
    traced = ember.jit.trace(model, ember.randn(2, 1, 8, 8))
    assert _ops(traced) == [
        "conv2d",
        "nn.functional.relu",
        "max_pool2d",
        "conv2d",
        "nn.functional.relu",
        "max_pool2d",
        "flatten",
        "nn.functional.linear",
        "nn.functional.relu",
        "nn.functional.linear",
    ]
    x = ember.randn(5, 1, 8, 8)
    assert ember.equal(traced(x), model(x))
    assert "conv2d(input=%input, weight=%0.weight" in traced.code


def test_parameters_stay_live_in_the_replay() -> None:
    model = nn.Linear(3, 2)
    traced = ember.jit.trace(model, ember.randn(4, 3))
    with ember.no_grad():
        model.weight.mul_(2)
    x = ember.randn(4, 3)
    assert ember.equal(traced(x), model(x))


def test_ops_on_constants_are_constants_of_the_trace() -> None:
    def f(x):
        return x + ember.ones(3) * ember.arange(3)

    traced = ember.jit.trace(f, ember.zeros(3))
    assert _ops(traced) == ["add"]
    assert traced(ember.ones(3)).tolist() == [1.0, 2.0, 3.0]


def test_ops_sharing_a_factory_are_told_apart() -> None:
    def f(x):
        return x.exp() - ember.tanh(x) + ember.sigmoid(x)

    traced = ember.jit.trace(f, ember.randn(4))
    assert _ops(traced) == ["exp", "tanh", "sub", "sigmoid", "add"]
    x = ember.randn(4)
    assert ember.equal(traced(x), f(x))


def test_indexing_is_recorded() -> None:
    def f(x):
        return x[:, 1:] * 2

    traced = ember.jit.trace(f, ember.randn(2, 3))
    assert _ops(traced) == ["Tensor.__getitem__", "mul"]
    x = ember.randn(4, 5)
    assert ember.equal(traced(x), f(x))


def test_lstm_is_one_node_and_replays_another_length() -> None:
    model = nn.LSTM(3, 4, 2)
    traced = ember.jit.trace(model, ember.randn(5, 2, 3))
    assert _ops(traced) == ["nn.LSTM"]
    x = ember.randn(8, 3, 3)
    (out, (h, c)), (out2, (h2, c2)) = traced(x), model(x)
    assert ember.equal(out, out2) and ember.equal(h, h2) and ember.equal(c, c2)


@pytest.mark.parametrize(
    "convert, kind",
    [
        (lambda t: bool(t.sum() > 0), "boolean"),
        (lambda t: t.sum().item(), "number"),
        (lambda t: float(t.sum()), "float"),
        (lambda t: int(t.sum()), "integer"),
        (lambda t: len(t.tolist()), "list"),
    ],
)
def test_python_values_from_tensors_warn(convert, kind) -> None:
    def f(x):
        return x * convert(x)

    message = (
        f"Converting a tensor to a Python {kind} might cause the trace to be incorrect. We can't "
        "record the data flow of Python values, so this value will be treated as a constant in the "
        "future. This means that the trace might not generalize to other inputs!"
    )
    with pytest.warns(TracerWarning) as record:
        ember.jit.trace(f, ember.ones(2), check_trace=False)
    assert [str(w.message) for w in record] == [message]


def test_no_warning_for_sizes_or_constants() -> None:
    def f(x):
        return x.reshape(x.size(0), -1) * float(ember.tensor(2.0))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traced = ember.jit.trace(f, ember.ones(2, 3))
    assert traced(ember.ones(2, 3)).tolist() == [[2.0] * 3] * 2


def test_check_inputs_catch_a_branch() -> None:
    def f(x):
        return x * 2 if x.sum() > 0 else x - 5

    with pytest.warns(TracerWarning) as record:
        traced = ember.jit.trace(f, ember.ones(2), check_inputs=[(-ember.ones(2),)])
    assert any(
        str(w.message).startswith("Output nr 1. of the traced function does not match") for w in record
    )
    assert traced(-ember.ones(2)).tolist() == [-2.0, -2.0]  # the branch taken while tracing


def test_replay_checks_the_number_of_inputs() -> None:
    traced = ember.jit.trace(lambda a, b: a + b, (ember.ones(2), ember.ones(2)))
    with pytest.raises(RuntimeError, match="traced graph expects 2 input tensors, got 1"):
        traced(ember.ones(2))


def test_trace_refuses_a_non_callable() -> None:
    with pytest.raises(TypeError, match="trace expected a function or Module, got int"):
        ember.jit.trace(3, ember.ones(2))


def test_is_tracing_inside_the_trace_only() -> None:
    seen = []

    def f(x):
        seen.append(ember.jit.is_tracing())
        return x + 1

    assert not ember.jit.is_tracing()
    assert not ember.jit.is_scripting()
    ember.jit.trace(f, ember.ones(2), check_trace=False)
    assert seen == [True]
    assert not ember.jit.is_tracing()
