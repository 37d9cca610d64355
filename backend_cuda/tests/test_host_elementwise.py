"""The named ElementwiseKernels' operations, compiled for the host with g++, against NumPy.

Each kernel's own ``preamble`` and ``operation`` strings (what CuPy pastes into the loop
body it generates) are wrapped in a host loop with the same typedefs and parameter
bindings CuPy uses, then compared with the CPU backend: Python's floor rule for floats and
integers (signed zeros, infinities, division by zero, INT_MIN // -1), truncating casts,
!= 0 for bool, sigmoid and the SGD-momentum and Adam updates. float16/bfloat16 need CuPy's device
types and are covered by test_compile.py (compiles) and test_gpu.py (values).
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ember.backends import DTYPES_BY_NAME, get
from ember_cuda import elementwise as ew
from ember_cuda import optim
from ember_cuda.dtypes import ctype

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="no host C++ compiler (g++)")
CPU = get("cpu").k

SHIM = r"""
#include <cmath>
using std::fmod; using std::copysign; using std::floor; using std::exp; using std::fma;
#define __device__
inline float fmaf(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
"""


def _build(tmp_path: Path, kernel: Any, dtypes: tuple[str, ...]) -> ctypes.CDLL:
    """A host library whose ``run(ptrs, n)`` applies ``kernel``'s operation elementwise."""
    letters: dict[str, str] = {}
    for p in kernel.in_params + kernel.out_params:
        if p.dtype is None and p.ctype not in letters:
            letters[p.ctype] = ctype(DTYPES_BY_NAME[dtypes[len(letters)]])
    typedefs = "".join(f"typedef {c} {t};\n" for t, c in letters.items())
    lines = []
    for i, p in enumerate(kernel.in_params + kernel.out_params):
        t = p.ctype if p.dtype is None else ctype(DTYPES_BY_NAME[np.dtype(p.dtype).name])
        ref = "const {t} {n} = (({t} *)ptrs[{i}])[k];" if p.is_const else "{t} &{n} = (({t} *)ptrs[{i}])[k];"
        lines.append(ref.format(t=t, n=p.name, i=i))
    body = "\n".join(lines)
    src = f"""{SHIM}{typedefs}{kernel.preamble}
extern "C" void run(void **ptrs, long long n) {{
    for (long long k = 0; k < n; k++) {{
{body}
{kernel.operation};
    }}
}}
"""
    path = tmp_path / f"{kernel.name}_{'_'.join(dtypes)}.cpp"
    path.write_text(src)
    lib = path.with_suffix(".so")
    cmd = ["g++", "-O1", "-fno-fast-math", "-shared", "-fPIC", "-o", str(lib), str(path)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return ctypes.CDLL(str(lib))


def _run(lib: ctypes.CDLL, *arrays: np.ndarray) -> None:
    ptrs = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
    lib.run(ptrs, ctypes.c_longlong(arrays[0].size))


def _float_pairs(dt: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    a = np.concatenate(
        [rng.uniform(-50, 50, 400), [1.0, -1.0, 5.5, -0.0, 0.0, 7.0, np.inf, -np.inf, 3.0, np.nan]]
    )
    b = np.concatenate([rng.uniform(-7, 7, 400), [0.1, 0.1, -2.0, 1.0, -1.0, 0.0, 2.0, 2.0, np.inf, 1.0]])
    return a.astype(dt), b.astype(dt)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("op", ["floordiv", "remainder"])
def test_python_floor_rule_for_floats(tmp_path: Path, op: str, dt: str) -> None:
    kernel = ew.EMBER_FLOORDIV_FLOAT if op == "floordiv" else ew.EMBER_REMAINDER_FLOAT
    lib = _build(tmp_path, kernel, (dt,))
    a, b = _float_pairs(dt)
    y = np.empty_like(a)
    _run(lib, a, b, y)
    with np.errstate(all="ignore"):
        want = np.floor_divide(a, b) if op == "floordiv" else np.remainder(a, b)
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(np.signbit(y), np.signbit(want))  # signed zeros too


@pytest.mark.parametrize("dt", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("op", ["floordiv", "remainder"])
def test_python_floor_rule_for_integers(tmp_path: Path, op: str, dt: str) -> None:
    kernel = ew.EMBER_FLOORDIV_INT if op == "floordiv" else ew.EMBER_REMAINDER_INT
    lib = _build(tmp_path, kernel, (dt,))
    info = np.iinfo(dt)
    rng = np.random.default_rng(1)
    a = rng.integers(max(info.min, -100), min(info.max, 100), 500).astype(dt)
    b = rng.integers(max(info.min, -9), 10, 500).astype(dt)
    b[b == 0] = 3
    a[:2], b[:2] = info.min, (info.max if info.min == 0 else -1)  # INT_MIN // -1 wraps
    y = np.empty_like(a)
    _run(lib, a, b, y)
    with np.errstate(all="ignore"):
        want = CPU[op](a, b) if op == "floordiv" else np.remainder(a, b)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("src", ["float32", "float64"])
@pytest.mark.parametrize("dst", ["uint8", "int8", "int16", "int32", "int64"])
def test_float_to_int_cast_truncates(tmp_path: Path, src: str, dst: str) -> None:
    lib = _build(tmp_path, ew.EMBER_CAST_TRUNC, (src, dst))
    x = np.random.default_rng(2).uniform(-100.9, 100.9, 300).astype(src)
    if dst == "uint8":
        x = np.abs(x)
    y = np.empty(x.shape, dst)
    _run(lib, x, y)
    np.testing.assert_array_equal(y, CPU["cast"](x, DTYPES_BY_NAME[dst]))


@pytest.mark.parametrize("src", ["int8", "int64", "float32", "float64"])
def test_cast_to_bool_is_nonzero(tmp_path: Path, src: str) -> None:
    lib = _build(tmp_path, ew.EMBER_CAST_BOOL, (src,))
    x = np.array([0, 1, -2, 3, 0, 0], src)
    if src.startswith("float"):
        x = np.array([0.0, -0.0, np.nan, 0.5, -np.inf, 1e-30], src)
    y = np.empty(x.shape, bool)
    _run(lib, x, y)
    np.testing.assert_array_equal(y, CPU["cast"](x, DTYPES_BY_NAME["bool"]))


def test_sigmoid(tmp_path: Path) -> None:
    lib = _build(tmp_path, ew.EMBER_SIGMOID, ("float64",))
    x = np.linspace(-40, 40, 101)
    y = np.empty_like(x)
    _run(lib, x, y)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-x)), rtol=1e-15)


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_update(tmp_path: Path, nesterov: bool) -> None:
    lib = _build(tmp_path, optim.EMBER_SGD_MOMENTUM, ("float64",))
    rng = np.random.default_rng(3)
    p, g, buf = rng.standard_normal(64), rng.standard_normal(64), rng.standard_normal(64)
    n = p.size

    def full(v: Any, dt: Any = np.float64) -> np.ndarray:
        return np.full(n, v, dt)

    want_p, want_b = p.copy(), buf.copy()
    for first in (True, False):
        flags = (full(nesterov, bool), full(first, bool), full(True, bool))
        _run(lib, g, full(0.1), full(0.9), full(1 - 0.25), full(0.01), *flags, p, buf)  # 1 - dampening
        cpu_b = want_b
        CPU["sgd_update"](want_p, g, cpu_b, 0.1, 0.9, 0.25, 0.01, nesterov, True, first)
    np.testing.assert_allclose(p, want_p, rtol=1e-14)
    np.testing.assert_allclose(buf, want_b, rtol=1e-14)


@pytest.mark.parametrize(("amsgrad", "decoupled", "beta1"), [(False, False, 0.9), (True, True, 0.3)])
def test_adam_update(tmp_path: Path, amsgrad: bool, decoupled: bool, beta1: float) -> None:
    kernel = optim.EMBER_ADAM_AMSGRAD if amsgrad else optim.EMBER_ADAM
    lib = _build(tmp_path, kernel, ("float64",))
    rng = np.random.default_rng(4)
    p, g, m = rng.standard_normal(64), rng.standard_normal(64), rng.standard_normal(64)
    v, vmax = np.abs(rng.standard_normal(64)), np.abs(rng.standard_normal(64))
    want = [a.copy() for a in (p, m, v, vmax)]
    lr, beta2, eps, wd, step = 0.01, 0.999, 1e-3, 0.1, 3.0
    w = 1 - beta1
    scalars = (
        wd,
        1 - lr * wd,
        w,
        1.0 - w,
        1 - beta2,
        beta2,
        (1 - beta2**step) ** 0.5,
        -(lr / (1 - beta1**step)),
        eps,
    )
    flags = (decoupled, w < 0.5, True)
    ins = [np.full(64, s) for s in scalars] + [np.full(64, f, bool) for f in flags]
    _run(lib, g, *ins, p, m, v, *([vmax] if amsgrad else []))
    CPU["adam_update"](
        want[0],
        g,
        want[1],
        want[2],
        want[3] if amsgrad else None,
        lr,
        beta1,
        beta2,
        eps,
        wd,
        amsgrad,
        True,
        step,
        decoupled,
    )
    for got, exp in zip((p, m, v, vmax), want):
        np.testing.assert_allclose(got, exp, rtol=1e-14)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_add_scaled_rounds_once_as_the_cpu(tmp_path: Path, dtype: str) -> None:
    """``fma(s, y, x)``: the CPU's add_scaled (PyTorch's add with alpha), bit for bit."""
    lib = _build(tmp_path, ew.EMBER_ADD_SCALED, (dtype,))
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((2, 257)).astype(dtype)
    out = np.empty_like(x)
    _run(lib, x, y, np.full_like(x, -0.37), out)
    want = CPU["add_scaled"](x, y, -0.37)
    assert np.count_nonzero(want != x + x.dtype.type(-0.37) * y)  # one rounding shows here
    np.testing.assert_array_equal(out, want)
