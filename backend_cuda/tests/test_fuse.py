"""The CUDA backend's ``compile_graph`` (ember.compile's hook), without a GPU.

Three things are proved here: which calls of a hand-built ``KernelGraph`` become one fused
kernel (pure Python); that the kernel generated for chains of each dtype family compiles with
NVRTC for Hopper, as test_compile.py compiles every eager kernel; and, for the dtypes the host
compiler knows (float32/float64, integers, bool), that the generated kernel body computes what
the CPU backend's kernels compute call by call, bit for bit (built with g++, as
test_host_elementwise.py builds the named kernels' operations). float16/bfloat16 values need
the device types of CuPy's headers: only test_gpu-style runs on a GPU check those.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from ember.backends import DTYPES_BY_NAME, get
from ember.backends.graph import KernelCall, KernelGraph, Value
from ember_cuda import CUDABackend
from ember_cuda.dtypes import ctype
from ember_cuda.fuse import MAX_ARRAYS, FusedKernel, Program, compile_graph
from ember_cuda.nvrtc_check import compile_source, render_elementwise

V = Value
D = DTYPES_BY_NAME
F32, F16, BF16, F64 = (np.dtype(n) for n in ("float32", "float16", ml_dtypes.bfloat16, "float64"))
I32, I64, U8, B = (np.dtype(n) for n in ("int32", "int64", "uint8", "bool"))


def K(op: str, *args: Any, out: int, **kwargs: Any) -> KernelCall:
    return KernelCall(op, args, kwargs, V(out))


def graph(
    calls: list[KernelCall], inputs: set[int], outputs: set[int], meta: dict | None = None
) -> KernelGraph:
    return KernelGraph("cuda", calls, frozenset(inputs), frozenset(outputs), meta or {})


def fk(c: KernelCall) -> FusedKernel:
    assert isinstance(c.fn, FusedKernel)
    return c.fn


def fused(g: KernelGraph | None) -> list[tuple[str, ...]]:
    """Each call of the compiled graph: its fused chain's ops, or its own op."""
    assert g is not None
    return [tuple(k.op for k in c.fn.chain) if isinstance(c.fn, FusedKernel) else (c.op,) for c in g.calls]


# -- which calls fuse ------------------------------------------------------------------------


def test_the_backend_declares_the_hook() -> None:
    calls = [K("mul", V(0), V(1), out=2), K("add", V(2), 1.0, out=3)]
    assert fused(CUDABackend().compile_graph(graph(calls, {0, 1}, {3}))) == [("mul", "add")]


def test_a_chain_becomes_one_call_reading_the_chain_inputs() -> None:
    calls = [
        K("mul", V(0), V(1), out=2),
        K("add", V(2), 2.5, out=3),
        K("tanh", V(3), out=4),
        K("where", V(5), V(4), 0.0, out=6),
    ]
    g = compile_graph(graph(calls, {0, 1, 5}, {6}))
    assert g is not None and len(g.calls) == 1
    (c,) = g.calls
    assert c.args == (V(0), V(1), V(5)) and c.out == V(6) and c.kwargs == {}
    assert [k.op for k in fk(c).chain] == ["mul", "add", "tanh", "where"]
    assert g.inputs == frozenset({0, 1, 5}) and g.outputs == frozenset({6})


def test_nothing_to_fuse_returns_none() -> None:
    lone = [K("exp", V(0), out=1), K("sum", V(1), (0,), False, out=2)]
    assert compile_graph(graph(lone, {0}, {2})) is None
    both_out = [K("exp", V(0), out=1), K("neg", V(1), out=2)]
    assert compile_graph(graph(both_out, {0}, {1, 2})) is None


def test_an_output_ends_a_chain() -> None:
    calls = [
        K("exp", V(0), out=1),
        K("mul", V(1), 2.0, out=2),
        K("add", V(2), 1.0, out=3),
        K("neg", V(3), out=4),
    ]
    assert fused(compile_graph(graph(calls, {0}, {2, 4}))) == [("exp", "mul"), ("add", "neg")]


