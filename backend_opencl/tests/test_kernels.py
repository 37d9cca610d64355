"""Every OpenCL kernel against the CPU backend's kernel (the oracle), for every declared dtype.

Results must be equal; tolerances only where the device's math library may round
differently (transcendentals, float sums and products, matmul, softmax).
"""

from __future__ import annotations

from typing import Any

import ember.backends as eb
import numpy as np
import pytest
from _ocl_helpers import LAYOUTS, check, make, oracle_dtypes, values
from ember.backends.ops import BINARY, COMPARE, UNARY

DTYPES = oracle_dtypes()
CPU = eb.get("cpu")  # the oracle, also to decide at collection which (op, dtype) pairs exist
FLOATS = [d for d in DTYPES if d.startswith("float")]
EXACT_UNARY = ("neg", "abs", "floor", "ceil", "trunc", "round", "sign", "sqrt", "clone")
APPROX_UNARY = ("exp", "log", "sin", "cos", "tanh", "erf", "log1p", "expm1", "sigmoid")
POSITIVE = ("log", "sqrt", "log1p")
APPROX_BINARY = ("pow",)


def _tol(dtype: str) -> dict[str, float]:
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _cpu_result(fn: Any, *args: Any) -> Any:
    """The CPU oracle's result, or None where NumPy does not define the op for the dtype."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    except TypeError:
        return None


UNARY_OPS = UNARY + ("ceil", "trunc", "round", "sign", "log1p", "expm1", "sigmoid", "clone")


def _unary_ref(op: str) -> Any:
    return _sigmoid if op == "sigmoid" else CPU.k[op]


def _unary_defined(op: str, dtype: str) -> bool:
    """What the frontend may ask for: float-only ops on floats, and ops NumPy defines for the
    dtype without changing it (NumPy's ``negative`` of bool, ``sqrt`` of int8 are never asked)."""
    if op in APPROX_UNARY + ("sqrt",) and dtype not in FLOATS:
        return False
    want = _cpu_result(_unary_ref(op), np.ones(2, dtype))
    return want is not None and want.dtype == np.dtype(dtype)


def _binary_defined(op: str, dtype: str) -> bool:
    if op == "div" and dtype not in FLOATS or op.startswith("bitwise") and dtype in FLOATS:
        return False
    if op in ("floordiv", "remainder", "pow") and dtype == "bool":
        return False
    return _cpu_result(CPU.k[op], np.ones(2, dtype), np.ones(2, dtype)) is not None


def _scalar_of(dtype: str) -> Any:
    return 2.5 if dtype in FLOATS else (True if dtype == "bool" else 3)


def _scalar_defined(op: str, dtype: str) -> bool:
    if op == "div" and dtype not in FLOATS or dtype == "bool" and op in ("sub", "pow", "floordiv"):
        return False
    a, s = np.ones(2, dtype), _scalar_of(dtype)
    return _cpu_result(CPU.k[op], a, s) is not None


SCALAR_OPS = ("add", "sub", "mul", "div", "maximum", "pow", "floordiv", "eq", "lt", "le")
# Every (op, dtype) runs on contiguous arrays; the strided layouts (whose indexing code is one
# template for all dtypes) run for one float, one integer and bool, which keeps this file to
# what the conformance suite does not already prove (it runs every op and dtype too).
STRIDED_DTYPES = ("float32", "int64", "bool")


def _with_layouts(cases: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    return [(op, d, lay) for op, d in cases for lay in LAYOUTS if lay == "contig" or d in STRIDED_DTYPES]


UNARY_CASES = [(op, d) for op in UNARY_OPS for d in DTYPES if _unary_defined(op, d)]
BINARY_CASES = [(op, d) for op in BINARY + COMPARE + ("remainder",) for d in DTYPES if _binary_defined(op, d)]
SCALAR_CASES = [(op, d) for op in SCALAR_OPS for d in DTYPES if _scalar_defined(op, d)]


@pytest.mark.parametrize(("op", "dtype", "layout"), _with_layouts(UNARY_CASES))
def test_unary(ocl: Any, cpu: Any, op: str, dtype: str, layout: str) -> None:
    rng = np.random.default_rng(0)
    a, x = make(ocl, layout, lambda s: values(rng, s, dtype, op in POSITIVE))
    with np.errstate(all="ignore"):
        want = _unary_ref(op)(a)
    got = ocl.backend.to_numpy(ocl.k[op](x))
    check(got, want, **(_tol(dtype) if op in APPROX_UNARY else {}))


def _binary_inputs(ocl: Any, op: str, dtype: str, layout: str) -> tuple[Any, Any, Any, Any]:
    rng = np.random.default_rng(1)
    a, x = make(ocl, layout, lambda s: values(rng, s, dtype))
    b, y = make(ocl, layout, lambda s: _second(rng, s, op, dtype))
    return a, x, b, y


def _second(rng: np.random.Generator, shape: tuple[int, ...], op: str, dtype: str) -> np.ndarray:
    v = values(rng, shape, dtype)
    if op == "pow" and dtype not in FLOATS:
        return (v.astype(np.int64) % 7 - (2 if dtype != "uint8" else 0)).astype(dtype)
    if op in ("floordiv", "remainder") and dtype not in FLOATS:
        v[v == 0] = 3
    return v


@pytest.mark.parametrize(("op", "dtype", "layout"), _with_layouts(BINARY_CASES))
def test_binary(ocl: Any, cpu: Any, op: str, dtype: str, layout: str) -> None:
    a, x, b, y = _binary_inputs(ocl, op, dtype, layout)
    with np.errstate(all="ignore"):
        want = cpu.k[op](a, b)
    got = ocl.backend.to_numpy(ocl.k[op](x, y))
    check(got, want, **(_tol(dtype) if op in APPROX_BINARY and dtype in FLOATS else {}))


@pytest.mark.parametrize(("op", "dtype"), SCALAR_CASES)
def test_binary_scalar(ocl: Any, cpu: Any, op: str, dtype: str) -> None:
    rng = np.random.default_rng(2)
    a, x = make(ocl, "transposed", lambda s: values(rng, s, dtype))
    s = _scalar_of(dtype)
    for args, dargs in (((a, s), (x, s)), ((s, a), (s, x))):
        if op in ("pow", "floordiv") and args[1] is a and dtype not in FLOATS:
            continue  # the array is the exponent / divisor: may hold negatives or zeros
        with np.errstate(all="ignore"):
            want = cpu.k[op](*args)
        check(ocl.backend.to_numpy(ocl.k[op](*dargs)), want, **(_tol(dtype) if op == "pow" else {}))


def test_float_corner_cases(ocl: Any, cpu: Any) -> None:
    """NaN, infinities and signed zeros through the ops whose NumPy rules are subtle."""
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 7.0, -7.0], np.float32)
    a, b = np.meshgrid(v, v)
    x, y = ocl.backend.from_numpy(a, 0), ocl.backend.from_numpy(b, 0)
    for op in ("maximum", "minimum", "floordiv", "remainder", "div", "eq", "lt", "le"):
        with np.errstate(all="ignore"):
            want = cpu.k[op](a, b)
        check(ocl.backend.to_numpy(ocl.k[op](x, y)), want)
    for op in ("sign", "round", "floor", "trunc", "abs"):
        check(ocl.backend.to_numpy(ocl.k[op](x)), cpu.k[op](a))


