"""float16, bfloat16 and complex on OpenCL: the exact properties users rely on.

The conformance suite certifies every op for these dtypes within its tolerances; these
tests pin what must be bit-exact against the CPU backend: the rounding of casts and of
arithmetic (computed in float32, rounded once, to nearest even), copies that keep every
bit, scatter-add rounding per element like NumPy's add.at, and complex special values.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from ember.backends import DTYPES_BY_NAME

BF16 = np.dtype(ml_dtypes.bfloat16)
HALF = {"float16": np.dtype(np.float16), "bfloat16": BF16}
# Ties at both half types' precision, subnormals, overflow, signed zeros, inf, NaN.
EDGES = np.array(
    [1.00390625, 1.01171875, 1.0009765625, 1.0029296875, 3.4e38, 65520.0, 65519.0, -1e-40, 6e-8, 3e-8]
    + [2.98e-8, -0.0, 0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0 + 2**-24, 255.5, -0.75],
    np.float32,
)


def _bits(a: np.ndarray) -> list[int]:
    return a.view(np.uint16).tolist()


def _same(got: np.ndarray, want: np.ndarray) -> None:
    """Bit-identical, except that any NaN meets any NaN (OpenCL's vstore_half picks its own payload)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want.astype(np.float32))
    assert np.array_equal(np.isnan(got.astype(np.float32)), nan)
    assert _bits(got[~nan]) == _bits(want[~nan])


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
def test_casts_round_like_cpu(ocl: Any, cpu: Any, dtype: str) -> None:
    dt = DTYPES_BY_NAME[dtype]
    for src in (EDGES, EDGES.astype(np.float64), np.array([2**24 + 1, -(2**31), 65535, 7], np.int64)):
        got = ocl.backend.to_numpy(ocl.k["cast"](ocl.backend.from_numpy(src, 0), dt))
        _same(got, cpu.k["cast"](src, dt))
    half = EDGES.astype(HALF[dtype])
    x = ocl.backend.from_numpy(half, 0)
    for target in ("float32", "float64", "bool", "complex64", "float16", "bfloat16"):
        got = ocl.backend.to_numpy(ocl.k["cast"](x, DTYPES_BY_NAME[target]))
        want = cpu.k["cast"](half, DTYPES_BY_NAME[target])
        if target in HALF:
            _same(got, want)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
def test_arithmetic_rounds_once_like_cpu(ocl: Any, cpu: Any, dtype: str) -> None:
    """a * b + c: each op computed in float32 and rounded once, bit for bit the CPU's."""
    rng = np.random.default_rng(5)
    a, b, c = ((rng.standard_normal(4001) * 300).astype(HALF[dtype]) for _ in range(3))
    a[:3] = [np.inf, 0.0, -0.0]
    want = cpu.k["add"](cpu.k["mul"](a, b), c)
    x, y, z = (ocl.backend.from_numpy(v, 0) for v in (a, b, c))
    _same(ocl.backend.to_numpy(ocl.k["add"](ocl.k["mul"](x, y), z)), want)
    _same(ocl.backend.to_numpy(ocl.k["div"](x, 3.0)), cpu.k["div"](a, 3.0))


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
def test_copies_keep_every_bit(ocl: Any, dtype: str) -> None:
    bits = np.array([[0x7C01, 0xFE12, 0x0001, 0x8000], [0x7FFF, 0x3C00, 0xFFFF, 0x7F81]], np.uint16)
    host = bits.view(HALF[dtype])
    t = ocl.k["permute"](ocl.backend.from_numpy(host, 0), (1, 0))  # to_numpy copies it
    assert _bits(ocl.backend.to_numpy(t)) == _bits(host.T.copy())
    dst = ocl.k["full"]((4, 2), 0.0, DTYPES_BY_NAME[dtype], 0)
    ocl.k["assign"](dst, t)
    assert _bits(ocl.backend.to_numpy(dst)) == _bits(host.T.copy())


def test_scatter_add_rounds_per_element(ocl: Any, cpu: Any) -> None:
    """Duplicate indices accumulate in float16 one add at a time, as NumPy's add.at does."""
    base = np.zeros(2, np.float16)
    idx = np.zeros((1, 3000), np.int64)
    src = np.full((1, 3000), 0.25, np.float16)
    want = cpu.k["scatter"](base.reshape(1, 2), 1, idx, src, "add")
    x = ocl.backend.from_numpy(base.reshape(1, 2), 0)
    got = ocl.k["scatter"](x, 1, ocl.backend.from_numpy(idx, 0), ocl.backend.from_numpy(src, 0), "add")
    _same(ocl.backend.to_numpy(got), want)
    assert ocl.backend.to_numpy(got)[0, 0] == 512.0  # float16 stalls: 512 + 0.25 rounds to 512


@pytest.mark.parametrize("dtype", ("complex64", "complex128"))
def test_complex_special_values(ocl: Any, cpu: Any, dtype: str) -> None:
    """Zero imaginary parts stay exact zeros, division by zero and inf/NaN parts as NumPy."""
    inf, nan = np.inf, np.nan
    a = np.array(
        [2 + 0j, complex(-1, -0.0), 0j, complex(inf, 1), complex(1, nan), complex(-inf, 2), 3 - 4j], dtype
    )
    b = np.array([0j, 2 + 0j, 0j, 1 + 1j, 1 + 0j, 0j, complex(0, -2)], dtype)
    x, y = ocl.backend.from_numpy(a, 0), ocl.backend.from_numpy(b, 0)
    for op in ("add", "mul", "div", "eq"):
        np.testing.assert_array_equal(ocl.backend.to_numpy(ocl.k[op](x, y)), cpu.k[op](a, b))
    np.testing.assert_array_equal(ocl.backend.to_numpy(ocl.k["abs"](x)), cpu.k["abs"](a))
    np.testing.assert_array_equal(
        ocl.backend.to_numpy(ocl.k["cast"](y, DTYPES_BY_NAME["bool"])),
        [False, True, False, True, True, False, True],
    )
    got = ocl.backend.to_numpy(ocl.k["exp"](x))
    np.testing.assert_allclose(got[:2].real, np.exp([2.0, -1.0]), rtol=1e-6)
    assert got[0].imag == 0 and not np.signbit(got[0].imag) and np.signbit(got[1].imag)
    assert got[5] == 0  # exp(-inf + 2j)
    roots = np.array([complex(-4, 0.0), complex(-4, -0.0), 0j], dtype)
    got = ocl.backend.to_numpy(ocl.k["sqrt"](ocl.backend.from_numpy(roots, 0)))
    np.testing.assert_array_equal(got, np.array([2j, -2j, 0j], dtype))


def test_complex_matmul_and_sum(ocl: Any) -> None:
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((2, 70, 33)) + 1j * rng.standard_normal((2, 70, 33))).astype(np.complex64)
    b = (rng.standard_normal((2, 33, 65)) + 1j * rng.standard_normal((2, 33, 65))).astype(np.complex64)
    x, y = ocl.backend.from_numpy(a, 0), ocl.backend.from_numpy(b, 0)
    yt = ocl.k["permute"](ocl.backend.from_numpy(b.transpose(0, 2, 1).copy(), 0), (0, 2, 1))
    for rhs in (y, yt):
        np.testing.assert_allclose(ocl.backend.to_numpy(ocl.k["matmul"](x, rhs)), a @ b, rtol=2e-5, atol=2e-5)
    got = ocl.backend.to_numpy(
        ocl.k["prod"](ocl.k["slice"](x, (slice(0, 1, 1), slice(0, 5, 1))), (2,), False)
    )
    np.testing.assert_allclose(got, np.prod(a[:1, :5], axis=2), rtol=1e-5)
    np.testing.assert_allclose(ocl.backend.to_numpy(ocl.k["sum"](x, (0, 1, 2), False)), a.sum(), rtol=1e-5)


