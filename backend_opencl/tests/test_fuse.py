"""``compile_graph`` (fuse.py): elementwise chains of a captured graph as one kernel each.

The fused kernel must give eager's results (bit for bit: each intermediate is stored and
reloaded as eager's array is, and contraction is off) in fewer launches, and must leave alone
what it cannot fuse: intermediates the graph still needs, chains across an in-place write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import ember.backends as eb
import numpy as np
import pytest
from _ocl_helpers import declared, values
from ember import nn
from ember.backends.graph import KernelCall, KernelGraph, Value
from ember_opencl import fuse, runtime
from ember_opencl.fuse import MAX_ARRAYS, FusedKernel, compile_graph


@pytest.fixture(autouse=True)
def _capture_on_the_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests time the call after ``cf(...)``: capture it at once, not after a warm-up."""
    monkeypatch.setattr(ember.compiler.config, "warmup", 0)


V = Value


@pytest.fixture
def exports(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chains may write values used after them (off by default: slower on PoCL)."""
    monkeypatch.setattr(fuse, "MAX_EXPORTS", 12)


def _launches(fn: Callable[[], Any]) -> tuple[Any, int]:
    """``fn()``'s result and how many kernels it launched."""
    runtime.kernel_log = []
    try:
        out = fn()
        return out, len(runtime.kernel_log)
    finally:
        runtime.kernel_log = None


def _run(ocl: eb.LoadedBackend, graph: KernelGraph, env: dict[int, Any]) -> dict[int, Any]:
    """Interpret ``graph`` as replay does: ``fn`` when set, else the backend's kernel."""
    env = dict(env)
    for c in graph.calls:
        args = [env[a.n] if isinstance(a, Value) else a for a in c.args]
        kw = {k: env[v.n] if isinstance(v, Value) else v for k, v in c.kwargs.items()}
        r = c.fn(*args, **kw) if c.fn is not None else ocl.k[c.op](*args, **kw)
        if isinstance(c.out, Value):
            env[c.out.n] = r
        elif isinstance(c.out, tuple):
            for v, a in zip(c.out, r):
                env[v.n] = a
    return env


def _graph(calls: list[KernelCall], inputs: set[int], outputs: set[int]) -> KernelGraph:
    return KernelGraph("opencl", calls, frozenset(inputs), frozenset(outputs))


def _t(rng: np.random.Generator, shape: tuple[int, ...], **kw: Any) -> ember.Tensor:
    return ember.tensor(rng.standard_normal(shape).astype("float32"), device="opencl", **kw)


def test_chain_compiles_to_fewer_launches_with_eager_values() -> None:
    def f(a: ember.Tensor, b: ember.Tensor, c: ember.Tensor) -> ember.Tensor:
        return (a * b + 1).tanh() * c

    rng = np.random.default_rng(0)
    a, b, c = (_t(rng, (64, 33)) for _ in range(3))
    cf = ember.compile(f)
    cf(a, b, c)  # capture
    want, eager = _launches(lambda: f(a, b, c).cpu().numpy())
    got, fused = _launches(lambda: cf(a, b, c).cpu().numpy())
    np.testing.assert_array_equal(got, want)
    assert eager == 4
    assert fused < eager
    assert "fused" not in cf.explain()


def test_expanded_operands_fuse() -> None:
    def f(x: ember.Tensor, w: ember.Tensor, b: ember.Tensor) -> ember.Tensor:
        return ((x * w + b) * 0.5).sigmoid() - b

    rng = np.random.default_rng(1)
    x, w, b = _t(rng, (6, 5)), _t(rng, (5,)), _t(rng, (6, 1))
    cf = ember.compile(f)
    cf(x, w, b)
    want, eager = _launches(lambda: f(x, w, b).cpu().numpy())
    got, fused = _launches(lambda: cf(x, w, b).cpu().numpy())
    np.testing.assert_array_equal(got, want)
    assert fused < eager


def test_returned_intermediate_is_kept() -> None:
    def f(a: ember.Tensor, b: ember.Tensor) -> tuple[ember.Tensor, ember.Tensor]:
        y = a * b + 1
        return y, (y.tanh() * 2).exp()

    rng = np.random.default_rng(2)
    a, b = _t(rng, (7, 9)), _t(rng, (7, 9))
    cf = ember.compile(f)
    cf(a, b)
    want = [t.cpu().numpy() for t in f(a, b)]
    got = [t.cpu().numpy() for t in cf(a, b)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("between", [False, True])
def test_kept_intermediates_are_written_or_end_a_chain(
    ocl: eb.LoadedBackend, exports: None, between: bool
) -> None:
    # v2 = a*b; v3 = v2+1 (an output); v4 = tanh(v3); v5 = v4*a. One kernel writes v5 and v3;
    # a call reading v3 inside the chain (a sum) makes two: {mul, add} and {tanh, mul}.
    calls = [
        KernelCall("mul", (V(0), V(1)), {}, V(2)),
        KernelCall("add", (V(2), 1), {}, V(3)),
        KernelCall("tanh", (V(3),), {}, V(4)),
        KernelCall("mul", (V(4), V(0)), {}, V(5)),
    ]
    if between:
        calls.insert(2, KernelCall("sum", (V(3), (0, 1), False), {}, V(6)))
    outputs = {3, 5} | ({6} if between else set())
    graph = _graph(calls, {0, 1}, outputs)
    new = compile_graph(graph)
    assert new is not None
    fused = [c for c in new.calls if isinstance(c.fn, FusedKernel)]
    assert [c.out for c in fused] == ([V(3), V(5)] if between else [(V(5), V(3))])
    rng = np.random.default_rng(3)
    env = {n: ocl.backend.from_numpy(values(rng, (4, 5), "float32"), 0) for n in (0, 1)}
    want, got = _run(ocl, graph, env), _run(ocl, new, env)
    for n in outputs:
        np.testing.assert_array_equal(ocl.backend.to_numpy(got[n]), ocl.backend.to_numpy(want[n]))


def test_nothing_to_fuse_returns_none() -> None:
    calls = [
        KernelCall("matmul", (V(0), V(1)), {}, V(2)),
        KernelCall("sum", (V(2), (0,), False), {}, V(3)),
        KernelCall("exp", (V(3),), {}, V(4)),
    ]
    assert compile_graph(_graph(calls, {0, 1}, {4})) is None
    # nor does a chain whose intermediate another call reads before the chain ends
    calls = [
        KernelCall("exp", (V(0),), {}, V(1)),
        KernelCall("sum", (V(1), (0,), False), {}, V(3)),
        KernelCall("neg", (V(1),), {}, V(2)),
    ]
    assert compile_graph(_graph(calls, {0}, {2, 3})) is None


def test_chain_does_not_span_an_in_place_write(ocl: eb.LoadedBackend) -> None:
    # v1 = exp(v0); v0 += 1 (in place); v3 = v1 * v0 reads the updated v0
    calls = [
        KernelCall("exp", (V(0),), {}, V(1)),
        KernelCall("add", (V(0), 1.0), {"out": V(0)}, V(0)),
        KernelCall("mul", (V(1), V(0)), {}, V(3)),
    ]
    graph = _graph(calls, {0}, {3})
    assert compile_graph(graph) is None
    rng = np.random.default_rng(4)
    x = values(rng, (3, 4), "float32")
    got = _run(ocl, graph, {0: ocl.backend.from_numpy(x, 0)})
    e = ocl.backend.to_numpy(ocl.k["exp"](ocl.backend.from_numpy(x, 0)))
    np.testing.assert_array_equal(ocl.backend.to_numpy(got[3]), e * (x + np.float32(1)))


# matmul -> v2; v2 += bias (in place); then the case's calls. fuses: whether the write joins a chain.
_INPLACE = {
    "bias_relu": ([KernelCall("maximum", (V(2), 0.0), {}, V(4))], {4}, True),
    "two_writes": (
        [KernelCall("mul", (V(2), 2.0), {"out": V(2)}, V(2)), KernelCall("tanh", (V(2),), {}, V(4))],
        {4},
        True,
    ),
    "written_array_is_an_output": ([KernelCall("maximum", (V(2), 0.0), {}, V(4))], {2, 4}, False),
    "viewed_after": (
        [KernelCall("reshape", (V(2), (12,)), {}, V(5)), KernelCall("exp", (V(5),), {}, V(4))],
        {4},
        False,
    ),
    "used_after_elsewhere": (
        [KernelCall("exp", (V(2),), {}, V(4)), KernelCall("sum", (V(2), (0,), False), {}, V(5))],
        {4, 5},
        False,
    ),
}


@pytest.mark.parametrize("case", sorted(_INPLACE))
def test_in_place_bias_write_fuses_only_where_nothing_else_sees_it(ocl: eb.LoadedBackend, case: str) -> None:
    tail, outputs, fuses = _INPLACE[case]
    calls = [
        KernelCall("matmul", (V(0), V(1)), {}, V(2)),
        KernelCall("add", (V(2), V(3)), {"out": V(2)}, V(2)),
        *tail,
    ]
    graph = _graph(calls, {0, 1, 3}, outputs)
    new = compile_graph(graph)
    kept = [] if new is None else [c for c in new.calls if c.kwargs.get("out") is not None]
    assert (new is not None and not kept) == fuses
    rng = np.random.default_rng(9)
    env = {
        n: ocl.backend.from_numpy(values(rng, shape, "float32"), 0) for n, shape in ((0, (3, 5)), (1, (5, 4)))
    }
    env[3] = ocl.k["expand"](ocl.backend.from_numpy(values(rng, (4,), "float32"), 0), (3, 4))
    want = _run(ocl, graph, env)
    got = want if new is None else _run(ocl, new, env)
    for n in outputs:
        np.testing.assert_array_equal(ocl.backend.to_numpy(got[n]), ocl.backend.to_numpy(want[n]))


def _dtype_chain(dt: str) -> list[KernelCall]:
    """A chain over ``dt`` with a compare, a where and scalars: every op exists for it."""
    if dt == "bool":
        return [
            KernelCall("bitwise_xor", (V(0), V(1)), {}, V(2)),
            KernelCall("mul", (V(2), True), {}, V(3)),
            KernelCall("where", (V(3), V(0), False), {}, V(4)),
        ]
    cmp = "eq" if dt.startswith("complex") else "lt"
    first = "sub" if dt in ("uint8", "int8", "int16", "int32", "int64") else "div"
    calls = [
        KernelCall("mul", (V(0), V(1)), {}, V(2)),
        KernelCall(first, (V(2), 3), {}, V(3)),
        KernelCall("neg", (V(3),), {}, V(4)),
        KernelCall(cmp, (V(4), V(0)), {}, V(5)),
        KernelCall("where", (V(5), V(4), V(1)), {}, V(6)),
    ]
    if dt.startswith("float") or dt == "bfloat16":
        calls += [KernelCall("tanh", (V(6),), {}, V(7)), KernelCall("add", (V(7), -0.0), {}, V(8))]
    return calls


# One dtype per family the expression tables split on (bool, integer, half storage, float,
# complex): every program is compiled per dtype, and a cold program cache pays for each.
_DTYPES = [d for d in ("bool", "int32", "float16", "bfloat16", "float32", "complex64") if d in declared()]


@pytest.mark.parametrize("dt", _DTYPES)
def test_fused_chain_equals_its_calls_for_every_dtype(ocl: eb.LoadedBackend, exports: None, dt: str) -> None:
    calls = _dtype_chain(dt)
    last = calls[-1].out.n
    graph = _graph(calls, {0, 1}, {last, 3})  # v3, an intermediate, is kept: the kernel writes it
    new = compile_graph(graph)
    assert new is not None and len(new.calls) == 1
    assert isinstance(new.calls[0].fn, FusedKernel)
    rng = np.random.default_rng(5)
    env = {n: ocl.backend.from_numpy(values(rng, (5, 6), dt), 0) for n in (0, 1)}
    # one operand transposed: the fused kernel walks strided operands as eager's do
    env[1] = ocl.k["permute"](ocl.backend.from_numpy(values(rng, (6, 5), dt), 0), (1, 0))
    want = _run(ocl, graph, env)
    got, launched = _launches(lambda: _run(ocl, new, env))
    assert launched == 1  # the generated kernel ran, not the call-by-call fallback
    for n in (last, 3):
        np.testing.assert_array_equal(ocl.backend.to_numpy(got[n]), ocl.backend.to_numpy(want[n]))


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_casts_fuse_and_round_as_eager(ocl: eb.LoadedBackend, half: str) -> None:
    # ReLU's backward (lt, cast, mul), then a round trip through a half type
    f32, f16 = eb.DTYPES_BY_NAME["float32"], eb.DTYPES_BY_NAME[half]
    calls = [
        KernelCall("lt", (0.0, V(0)), {}, V(2)),
        KernelCall("cast", (V(2), f32), {}, V(3)),
        KernelCall("mul", (V(1), V(3)), {}, V(4)),
        KernelCall("cast", (V(4), f16), {}, V(5)),
        KernelCall("cast", (V(5), f32), {}, V(6)),
        KernelCall("add", (V(6), V(0)), {}, V(7)),
    ]
    graph = _graph(calls, {0, 1}, {7})
    new = compile_graph(graph)
    assert new is not None and len(new.calls) == 1
    rng = np.random.default_rng(8)
    env = {n: ocl.backend.from_numpy(values(rng, (9, 7), "float32") * 1000, 0) for n in (0, 1)}
    want = ocl.backend.to_numpy(_run(ocl, graph, env)[7])
    got, launched = _launches(lambda: ocl.backend.to_numpy(_run(ocl, new, env)[7]))
    assert launched == 1
    np.testing.assert_array_equal(got, want)


def test_chains_of_one_form_share_one_program(ocl: eb.LoadedBackend) -> None:
    def chain(x: int, first: int, s: float, t: float) -> list[KernelCall]:
        return [
            KernelCall("mul", (V(x), s), {}, V(first)),
            KernelCall("add", (V(first), t), {}, V(first + 1)),
            KernelCall("tanh", (V(first + 1),), {}, V(first + 2)),
        ]

    graph = _graph(chain(0, 10, 1.5, 0.25) + chain(1, 20, 2.0, -1.0), {0, 1}, {12, 22})
    new = compile_graph(graph)
    assert new is not None and len(new.calls) == 2
    rng = np.random.default_rng(10)
    env = {n: ocl.backend.from_numpy(values(rng, (4, 6), "float32"), 0) for n in (0, 1)}
    programs = runtime.device(0).kernels
    _run(ocl, _graph(new.calls[:1], {0}, {12}), env)
    before = len(programs)
    got = _run(ocl, new, env)
    assert len(programs) == before  # the second chain differs in values and scalars only
    want = _run(ocl, graph, env)
    for n in (12, 22):
        np.testing.assert_array_equal(ocl.backend.to_numpy(got[n]), ocl.backend.to_numpy(want[n]))


def test_flagged_op_runs_eagerly_and_raises(ocl: eb.LoadedBackend) -> None:
    calls = [
        KernelCall("floordiv", (V(0), V(1)), {}, V(2)),
        KernelCall("add", (V(2), 1), {}, V(3)),
    ]
    new = compile_graph(_graph(calls, {0, 1}, {3}))
    assert new is not None and len(new.calls) == 1
    a = ocl.backend.from_numpy(np.array([7, -7, 9], np.int64), 0)
    b = ocl.backend.from_numpy(np.array([2, 2, 4], np.int64), 0)
    got = _run(ocl, new, {0: a, 1: b})
    np.testing.assert_array_equal(ocl.backend.to_numpy(got[3]), [4, -3, 3])
    zero = ocl.backend.from_numpy(np.array([2, 0, 4], np.int64), 0)
    with pytest.raises(Exception) as eager:
        ocl.k["floordiv"](a, zero)
    with pytest.raises(type(eager.value), match=str(eager.value)):
        _run(ocl, new, {0: a, 1: zero})


def test_wide_chain_splits_under_the_argument_limit(ocl: eb.LoadedBackend) -> None:
    n = 2 * MAX_ARRAYS
    calls = [KernelCall("add", (V(0), V(1)), {}, V(n))]
    calls += [KernelCall("add", (V(n + k - 1), V(k + 1)), {}, V(n + k)) for k in range(1, n - 1)]
    last = calls[-1].out.n
    graph = _graph(calls, set(range(n)), {last})
    new = compile_graph(graph)
    assert new is not None and 1 < len(new.calls) < len(calls)
    assert all(len(c.args) <= MAX_ARRAYS for c in new.calls)
    rng = np.random.default_rng(6)
    env = {k: ocl.backend.from_numpy(values(rng, (3,), "float32"), 0) for k in range(n)}
    want = ocl.backend.to_numpy(_run(ocl, graph, env)[last])
    np.testing.assert_array_equal(ocl.backend.to_numpy(_run(ocl, new, env)[last]), want)


def _mlp() -> tuple[nn.Module, ember.optim.Optimizer]:
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 3)).to(
        "opencl"
    )
    return m, ember.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)