def test_integer_edges(ocl: Any, cpu: Any) -> None:
    """Wrapping arithmetic, Python's floor rule for negatives, MIN // -1 without a trap."""
    a = np.array([-128, -7, 7, -1, 127, 100, 1, -1, -1, 0], np.int8)
    b = np.array([-1, 2, -2, 3, 2, 3, -3, -3, -2, 5], np.int8)
    x, y = ocl.backend.from_numpy(a, 0), ocl.backend.from_numpy(b, 0)
    for op in ("add", "sub", "mul", "floordiv", "remainder", "pow"):
        with np.errstate(all="ignore"):
            check(ocl.backend.to_numpy(ocl.k[op](x, y)), cpu.k[op](a, b))
    check(ocl.backend.to_numpy(ocl.k["neg"](x)), cpu.k["neg"](a))
    check(ocl.backend.to_numpy(ocl.k["abs"](x)), cpu.k["abs"](a))


def test_integer_errors(ocl: Any) -> None:
    x = ocl.backend.from_numpy(np.array([4, 5], np.int32), 0)
    zero = ocl.backend.from_numpy(np.array([1, 0], np.int32), 0)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ocl.k["floordiv"](x, zero)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ocl.k["remainder"](x, zero)
    with pytest.raises(RuntimeError, match="negative integer powers"):
        ocl.k["pow"](x, -1)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_where(ocl: Any, cpu: Any, dtype: str, layout: str) -> None:
    rng = np.random.default_rng(3)
    c, cx = make(ocl, layout, lambda s: values(rng, s, "bool"))
    a, x = make(ocl, layout, lambda s: values(rng, s, dtype))
    b, y = make(ocl, layout if layout in ("zerod", "empty") else "expanded", lambda s: values(rng, s, dtype))
    check(ocl.backend.to_numpy(ocl.k["where"](cx, x, y)), cpu.k["where"](c, a, b))
    s = np.array(1, dtype).item()
    check(ocl.backend.to_numpy(ocl.k["where"](cx, x, s)), cpu.k["where"](c, a, np.array(s, dtype)))