def test_a_value_read_outside_the_chain_is_not_fused_into_it() -> None:
    calls = [
        K("exp", V(0), out=1),
        K("sum", V(1), (0,), False, out=2),  # a reduction also reads exp's result
        K("mul", V(1), 3.0, out=3),
        K("sqrt", V(3), out=4),
    ]
    assert fused(compile_graph(graph(calls, {0}, {2, 4}))) == [("exp",), ("sum",), ("mul", "sqrt")]


def test_a_value_read_by_two_chains_is_in_neither() -> None:
    calls = [
        K("exp", V(0), out=1),
        K("neg", V(1), out=2),
        K("abs", V(2), out=3),
        K("sin", V(1), out=4),
        K("cos", V(4), out=5),
    ]
    assert fused(compile_graph(graph(calls, {0}, {3, 5}))) == [("exp",), ("neg", "abs"), ("sin", "cos")]


def test_a_value_used_twice_inside_one_chain_fuses() -> None:
    calls = [K("exp", V(0), out=1), K("mul", V(1), V(1), out=2), K("add", V(1), V(2), out=3)]
    g = compile_graph(graph(calls, {0}, {3}))
    assert fused(g) == [("exp", "mul", "add")] and g is not None and g.calls[0].args == (V(0),)


def test_no_chain_spans_a_write() -> None:
    calls = [
        K("exp", V(0), out=1),
        KernelCall("assign", (V(0), V(9)), {}, None),  # writes into exp's input
        K("add", V(1), 1.0, out=2),
        K("mul", V(2), V(0), out=3),
    ]
    assert fused(compile_graph(graph(calls, {0, 9}, {3}))) == [("exp",), ("assign",), ("add", "mul")]
    inplace = [
        K("exp", V(0), out=1),
        KernelCall("add", (V(4), V(0)), {"out": V(4)}, V(4)),  # add(x, y, out=x)
        K("neg", V(1), out=2),
        K("abs", V(2), out=3),
    ]
    assert fused(compile_graph(graph(inplace, {0, 4}, {3, 4}))) == [
        ("exp",),
        ("add",),
        ("neg", "abs"),
    ]


def test_only_elementwise_calls_with_plain_arguments_fuse() -> None:
    calls = [
        K("sum", V(0), (0,), False, out=1),
        K("exp", V(1), out=2),
        K("add", V(2), 1j, out=3),  # a complex scalar: not fused
        K("neg", V(3), out=4),
        K("cast", V(4), D["float16"], out=5),
        KernelCall("mul", (V(5), V(5)), {}, V(6), fn=lambda a, b: a),  # already someone's kernel
    ]
    assert fused(compile_graph(graph(calls, {0}, {6}))) == [
        ("sum",),
        ("exp",),
        ("add",),
        ("neg", "cast"),
        ("mul",),
    ]


def test_calls_on_arrays_of_another_shape_do_not_fuse() -> None:
    meta = {0: ((4, 3), F32), 1: ((4, 3), F32), 2: ((3,), F32), 3: ((4, 3), F32), 4: ((4, 3), F32)}
    calls = [K("exp", V(0), out=1), K("add", V(1), V(2), out=3), K("neg", V(3), out=4)]
    assert compile_graph(graph(calls, {0, 2}, {4}, meta)) is None  # the add broadcasts
    meta[2] = ((4, 3), F32)
    assert fused(compile_graph(graph(calls, {0, 2}, {4}, meta))) == [("exp", "add", "neg")]


def test_a_chain_stays_under_the_argument_limit() -> None:
    n = MAX_ARRAYS + 4
    calls = [K("add", V(0), V(1), out=100)]
    for j in range(2, n):
        calls.append(K("add", V(98 + j), V(j), out=99 + j))
    g = compile_graph(graph(calls, set(range(n)), {98 + n}))
    assert g is not None and len(g.calls) == 2
    assert all(len(c.args) <= MAX_ARRAYS for c in g.calls)
    assert sum(len(fk(c).chain) for c in g.calls) == len(calls) and g.calls[-1].out == V(98 + n)