def test_mlp_training_step_compiled_matches_eager() -> None:
    def step(m: nn.Module, opt: ember.optim.Optimizer, x: ember.Tensor, y: ember.Tensor) -> ember.Tensor:
        opt.zero_grad()
        out = m(x)
        loss = nn.functional.cross_entropy(out, y) + (out.sigmoid() * 0.5 - 0.25).square().mean()
        loss.backward()
        opt.step()
        return loss

    rng = np.random.default_rng(7)
    (m1, o1), (m2, o2) = _mlp(), _mlp()
    cstep = ember.compile(step)
    launches = []
    for _ in range(3):
        x = _t(rng, (32, 8))
        y = ember.tensor(rng.integers(0, 3, 32), device="opencl")

        def eager_step(x: ember.Tensor = x, y: ember.Tensor = y) -> float:
            return step(m1, o1, x, y).item()

        def compiled_step(x: ember.Tensor = x, y: ember.Tensor = y) -> float:
            return cstep(m2, o2, x, y).item()

        want, eager = _launches(eager_step)
        got, fused = _launches(compiled_step)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        launches.append((eager, fused))
    assert cstep.explain() == []
    assert all(fused < eager for eager, fused in launches[1:])  # the first call captures
    for p, q in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().cpu().numpy(), rtol=1e-6, atol=1e-7)