# Native half (cl_khr_fp16) is chosen from the device's extension list when the program is
# built. PoCL here lacks it, so the native source is checked as text (it also passes clang's
# OpenCL C front end); the float path it replaces is what the tests above run.
FP16_EXTS = "cl_khr_byte_addressable_store cl_khr_fp16 cl_khr_fp64"


@pytest.mark.parametrize(("op", "binary"), [("add", True), ("exp", False)])
def test_float16_kernels_compute_in_half_where_the_device_has_fp16(op: str, binary: bool) -> None:
    from ember_opencl.elementwise import op_source

    src = op_source(op, DTYPES_BY_NAME["float16"], FP16_EXTS, binary)
    assert "#pragma OPENCL EXTENSION cl_khr_fp16 : enable" in src
    assert "__global half *p_out" in src and "half a = p_a[i_a];" in src
    assert "convert_half_rte(" in src and "ember_h2f" not in src


@pytest.mark.parametrize("exts", ["", "cl_khr_fp64 cl_khr_fp16_extra"])
def test_float16_kernels_compute_in_float_without_fp16(exts: str) -> None:
    from ember_opencl.elementwise import op_source

    src = op_source("add", DTYPES_BY_NAME["float16"], exts, True)
    assert "cl_khr_fp16" not in src and "half" not in src
    assert "float a = ember_h2f(p_a[i_a]);" in src and "ember_f2h(" in src


def test_only_float16_takes_the_native_path() -> None:
    from ember_opencl.elementwise import op_source

    for name in ("bfloat16", "float32"):
        assert "cl_khr_fp16" not in op_source("add", DTYPES_BY_NAME[name], FP16_EXTS, True)


def test_this_device_takes_the_path_its_extensions_name() -> None:
    """The runtime's choice is the same function of the extension list (on PoCL: float)."""
    import ember.backends as eb
    from ember_opencl import runtime
    from ember_opencl.elementwise import _native, native_half

    eb.get("opencl")
    dev = runtime.device(0)
    f16 = DTYPES_BY_NAME["float16"]
    assert _native(dev, f16) == native_half(dev.dev.extensions, f16) == dev.fp16