def test_scalars_are_kernel_arguments_one_per_value_and_dtype() -> None:
    calls = [K("add", V(0), 2.0, out=1), K("mul", V(1), 2.0, out=2), K("sub", V(2), 2, out=3)]
    g = compile_graph(graph(calls, {0}, {3}))
    assert g is not None
    prog = fk(g.calls[0]).program((F32,))
    assert prog is not None and prog.scalars == [(2.0, F32), (2, F32)]  # 2.0 once, int 2 apart


# -- the generated kernels compile with NVRTC ------------------------------------------------


def _chain_kernel(calls: list[KernelCall], inputs: list[int], dtypes: tuple[np.dtype, ...]) -> Program:
    g = compile_graph(graph(calls, set(inputs), {calls[-1].out.n}))
    assert g is not None and len(g.calls) == 1
    fn = fk(g.calls[0])
    assert [v.n for v in fn.inputs] == inputs
    prog = fn.program(dtypes)
    assert prog is not None, "the chain should fuse for these dtypes"
    return prog


def _float_chain() -> list[KernelCall]:
    return [
        K("mul", V(0), V(1), out=2),
        K("add", V(2), 0.5, out=3),
        K("maximum", V(3), V(1), out=4),
        K("div", V(4), 3.0, out=5),
        K("sub", V(5), V(0), out=6),
        K("floordiv", V(6), 0.25, out=7),
        K("remainder", V(6), V(1), out=8),
        K("minimum", V(7), V(8), out=9),
        K("abs", V(9), out=10),
        K("neg", V(10), out=11),
        K("floor", V(11), out=12),
        K("sigmoid", V(12), out=13),
        K("tanh", V(13), out=14),
        K("exp", V(14), out=15),
        K("erf", V(15), out=16),
        K("pow", V(16), 2.0, out=17),
    ]


def _compare_chain() -> list[KernelCall]:
    return [
        K("lt", V(0), V(1), out=2),
        K("le", V(1), 0.0, out=3),
        K("eq", V(0), V(1), out=4),
        K("bitwise_or", V(2), V(3), out=5),
        K("bitwise_xor", V(5), V(4), out=6),
        K("bitwise_and", V(6), True, out=7),
        K("where", V(7), V(0), -1, out=8),
        K("where", V(3), 2, V(8), out=9),
    ]


def _int_chain() -> list[KernelCall]:
    return [
        K("add", V(0), V(1), out=2),
        K("floordiv", V(2), -3, out=3),
        K("remainder", V(3), 7, out=4),
        K("pow", V(4), 2, out=5),
        K("sign", V(5), out=6),
        K("abs", V(6), out=7),
        K("mul", V(7), V(1), out=8),
        K("maximum", V(8), V(0), out=9),
        K("bitwise_and", V(9), 12, out=10),
        K("lt", V(10), 5, out=11),
        K("where", V(11), V(10), V(0), out=12),
    ]


def _cast_chain(src: str, mid: str, dst: str) -> list[KernelCall]:
    return [
        K("add", V(0), V(1), out=2),
        K("cast", V(2), D[mid], out=3),
        K("cast", V(3), D[dst], out=4),
        K("cast", V(4), D[src], out=5),
        K("mul", V(5), V(0), out=6),
    ]


def _nvrtc(prog: Program) -> None:
    name = "ember_fused"
    err = compile_source(render_elementwise(prog.kernel, (), prog.scalar_names), name)
    assert err is None, f"the fused kernel does not compile:\n{err}"


@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=str)
def test_float_chains_compile(dt: np.dtype) -> None:
    prog = _chain_kernel(_float_chain(), [0, 1], (dt, dt))
    assert prog.out == dt
    _nvrtc(prog)


@pytest.mark.parametrize("dt", [F32, F16, BF16, I64], ids=str)
def test_compare_and_where_chains_compile(dt: np.dtype) -> None:
    prog = _chain_kernel(_compare_chain(), [0, 1], (dt, dt))
    assert prog.out == dt
    _nvrtc(prog)


@pytest.mark.parametrize("dt", [U8, I32, I64], ids=str)
def test_integer_chains_compile(dt: np.dtype) -> None:
    prog = _chain_kernel(_int_chain(), [0, 1], (dt, dt))
    assert prog.out == dt
    _nvrtc(prog)


