"""The CPU backend's ``compile_graph``: small elementwise stretches of a compiled function run as
one generated function, with results bit-identical to the kernels'."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.backends.graph import KernelCall, KernelGraph, Value
from ember_cpu.fuse import compile_graph
from ember_cpu.kernels import KERNELS, LARGE


def _chain(x: ember.Tensor) -> ember.Tensor:
    for _ in range(5):
        x = (x * 1.01 + 0.1).tanh() - x / 3
    return x


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_a_compiled_chain_is_fused_and_bit_identical(dtype: ember.dtype) -> None:
    compiled = ember.compile(_chain)
    for seed in range(3):
        ember.manual_seed(seed)
        x = ember.randn(8, 8, dtype=dtype)
        got, want = compiled(x), _chain(x)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert "fused by the backend" in compiled.code


def test_a_training_step_replays_bit_identical_with_fusion() -> None:
    def make() -> tuple[ember.nn.Module, ember.optim.Optimizer]:
        ember.manual_seed(0)
        m = ember.nn.Sequential(ember.nn.Linear(6, 8), ember.nn.Tanh(), ember.nn.Linear(8, 1))
        return m, ember.optim.SGD(m.parameters(), lr=0.1)

    def step(m: ember.nn.Module, opt: ember.optim.Optimizer, x: ember.Tensor) -> ember.Tensor:
        opt.zero_grad()
        loss = ((m(x).sigmoid() * 2 - 1) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    (m1, o1), (m2, o2) = make(), make()
    compiled = ember.compile(step)
    for i in range(4):
        x = ember.randn(5, 6)
        assert step(m1, o1, x).item() == compiled(m2, o2, x).item()
    for a, b in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _graph(calls: list[KernelCall], meta: dict[int, tuple], outputs: set[int]) -> KernelGraph:
    return KernelGraph("cpu", calls, frozenset({0}), frozenset(outputs), meta)


def test_scalars_are_pinned_to_the_array_dtype_as_numpy_does() -> None:
    a = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    calls = [
        KernelCall("mul", (Value(0), 1.01), {}, Value(1)),
        KernelCall("add", (Value(1), 3), {}, Value(2)),
        KernelCall("sub", (0.5, Value(2)), {}, Value(3)),
    ]
    meta = {n: ((3, 4), np.dtype(np.float32)) for n in range(4)}
    fused = compile_graph(_graph(calls, meta, {3}))
    assert fused is not None and len(fused.calls) == 1
    (got,) = fused.calls[0].fn(a)  # type: ignore[misc]
    want = KERNELS["sub"](0.5, KERNELS["add"](KERNELS["mul"](a, 1.01), 3))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_large_arrays_mixed_dtypes_and_out_keep_their_kernels() -> None:
    big = ((LARGE,), np.dtype(np.float32))
    calls = [KernelCall("neg", (Value(0),), {}, Value(1)), KernelCall("exp", (Value(1),), {}, Value(2))] * 2
    assert compile_graph(_graph(calls, {0: big, 1: big, 2: big}, {2})) is None
    half = ((4,), np.dtype(np.float16))
    assert compile_graph(_graph(calls, {0: half, 1: half, 2: half}, {2})) is None
    small = ((4,), np.dtype(np.float32))
    writes = [KernelCall("add", (Value(0), Value(0)), {"out": Value(0)}, Value(0))] * 3
    assert compile_graph(_graph(writes, {0: small}, {0})) is None


def test_values_used_after_the_stretch_are_returned() -> None:
    small = ((4,), np.dtype(np.float64))
    calls = [
        KernelCall("exp", (Value(0),), {}, Value(1)),
        KernelCall("neg", (Value(1),), {}, Value(2)),
        KernelCall("tanh", (Value(2),), {}, Value(3)),
    ]
    fused = compile_graph(_graph(calls, dict.fromkeys(range(4), small), {1, 3}))
    assert fused is not None
    assert fused.calls[0].out == (Value(1), Value(3))
    a = np.arange(4.0)
    e, t = fused.calls[0].fn(a)  # type: ignore[misc]
    np.testing.assert_array_equal(e, np.exp(a))
    np.testing.assert_array_equal(t, np.tanh(-np.exp(a)))