@pytest.mark.parametrize(
    ("src", "dst", "layout"),
    [
        (src, dst, lay)
        for src in DTYPES
        for dst in DTYPES
        for lay in ("contig", "transposed", "sliced", "zerod")
        if lay == "contig" or "float32" in (src, dst)
    ],
)
def test_cast(ocl: Any, cpu: Any, src: str, dst: str, layout: str) -> None:
    rng = np.random.default_rng(4)

    def data(s: tuple[int, ...]) -> np.ndarray:
        v = values(rng, s, src)
        return (v * 7.3).astype(src) if src in FLOATS else v  # fractional, both signs

    a, x = make(ocl, layout, data)
    dt = ocl.backend.dtypes
    target = next(d for d in dt if d.name == dst)
    from ember.backends import DTYPES_BY_NAME

    check(ocl.backend.to_numpy(ocl.k["cast"](x, target)), cpu.k["cast"](a, DTYPES_BY_NAME[dst]))


REDUCE_DIMS = ((0,), (1,), (2,), (0, 2), (1, 2), (0, 1, 2))


@pytest.mark.parametrize(
    ("op", "dtype", "dims", "keepdim"),
    [
        (op, dtype, dims, keepdim)
        for op in ("sum", "prod", "amax", "amin")
        for dtype in DTYPES
        for dims in REDUCE_DIMS
        for keepdim in (False, True)
        # every dim set for one float and one integer dtype; the others, two sets
        if dtype in STRIDED_DTYPES[:2] or (dims in ((1,), (0, 2)) and keepdim == (dims == (1,)))
    ],
)
def test_reduce(ocl: Any, cpu: Any, op: str, dtype: str, dims: tuple[int, ...], keepdim: bool) -> None:
    rng = np.random.default_rng(5)
    for layout in ("contig", "transposed", "sliced", "expanded"):
        a, x = make(ocl, layout, lambda s: values(rng, s, dtype), shape=(3, 4, 5))
        with np.errstate(all="ignore"):
            want = cpu.k[op](a, dims, keepdim)
        tol = _tol(dtype) if dtype in FLOATS else {}
        check(ocl.backend.to_numpy(ocl.k[op](x, dims, keepdim)), want, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ("sum", "prod", "amax", "amin"))
def test_reduce_large_and_empty(ocl: Any, cpu: Any, op: str, dtype: str) -> None:
    """The two-pass path (few outputs, many elements) and reductions over empty dims."""
    rng = np.random.default_rng(6)
    a = values(rng, (3, 40000), dtype)
    if op == "prod":
        a = np.ones_like(a) if dtype == "bool" else (np.sign(a) + (a == 0)).astype(dtype)
    x = ocl.backend.from_numpy(a, 0)
    with np.errstate(all="ignore"):
        for dims in ((1,), (0, 1)):
            tol = {"rtol": 1e-5 if dtype == "float32" else 1e-12} if op == "sum" else {}
            want = cpu.k[op](a, dims, False)
            check(ocl.backend.to_numpy(ocl.k[op](x, dims, False)), want, **tol)
    e = ocl.backend.from_numpy(values(rng, (0, 3), dtype), 0)
    if op in ("sum", "prod"):
        check(
            ocl.backend.to_numpy(ocl.k[op](e, (0,), True)), cpu.k[op](values(rng, (0, 3), dtype), (0,), True)
        )
    else:
        with pytest.raises(ValueError):
            ocl.k[op](e, (0,), False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ("argmax", "argmin"))