CASTS = [
    ("float32", "int32", "bool"),
    ("float16", "float32", "int64"),
    ("bfloat16", "float16", "uint8"),
    ("float64", "bfloat16", "int8"),
    ("int64", "float16", "bool"),
    ("int32", "bool", "float64"),
    ("bool", "int16", "float32"),
]


@pytest.mark.parametrize("casts", CASTS, ids="-".join)
def test_cast_chains_compile(casts: tuple[str, str, str]) -> None:
    src = np.dtype(ml_dtypes.bfloat16 if casts[0] == "bfloat16" else casts[0])
    prog = _chain_kernel(_cast_chain(*casts), [0, 1], (src, src))
    assert prog.out == src
    _nvrtc(prog)


def test_half_types_compute_through_the_ops_own_templates() -> None:
    prog = _chain_kernel(_float_chain(), [0, 1], (F16, F16))
    src = render_elementwise(prog.kernel, (), prog.scalar_names)
    assert "ember_py_floordiv" in src and "ember_wide" in src  # the backend's own kernels
    assert src.count("struct ember_wide {") == 1  # sigmoid's preamble is inside floordiv's
    assert "float in0 = static_cast<float>(t13);" in src  # erf on float16: through float32
    assert "t14 = static_cast<float16>(out0);" in src


@pytest.mark.parametrize(
    ("calls", "dtypes"),
    [
        ([K("add", V(0), V(1), out=2), K("floordiv", V(2), V(1), out=3)], (I32, I32)),  # divisor checked
        ([K("add", V(0), V(1), out=2), K("remainder", V(2), 0, out=3)], (I64, I64)),  # eager raises
        ([K("add", V(0), V(1), out=2), K("pow", V(2), -1, out=3)], (I32, I32)),
        ([K("add", V(0), V(1), out=2), K("neg", V(2), out=3)], (B, B)),  # CuPy refuses neg on bool
        ([K("add", V(0), V(1), out=2), K("cast", V(2), D["complex64"], out=3)], (F32, F32)),
        ([K("add", V(0), V(1), out=2), K("exp", V(2), out=3)], (F32, F64)),  # mixed dtypes
    ],
)
def test_what_eager_checks_on_the_host_runs_call_by_call(calls: list[KernelCall], dtypes: tuple) -> None:
    g = compile_graph(graph(calls, {0, 1}, {3}))
    assert g is not None and fk(g.calls[0]).program(dtypes) is None


# -- the generated body computes what the CPU backend computes -------------------------------

SHIM = r"""
#include <cmath>
#include <algorithm>
using namespace std;
#define __device__
"""


