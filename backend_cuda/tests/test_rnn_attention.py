"""The recurrent-layer and attention kernels (rnn.py, attention.py) run on the host, end to end.

rnn.py and attention.py touch the device only through ``cupy`` (arrays and cuBLAS products)
and their ``_launch`` (the raw kernels). Here ``cupy`` is NumPy and ``_launch`` calls the very
CUDA source NVRTC compiles in test_compile.py, built as C++ with g++ (``blockIdx`` and
``threadIdx`` as globals; every block runs with one thread, so the block-wide reductions of
the attention rows run their one-thread path and only a GPU covers their shared-memory tree).
The whole host path is thus checked: buffers, step order, packed lengths, reverse, the
backward's parked state gradients, masks, half types through float32. References: the CPU
backend on random inputs, and every sample of the conformance records the GPU will run.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from ember.backends import BackendUnavailableError, get
from ember_cuda import attention, rnn

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="no host C++ compiler (g++)")

CPU = get("cpu").k
SHIM = r"""
#include <cmath>
#include <cstring>
using std::exp; using std::tanh;
struct ember_dim3 { unsigned int x, y, z; };
static ember_dim3 blockIdx, blockDim, threadIdx;
#define __global__
#define __device__
#define __shared__ static
static inline void __syncthreads() {}
static inline float __int_as_float(unsigned int i) { float f; std::memcpy(&f, &i, 4); return f; }
"""
_KERNEL = re.compile(r'extern "C" __global__ void (\w+)\(([^)]*)\)')
_CTYPES = {
    np.int32: ctypes.c_int,
    np.int64: ctypes.c_longlong,
    np.float32: ctypes.c_float,
    np.float64: ctypes.c_double,
}
_LIBS: dict[str, ctypes.CDLL] = {}


def _host_lib(source: str, build: Path) -> ctypes.CDLL:
    """``source`` built for the host, with ``run_NAME(blocks, ...)`` running every kernel NAME."""
    if source not in _LIBS:
        drivers = []
        for name, params in _KERNEL.findall(source):
            names = ", ".join(p.split()[-1].lstrip("*") for p in params.split(","))
            drivers.append(
                f'extern "C" void run_{name}(long long blocks, {params}) {{\n'
                f"    blockDim.x = 1; threadIdx.x = 0;\n"
                f"    for (long long b = 0; b < blocks; b++) {{ blockIdx.x = (unsigned)b; {name}({names}); }}\n}}"
            )
        build.mkdir(parents=True, exist_ok=True)
        src, lib = build / f"k{len(_LIBS)}.cpp", build / f"libk{len(_LIBS)}.so"
        src.write_text(SHIM + source + "\n".join(drivers))
        cmd = ["g++", "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        _LIBS[source] = ctypes.CDLL(str(lib))
    return _LIBS[source]


def _call(lib: ctypes.CDLL, name: str, blocks: int, args: tuple) -> None:
    fn = getattr(lib, f"run_{name}")
    conv: list[Any] = [ctypes.c_longlong(blocks)]
    for a in args:
        if isinstance(a, np.ndarray):
            assert a.flags.c_contiguous, f"{name}: a kernel got a non-contiguous array"
            conv.append(ctypes.c_void_p(a.ctypes.data))
        else:
            conv.append(_CTYPES[type(a)](a))
    fn.argtypes = [type(c) for c in conv]
    fn(*conv)


def _patch_host(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    build = tmp_path_factory.getbasetemp() / "rnn_attention_build"

    def rnn_launch(name: str, acc: np.dtype, threads: int, args: tuple) -> None:
        _call(_host_lib(rnn.EMBER_RNN[acc.name].code, build), name, threads, args)

    def sdpa_launch(name: str, acc: np.dtype, rows: int, block: int, args: tuple) -> None:
        assert block in (32, 128, 256)
        _call(_host_lib(attention.EMBER_SDPA[acc.name].code, build), name, rows, args)

    for mod in (rnn, attention):
        monkeypatch.setattr(mod, "cupy", np)
    monkeypatch.setattr(rnn, "_launch", rnn_launch)
    monkeypatch.setattr(attention, "_launch", sdpa_launch)


@pytest.fixture
def on_host(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    _patch_host(monkeypatch, tmp_path_factory)


@pytest.fixture(params=["host", "cuda"])
def impl(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    """Run an op on NumPy arrays: host emulation, or the real cuda backend where it loads."""
    if request.param == "host":
        _patch_host(monkeypatch, tmp_path_factory)
        table = {**rnn.RNN_KERNELS, **attention.ATTENTION_KERNELS}
        return lambda op, *args: table[op](*args)
    try:
        cuda = get("cuda")
    except BackendUnavailableError as e:
        pytest.skip(f"cuda backend unavailable: {e}")
    be = cuda.backend

    def run(op: str, *args: Any) -> Any:
        out = cuda.k[op](
            *[be.from_numpy(np.ascontiguousarray(a), 0) if isinstance(a, np.ndarray) else a for a in args]
        )
        return tuple(be.to_numpy(o) for o in out) if isinstance(out, tuple) else be.to_numpy(out)

    return run


def _np(dtype: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)


def _close(got: Any, want: Any, dtype: str) -> None:
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    tol = {"float64": 1e-11, "float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}[dtype]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"output {i}"
        np.testing.assert_allclose(
            g.astype(np.float64),
            w.astype(np.float64),
            rtol=tol,
            atol=tol,
            equal_nan=True,
            err_msg=f"output {i}",
        )


# -- recurrent layers against the CPU backend ----------------------------------------------
L, N, H = 5, 4, 3
VARIANTS = [(False, None), (True, None), (False, (5, 2, 0, 3)), (True, (5, 2, 0, 3))]
KINDS = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _layer_args(kind: str, dtype: str, seed: int, bias: bool) -> tuple:
    rng = np.random.default_rng(seed)
    gates = KINDS[kind]

    def v(*shape: int) -> np.ndarray:
        return rng.uniform(-1, 1, shape).astype(_np(dtype))

    state = (v(N, H), v(N, H)) if kind == "lstm" else (v(N, H),)
    return (v(L, N, gates * H), *state, v(gates * H, H), v(gates * H) if bias else None)


def _layer(mod: Any, kind: str, args: tuple, reverse: bool, lengths: Any) -> Any:
    if kind.startswith("rnn"):
        return mod["rnn_layer"](*args, kind == "rnn_relu", reverse, lengths)
    return mod[f"{kind}_layer"](*args, reverse, lengths)


def _backward(mod: Any, kind: str, args: tuple, fwd: Any, g: Any, reverse: bool, lengths: Any) -> Any:
    state, w = args[1:-2], args[-2]  # (h0,) or (h0, c0); gi and b_hh are not used
    if kind in ("lstm", "gru"):
        return mod[f"{kind}_layer_backward"](g, *state, w, *fwd, reverse, lengths)
    h0 = state[0]
    return mod["rnn_layer_backward"](g, h0, w, fwd, kind == "rnn_relu", reverse, lengths)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_layers_match_the_cpu_backend(on_host: None, kind: str, dtype: str) -> None:
    for i, (reverse, lengths) in enumerate(VARIANTS):
        args = _layer_args(kind, dtype, i, bias=i != 1)  # the reverse variant without b_hh
        want = _layer(CPU, kind, args, reverse, lengths)
        got = _layer(rnn.RNN_KERNELS, kind, args, reverse, lengths)
        _close(got, want, dtype)
        g = np.random.default_rng(10 + i).uniform(-1, 1, (want[0] if kind in ("lstm", "gru") else want).shape)
        g = g.astype(_np(dtype))
        if kind == "lstm" and i == 0:
            g[1, :-1] = 0  # the cells' gradient is often c_n's alone
        _close(
            _backward(rnn.RNN_KERNELS, kind, args, want, g, reverse, lengths),
            _backward(CPU, kind, args, want, g, reverse, lengths),
            dtype,
        )


def test_idle_rows_keep_their_state_and_pass_their_gradient(on_host: None) -> None:
    """A packed row of length 0 repeats h0/c0 and hands g straight back, even with inf weights."""
    gi, h0, c0, w, b = _layer_args("lstm", "float64", 3, bias=True)
    hc, gates = rnn.lstm_layer(gi, h0, c0, w, b, False, (L, 0, L, L))
    np.testing.assert_array_equal(hc[0, :, 1], np.broadcast_to(h0[1], (L, H)))
    np.testing.assert_array_equal(hc[1, :, 1], np.broadcast_to(c0[1], (L, H)))
    g = np.random.default_rng(4).standard_normal(hc.shape)
    w_inf = w.copy()
    w_inf[0, 0] = np.inf
    d, dh0, dc0 = rnn.lstm_layer_backward(g, h0, c0, w_inf, hc, gates, False, (L, 0, L, L))
    np.testing.assert_array_equal(d[:, 1], 0)
    np.testing.assert_allclose(dh0[1], g[0, :, 1].sum(0), rtol=1e-14)
    np.testing.assert_allclose(dc0[1], g[1, :, 1].sum(0), rtol=1e-14)


@pytest.mark.parametrize("shape", [(0, N, H), (L, 0, H), (L, N, 0)])
def test_empty_layers(on_host: None, shape: tuple) -> None:
    """Forward as the CPU backend; backward: nothing flows, so zeros (no steps: d_h0 = 0)."""
    steps, n, hid = shape
    z = np.zeros
    args = (z((steps, n, 3 * hid)), z((n, hid)), z((3 * hid, hid)), None)
    want = CPU["gru_layer"](*args, False, None)
    got = rnn.gru_layer(*args, False, None)
    _close(got, want, "float64")
    g = np.ones((steps, n, hid))
    zeros = (z((steps, n, 3 * hid)), z((steps, n, 3 * hid)), z((n, hid)))
    _close(rnn.gru_layer_backward(g, args[1], args[2], *got, False, None), zeros, "float64")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_layers_over_several_blocks(impl: Any, kind: str, dtype: str) -> None:
    """n * hid = 320 threads (two blocks of 256), unsorted lengths, both directions."""
    rng = np.random.default_rng(6)
    steps, n, hid, gates = 6, 8, 40, KINDS[kind]
    lengths = (6, 1, 0, 3, 6, 2, 5, 4)

    def v(*shape: int) -> np.ndarray:
        return (rng.uniform(-1, 1, shape) * 0.5).astype(dtype)

    state = (v(n, hid), v(n, hid)) if kind == "lstm" else (v(n, hid),)
    args = (v(steps, n, gates * hid), *state, v(gates * hid, hid), v(gates * hid))
    name = "rnn_layer" if kind.startswith("rnn") else f"{kind}_layer"
    tail = (kind == "rnn_relu",) if kind.startswith("rnn") else ()
    for reverse in (False, True):
        want = _layer(CPU, kind, args, reverse, lengths)
        _close(impl(name, *args, *tail, reverse, lengths), want, dtype)
        g = v(*(want[0] if kind in ("lstm", "gru") else want).shape)
        fwd = want if isinstance(want, tuple) else (want,)
        got = impl(f"{name}_backward", g, *args[1:-2], args[-2], *fwd, *tail, reverse, lengths)
        _close(got, _backward(CPU, kind, args, want, g, reverse, lengths), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("lk", [20, 100, 300])  # one block of 32, 128 and 256 threads per row
def test_attention_rows_of_every_block_size(impl: Any, lk: int, dtype: str) -> None:
    rng = np.random.default_rng(lk)

    def v(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(dtype)

    q, k, val, g = v(2, 7, 16), v(2, lk, 16), v(2, lk, 8), v(2, 7, 8)
    mask = rng.random((2, 7, lk)) < 0.7
    mask[1, 3] = False  # a query with nothing to attend
    drop = ((rng.random((2, 7, lk)) >= 0.2) / 0.8).astype(dtype)
    for m, dr, causal in [(mask, drop, False), (None, None, True)]:
        want = CPU["sdpa"](q, k, val, m, dr, 0.25, causal)
        _close(impl("sdpa", q, k, val, m, dr, 0.25, causal), want, dtype)
        back = CPU["sdpa_backward"](g, q, k, val, want[1], dr, 0.25)
        _close(impl("sdpa_backward", g, q, k, val, want[1], dr, 0.25), back, dtype)


# -- attention against the CPU backend -------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_sdpa_matches_the_cpu_backend(on_host: None, dtype: str) -> None:
    rng = np.random.default_rng(5)

    def v(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(dtype)

    q, k, val = v(2, 6, 4), v(2, 5, 4), v(2, 5, 3)
    allowed = rng.random((6, 5)) < 0.6
    allowed[2] = False  # a query with nothing to attend
    additive = np.where(rng.random((2, 6, 5)) < 0.8, v(2, 6, 5), -np.inf).astype(dtype)
    drop = ((rng.random((2, 6, 5)) >= 0.3) / 0.7).astype(dtype)
    for mask, dr, causal in [
        (None, None, True),
        (np.broadcast_to(allowed, (2, 6, 5)), drop, False),
        (additive, None, True),
        (additive, drop, False),
    ]:
        want = CPU["sdpa"](q, k, val, mask, dr, 0.4, causal)
        got = attention.sdpa(q, k, val, mask, dr, 0.4, causal)
        _close(got, want, dtype)
        g = v(2, 6, 3)
        _close(
            attention.sdpa_backward(g, q, k, val, want[1], dr, 0.4),
            CPU["sdpa_backward"](g, q, k, val, want[1], dr, 0.4),
            dtype,
        )


def test_sdpa_rows_with_nothing_to_attend_are_zero_and_nan_propagates(on_host: None) -> None:
    q, k, val = np.ones((3, 2)), np.ones((2, 2)), np.arange(4.0).reshape(2, 2)
    mask = np.array([[True, False], [False, False], [True, True]])
    out, w = attention.sdpa(q, k, val, mask, None, 1.0, False)
    np.testing.assert_array_equal(w, [[1, 0], [0, 0], [0.5, 0.5]])
    np.testing.assert_array_equal(out, [[0, 1], [0, 0], [1, 2]])
    k[1, 0] = np.nan
    _, w = attention.sdpa(q, k, val, None, None, 1.0, False)
    assert np.isnan(w).all()


# -- every conformance sample ------------------------------------------------------------------
def _device_arg(a: Any) -> Any:
    from ember_conformance.records import T

    if not isinstance(a, T):
        return a
    if a.layout == "expand":
        return np.broadcast_to(a.source, a.value.shape)
    if a.layout == "step":
        wide = np.zeros((*a.value.shape[:-1], 2 * a.value.shape[-1]), a.value.dtype)
        wide[..., ::2] = a.value
        return wide[..., ::2]
    assert a.layout == "contig", a.layout
    return a.value


def _records() -> list[Any]:
    conf = pytest.importorskip("ember_conformance")
    from ember_conformance import cases_attention, cases_recurrent

    assert conf
    return [*cases_recurrent.RECORDS, *cases_attention.RECORDS]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_every_conformance_sample_passes(on_host: None, dtype: str) -> None:
    from ember_conformance.compare import compare
    from ember_conformance.harness import reference_of
    from ember_conformance.records import rng_for

    table = {**rnn.RNN_KERNELS, **attention.ATTENTION_KERNELS}
    records = _records()
    assert {r.op for r in records} == set(table)  # every kernel of the two modules has its record
    for record in records:
        for sample in record.samples(dtype, rng_for(record.op, dtype)):
            got = table[record.op](*(_device_arg(a) for a in sample.args))
            want = reference_of(record, sample)
            dtypes = record.out_dtype(dtype)
            got, want, dtypes = (
                (got, want, dtypes) if isinstance(want, tuple) else ((got,), (want,), (dtypes,))
            )
            for i, (g, w, d) in enumerate(zip(got, want, dtypes)):
                verdict = compare(g, w, d, record.tol_scale, op=record.op)
                assert verdict["status"] == "ok", (
                    f"{record.op}[{dtype}] {sample.label} output {i}: {verdict['message']}"
                )