def test_argreduce(ocl: Any, cpu: Any, op: str, dtype: str) -> None:
    rng = np.random.default_rng(7)
    for layout in ("contig", "transposed", "sliced", "zerod"):
        a, x = make(ocl, layout, lambda s: values(rng, s, dtype) // (1 if dtype in FLOATS else 8), (3, 4, 5))
        if dtype in FLOATS and layout == "contig":
            a[1, 2, 3] = a[2, 0, 1] = np.nan  # first NaN wins
            x = ocl.backend.from_numpy(a, 0)
        for dim in (None,) + tuple(range(a.ndim)):
            for keepdim in (False, True):
                check(ocl.backend.to_numpy(ocl.k[op](x, dim, keepdim)), cpu.k[op](a, dim, keepdim))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumsum(ocl: Any, cpu: Any, dtype: str) -> None:
    rng = np.random.default_rng(8)
    for layout in ("contig", "transposed", "sliced", "expanded", "empty"):
        a, x = make(ocl, layout, lambda s: values(rng, s, dtype), (3, 4, 5))
        for dim in range(3):
            check(ocl.backend.to_numpy(ocl.k["cumsum"](x, dim)), cpu.k["cumsum"](a, dim))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_softmax(ocl: Any, op: str, dtype: str) -> None:
    rng = np.random.default_rng(9)
    for layout in ("contig", "transposed", "sliced"):
        a, x = make(ocl, layout, lambda s: values(rng, s, dtype), (3, 4, 5))
        for dim in range(3):
            z = a.astype(np.float64) - a.max(axis=dim, keepdims=True)
            lse = np.log(np.exp(z).sum(axis=dim, keepdims=True))
            want = (np.exp(z - lse) if op == "softmax" else z - lse).astype(dtype)
            check(ocl.backend.to_numpy(ocl.k[op](x, dim)), want, **_tol(dtype))


MATMUL_SHAPES = (((), 3, 4, 5), ((2,), 70, 130, 65), ((2, 3), 5, 0, 7), ((), 1, 1, 1), ((), 0, 3, 2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul(ocl: Any, cpu: Any, dtype: str) -> None:
    rng = np.random.default_rng(10)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype in FLOATS else {}
    for batch, n, k, m in MATMUL_SHAPES:
        a, b = values(rng, batch + (n, k), dtype), values(rng, batch + (k, m), dtype)
        x, y = ocl.backend.from_numpy(a, 0), ocl.backend.from_numpy(b, 0)
        check(ocl.backend.to_numpy(ocl.k["matmul"](x, y)), cpu.k["matmul"](a, b), **tol)
    a, x = make(ocl, "transposed", lambda s: values(rng, s, dtype), (40, 33))
    s, y = make(ocl, "sliced", lambda s: values(rng, s, dtype), (33, 20))
    check(ocl.backend.to_numpy(ocl.k["matmul"](x, y)), cpu.k["matmul"](a, s), **tol)
    e, z = make(ocl, "expanded", lambda s: values(rng, s, dtype), (3, 33, 20))
    x3 = ocl.k["expand"](ocl.k["reshape"](x, (1, 40, 33)), (3, 40, 33))
    want = cpu.k["matmul"](np.broadcast_to(a, (3, 40, 33)), e)
    check(ocl.backend.to_numpy(ocl.k["matmul"](x3, z)), want, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_scatter(ocl: Any, cpu: Any, dtype: str) -> None:
    rng = np.random.default_rng(11)
    a, x = make(ocl, "transposed", lambda s: values(rng, s, dtype), (4, 5, 6))
    for dim in range(3):
        ishape = list(a.shape)
        ishape[dim] = 7
        idx = rng.integers(0, a.shape[dim], ishape)
        check(
            ocl.backend.to_numpy(ocl.k["gather"](x, dim, ocl.backend.from_numpy(idx, 0))),
            cpu.k["gather"](a, dim, idx),
        )
        ishape[dim] = 3  # duplicates along dim: last write wins, adds accumulate in order
        idx = rng.integers(0, a.shape[dim], ishape)
        src = values(rng, tuple(ishape), dtype)
        ix, sx = ocl.backend.from_numpy(idx, 0), ocl.backend.from_numpy(src, 0)
        for reduce in (None, "add"):
            want = cpu.k["scatter"](a, dim, idx, src, reduce)
            check(ocl.backend.to_numpy(ocl.k["scatter"](x, dim, ix, sx, reduce)), want)
            s = np.array(1, dtype).item()
            want = cpu.k["scatter"](a, dim, idx, s, reduce)
            check(ocl.backend.to_numpy(ocl.k["scatter"](x, dim, ix, s, reduce)), want)


@pytest.mark.parametrize("bad", (-1, 4, 1 << 40))
def test_gather_scatter_bad_index(ocl: Any, bad: int) -> None:
    x = ocl.backend.from_numpy(np.arange(24, dtype=np.float32).reshape(4, 6), 0)
    idx = np.zeros((2, 6), np.int64)
    idx[1, 3] = bad
    ix = ocl.backend.from_numpy(idx, 0)
    with pytest.raises(IndexError, match="out of range"):
        ocl.k["gather"](x, 0, ix)
    with pytest.raises(IndexError, match="out of range"):
        ocl.k["scatter"](x, 0, ix, 1.0, None)
    ok = ocl.k["gather"](x, 0, ocl.backend.from_numpy(np.zeros((2, 6), np.int64), 0))  # state is clean
    assert ocl.backend.to_numpy(ok).tolist() == [list(range(6))] * 2


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort(ocl: Any, cpu: Any, dtype: str) -> None:
    rng = np.random.default_rng(12)

    def data(s: tuple[int, ...]) -> np.ndarray:
        v = rng.integers(-3, 4, s).astype(dtype)  # many ties
        if dtype in FLOATS and v.size > 4:
            v.reshape(-1)[[1, 4]] = np.nan
        return v

    for layout in ("contig", "transposed", "sliced", "zerod", "empty"):
        a, x = make(ocl, layout, data, (4, 5, 33))
        for dim in range(max(a.ndim, 1)):
            for desc in (False, True):
                v, i = ocl.k["sort"](x, dim, desc)
                wv, wi = cpu.k["sort"](a, dim, desc)
                check(ocl.backend.to_numpy(i), wi)
                check(ocl.backend.to_numpy(v), wv)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cat(ocl: Any, cpu: Any, dtype: str) -> None:
    rng = np.random.default_rng(13)
    a, x = make(ocl, "transposed", lambda s: values(rng, s, dtype), (3, 4))
    b, y = make(ocl, "sliced", lambda s: values(rng, s, dtype), (2, 4))
    e, z = make(ocl, "empty", lambda s: values(rng, s, dtype), (3, 4))
    check(ocl.backend.to_numpy(ocl.k["cat"]([x, y, z], 0)), cpu.k["cat"]([a, b, e], 0))
    check(ocl.backend.to_numpy(ocl.k["cat"]([x, x], 1)), cpu.k["cat"]([a, a], 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_full_arange(ocl: Any, cpu: Any, dtype: str) -> None:
    from ember.backends import DTYPES_BY_NAME

    dt = DTYPES_BY_NAME[dtype]
    value = 2.5 if dtype in FLOATS else (True if dtype == "bool" else 7)
    for shape in ((), (0,), (3, 4)):
        check(ocl.backend.to_numpy(ocl.k["full"](shape, value, dt, 0)), cpu.k["full"](shape, value, dt, 0))
    start, step = (0.5, 0.1) if dtype in FLOATS else (1, 1 if dtype == "bool" else 3)
    for n in (0, 1, 1000):
        if dtype == "bool" and n > 1:
            continue
        check(
            ocl.backend.to_numpy(ocl.k["arange"](start, step, n, dt, 0)),
            cpu.k["arange"](start, step, n, dt, 0),
        )


KAT = (
    ((0, 0), (0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 4, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0xA4093822, 0x299F31D0),
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
)


@pytest.mark.parametrize("key, counter, words", KAT)
def test_philox_kat(ocl: Any, key: Any, counter: Any, words: Any) -> None:
    got = ocl.backend.to_numpy(ocl.k["philox"](4, key, counter, 0))
    assert got.dtype == np.int64  # ops.py: words as int64 in [0, 2**32)
    assert got.tolist() == list(words)


def test_philox_matches_cpu(ocl: Any, cpu: Any) -> None:
    assert ocl.backend.to_numpy(ocl.k["philox"](0, (1, 2), (0, 0, 0, 0), 0)).shape == (0,)
    for n in (1, 5, 40003):
        counter = (0xFFFFFFF0, 0xFFFFFFFF, 3, 0)  # the low 64 bits carry into the high
        want = cpu.k["philox"](n, (123, 456), counter, 0)
        check(ocl.backend.to_numpy(ocl.k["philox"](n, (123, 456), counter, 0)), want)