def _host(tmp_path: Path, prog: Program) -> ctypes.CDLL:
    """``prog``'s preamble and body in a host loop: ``run(ptrs, n)``, every parameter an array."""
    k = prog.kernel
    lines = [
        f"const {ctype(p.dtype)} {p.name} = (({ctype(p.dtype)} *)ptrs[{i}])[j];"
        for i, p in enumerate(k.in_params)
    ]
    out = k.out_params[0]
    lines.append(f"{ctype(out.dtype)} &{out.name} = (({ctype(out.dtype)} *)ptrs[{len(k.in_params)}])[j];")
    src = f"""{SHIM}{k.preamble}
extern "C" void run(void **ptrs, long long n) {{
    for (long long j = 0; j < n; j++) {{
{chr(10).join(lines)}
{k.operation}
    }}
}}
"""
    path = tmp_path / "fused.cpp"
    path.write_text(src)
    lib = tmp_path / "libfused.so"
    cmd = ["g++", "-O1", "-fno-fast-math", "-ffp-contract=off", "-shared", "-fPIC", "-o", str(lib), str(path)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return ctypes.CDLL(str(lib))


def _host_run(tmp_path: Path, prog: Program, *arrays: np.ndarray) -> np.ndarray:
    lib = _host(tmp_path, prog)
    n = arrays[0].size
    scalars = [np.full(n, v).astype(d) for v, d in prog.scalars]
    y = np.empty(n, prog.out)
    keep = [np.ascontiguousarray(a) for a in (*arrays, *scalars, y)]
    ptrs = (ctypes.c_void_p * len(keep))(*[a.ctypes.data for a in keep])
    lib.run(ptrs, ctypes.c_longlong(n))
    return keep[-1]


def _cpu_chain(calls: list[KernelCall], env: dict[int, Any]) -> np.ndarray:
    cpu: dict[str, Any] = {
        **get("cpu").k,
        "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    }  # CPU: sigmoid decomposes
    with np.errstate(all="ignore"):
        for c in calls:
            env[c.out.n] = cpu[c.op](*[env[a.n] if isinstance(a, Value) else a for a in c.args])
    return env[calls[-1].out.n]


needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="no host C++ compiler (g++)")
EXACT_FLOAT = _float_chain()[:11]  # mul add maximum div sub floordiv remainder minimum abs neg floor


def _floats(dt: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    a = np.concatenate([rng.uniform(-20, 20, 300), [0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 3.0]])
    b = np.concatenate([rng.uniform(-5, 5, 300), [1.5, 2.0, -0.0, 2.0, 1.0, 1.0, np.nan]])
    return a.astype(dt), b.astype(dt)


@needs_gxx
@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_arithmetic_chain_matches_the_cpu_backend_bit_for_bit(tmp_path: Path, dt: np.dtype) -> None:
    calls = EXACT_FLOAT
    a, b = _floats(dt)
    got = _host_run(tmp_path, _chain_kernel(calls, [0, 1], (dt, dt)), a, b)
    want = _cpu_chain(calls, {0: a, 1: b})
    assert got.dtype == want.dtype == dt
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@needs_gxx
def test_transcendental_chain_matches_the_cpu_backend(tmp_path: Path) -> None:
    calls = [
        K("sigmoid", V(0), out=2),
        K("mul", V(2), V(1), out=3),
        K("tanh", V(3), out=4),
        K("exp", V(4), out=5),
    ]
    a, b = _floats(F64)
    got = _host_run(tmp_path, _chain_kernel(calls, [0, 1], (F64, F64)), a, b)
    np.testing.assert_allclose(got, _cpu_chain(calls, {0: a, 1: b}), rtol=1e-14, equal_nan=True)


@needs_gxx
@pytest.mark.parametrize("dt", [F32, I64], ids=str)
def test_compare_and_where_chain_matches_the_cpu_backend(tmp_path: Path, dt: np.dtype) -> None:
    rng = np.random.default_rng(1)
    a, b = (rng.integers(-3, 4, 400).astype(dt) for _ in range(2))
    got = _host_run(tmp_path, _chain_kernel(_compare_chain(), [0, 1], (dt, dt)), a, b)
    want = _cpu_chain(_compare_chain(), {0: a, 1: b})
    assert got.dtype == want.dtype == dt
    np.testing.assert_array_equal(got, want)


@needs_gxx
@pytest.mark.parametrize("dt", [I32, I64], ids=str)
def test_integer_chain_matches_the_cpu_backend(tmp_path: Path, dt: np.dtype) -> None:
    rng = np.random.default_rng(2)
    a, b = rng.integers(-50, 50, 400).astype(dt), rng.integers(-9, 9, 400).astype(dt)
    got = _host_run(tmp_path, _chain_kernel(_int_chain(), [0, 1], (dt, dt)), a, b)
    np.testing.assert_array_equal(got, _cpu_chain(_int_chain(), {0: a, 1: b}))


@needs_gxx
@pytest.mark.parametrize(
    "casts", [("float32", "int32", "bool"), ("float64", "uint8", "float32")], ids="-".join
)
def test_cast_chain_matches_the_cpu_backend(tmp_path: Path, casts: tuple[str, str, str]) -> None:
    src = np.dtype(casts[0])
    a = np.random.default_rng(3).uniform(-100.9, 100.9, 400).astype(src)
    if casts[1] == "uint8":
        a = np.abs(a)
    b = np.full_like(a, 0.25)
    b[:5] = -a[:5]  # exact zeros: false after the bool cast
    calls = _cast_chain(*casts)
    got = _host_run(tmp_path, _chain_kernel(calls, [0, 1], (src, src)), a, b)
    np.testing.assert_array_equal(got, _cpu_chain(calls, {0: a, 1: b}))
