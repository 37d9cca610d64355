"""Every CUDA kernel against the CPU backend's, on a real GPU.

Skipped only when ``ember.backends.get('cuda')`` raises BackendUnavailableError (the
skip message carries its reason); any other load error fails. Integers, bool, Philox
words, sort indices, gather/scatter (deterministic path) and pooling indices must match
exactly; floats within a tolerance per dtype.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from ember.backends import DTYPES_BY_NAME, BackendUnavailableError, get, registry

try:
    CUDA = get("cuda")
except BackendUnavailableError as e:
    pytest.skip(f"cuda backend unavailable: {e}", allow_module_level=True)

CPU = get("cpu")
BE = CUDA.backend
K, C = CUDA.k, CPU.k
D = DTYPES_BY_NAME
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
ALL = ["bool", *INTS, *FLOATS, "complex64", "complex128"]
RTOL = {
    "float16": 2e-3,
    "bfloat16": 2e-2,
    "float32": 2e-5,
    "float64": 1e-12,
    "complex64": 2e-5,
    "complex128": 1e-12,
}


def npd(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)


def sample(
    name: str, shape: tuple[int, ...] = (3, 5), lo: float = -4.0, hi: float = 4.0, seed: int = 0
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if name in INTS:
        lo = 0 if name == "uint8" else lo
        return rng.integers(int(lo), int(hi) + 1, shape).astype(name)
    x = rng.uniform(lo, hi, shape)
    if name.startswith("complex"):
        x = x + 1j * rng.uniform(lo, hi, shape)
    return x.astype(npd(name))


def dev(a: Any) -> Any:
    return BE.from_numpy(np.asarray(a), 0) if isinstance(a, np.ndarray) else a


def host(x: Any) -> np.ndarray:
    return BE.to_numpy(x)


def check(got: Any, want: np.ndarray, exact: bool = False) -> None:
    got = host(got)
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    name = D[want.dtype.name].name if want.dtype.name in D else "bfloat16"
    if exact or name not in RTOL:
        np.testing.assert_array_equal(got, want)
    else:
        wide = np.complex128 if want.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(
            got.astype(wide), want.astype(wide), rtol=RTOL[name], atol=RTOL[name], equal_nan=True
        )


def both(op: str, *args: Any, exact: bool = False) -> None:
    check(K[op](*[dev(a) for a in args]), C[op](*args), exact)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize(
    "op", ["neg", "abs", "exp", "sin", "cos", "tanh", "erf", "floor", "ceil", "trunc", "round"]
)
def test_unary_float(op: str, dt: str) -> None:
    both(op, sample(dt))


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", ["log", "sqrt", "log1p", "expm1", "sign"])
def test_unary_positive(op: str, dt: str) -> None:
    both(op, sample(dt, lo=0.1, hi=4.0))


@pytest.mark.parametrize("dt", FLOATS)
def test_sigmoid(dt: str) -> None:
    x = sample(dt)
    check(K["sigmoid"](dev(x)), (1 / (1 + np.exp(-x.astype(np.float64)))).astype(x.dtype))


@pytest.mark.parametrize("dt", [*INTS, *FLOATS, "complex64", "complex128"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "eq", "lt", "le"])
def test_binary(op: str, dt: str) -> None:
    if dt.startswith("complex") and op in ("lt", "le"):
        pytest.skip("complex has no order")
    a, b = sample(dt, seed=1), sample(dt, seed=2)
    both(op, a, b, exact=dt in INTS)
    both(op, a, 3 if dt in INTS else 1.5, exact=dt in INTS)


@pytest.mark.parametrize("dt", [*INTS, "bool"])
@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor", "maximum", "minimum"])
def test_binary_integer(op: str, dt: str) -> None:
    both(op, sample(dt, seed=1), sample(dt, seed=2), exact=True)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", ["div", "maximum", "minimum", "pow"])
def test_binary_float(op: str, dt: str) -> None:
    a, b = sample(dt, lo=0.5, seed=1), sample(dt, seed=2)
    a.reshape(-1)[0] = np.nan
    both(op, a, b)


@pytest.mark.parametrize("dt", [*INTS, *FLOATS])
@pytest.mark.parametrize("op", ["floordiv", "remainder"])
def test_python_floor_rule(op: str, dt: str) -> None:
    a = sample(dt, (4, 7), lo=-20, hi=20, seed=3)
    b = sample(dt, (4, 7), lo=-6, hi=6, seed=4)
    b[b == 0] = 3
    both(op, a, b, exact=dt in ("float32", "float64", *INTS))
    if dt in ("float32", "float64"):
        both(op, np.array([1.0, -1.0, 5.5], dt), np.array([0.1, 0.1, -2.0], dt), exact=True)


def test_integer_division_by_zero_raises() -> None:
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        K["floordiv"](dev(np.array([1, 2], np.int32)), dev(np.array([1, 0], np.int32)))
    with pytest.raises(RuntimeError, match="negative integer powers"):
        K["pow"](dev(np.array([2], np.int64)), dev(np.array([-1], np.int64)))


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_cast(src: str, dst: str) -> None:
    x = sample(src, (4, 6), lo=-3.7, hi=3.7, seed=5)
    if src in FLOATS and dst != "bool":
        x = np.abs(x) if dst == "uint8" else x
    if src in FLOATS:
        x.reshape(-1)[0] = np.nan if dst == "bool" or dst in FLOATS else 0
    check(K["cast"](dev(x), D[dst]), C["cast"](x, D[dst]), exact=dst not in RTOL)


def test_where_full_arange_assign() -> None:
    c = sample("bool", (4, 5))
    both("where", c, sample("float32", (4, 5), seed=1), sample("float32", (4, 5), seed=2))
    for dt in ALL:
        check(K["full"]((2, 3), 1, D[dt], 0), C["full"]((2, 3), 1, D[dt], 0), exact=True)
    for dt in ("int64", "int16", "float32", "float64"):
        check(K["arange"](-3, 2, 7, D[dt], 0), C["arange"](-3, 2, 7, D[dt], 0), exact=True)
    x = dev(np.zeros((3, 4), np.float32))
    K["assign"](K["slice"](x, (slice(0, 3, 2),)), 5.0)
    assert host(x)[[0, 2]].tolist() == [[5.0] * 4] * 2 and host(x)[1].tolist() == [0.0] * 4


def test_views_alias_and_layout() -> None:
    base = dev(np.arange(24, dtype=np.float32).reshape(4, 6))
    assert K["reshape"](K["permute"](base, (1, 0)), (24,)) is None
    v = K["slice"](base, (slice(1, 4), slice(2, 6, 2)))
    assert BE.layout(v) == ((6, 2), 8) and BE.storage_id(v) == BE.storage_id(base)
    s = K["as_strided"](v, (2, 2), (1, 6), 3)  # relative to the allocation, not to v
    assert host(s).tolist() == [[3.0, 9.0], [4.0, 10.0]]
    K["assign"](s, 0.0)
    assert host(base)[0, 3] == 0 and host(base)[1, 4] == 0
    e = K["expand"](K["reshape"](base, (4, 1, 6)), (2, 4, 3, 6))
    assert BE.layout(e)[0] == (0, 6, 0, 1)
    check(K["clone"](e), np.broadcast_to(host(base)[None, :, None, :], (2, 4, 3, 6)), exact=True)
    assert BE.index_of(base) == 0


@pytest.mark.parametrize("dt", [*INTS, *FLOATS])
@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin"])
def test_reductions(op: str, dt: str) -> None:
    if op in ("sum", "prod") and dt in INTS and dt != "int64":
        pytest.skip("the frontend sums integers as int64; NumPy (the CPU backend) upcasts small ints itself")
    x = sample(dt, (3, 4, 5), lo=-2, hi=2)
    for dims, keep in [((0, 1, 2), False), ((1,), True), ((0, 2), False)]:
        both(op, x, dims, keep, exact=dt in INTS)


@pytest.mark.parametrize("dt", [*INTS, *FLOATS])
def test_arg_reductions_and_cumsum(dt: str) -> None:
    x = sample(dt, (3, 4, 5), seed=6)
    for op in ("argmax", "argmin"):
        for dim, keep in [(None, False), (None, True), (1, False), (2, True)]:
            both(op, x, dim, keep, exact=True)
    if dt in INTS and dt != "int64":
        return  # as for sum: the frontend scans integers as int64
    for d in range(3):
        both("cumsum", x, d, exact=dt in INTS)


@pytest.mark.parametrize("dt", FLOATS)
def test_matmul(dt: str) -> None:
    both("matmul", sample(dt, (2, 33, 17), seed=1), sample(dt, (2, 17, 9), seed=2))


def test_gather_and_bounds() -> None:
    x = sample("float32", (4, 5))
    idx = np.array([[0, 3, 1], [2, 2, 0]], np.int64)
    both("gather", x, 0, idx, exact=True)
    both("gather", x, 1, idx, exact=True)
    for bad in (-1, 4):
        with pytest.raises(IndexError):
            K["gather"](dev(x), 0, dev(np.array([[bad]], np.int64)))


@pytest.mark.parametrize("dt", ALL)
@pytest.mark.parametrize("deterministic", [True, False])
def test_scatter(dt: str, deterministic: bool) -> None:
    x = sample(dt, (4, 5))
    src = sample(dt, (6, 5), seed=9)
    idx = np.random.default_rng(3).integers(0, 4, (6, 5)).astype(np.int64)
    registry.set_deterministic(deterministic)
    try:
        both("scatter", x, 0, idx, src, "add", exact=deterministic)
        if deterministic:
            both("scatter", x, 0, idx, src, None, exact=True)
        both("scatter", x, 1, idx[:, :3] % 5, src, "add", exact=deterministic)
        with pytest.raises(IndexError):
            K["scatter"](dev(x), 0, dev(idx + 4), dev(src), "add")
    finally:
        registry.set_deterministic(False)


@pytest.mark.parametrize("dt", [*INTS, *FLOATS, "bool"])
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort(dt: str, descending: bool) -> None:
    x = sample(dt, (4, 9), lo=-2, hi=2, seed=7)
    if dt in FLOATS:
        x[0, [1, 5]] = np.nan
    for d in (0, 1):
        gv, gi = K["sort"](dev(x), d, descending)
        wv, wi = C["sort"](x, d, descending)
        check(gi, wi, exact=True)
        check(gv, wv, exact=True)


SPECIAL_DOMAINS = {
    "atan": (-3, 3), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "erfc": (-3, 3), "erfinv": (-0.9, 0.9),
    "erfcx": (-2, 5), "lgamma": (0.1, 5), "digamma": (0.1, 5), "ndtri": (0.05, 0.95), "log_ndtr": (-5, 5),
    "i0": (-3, 3), "i0e": (-3, 3), "i1": (-3, 3), "i1e": (-3, 3), "bessel_j0": (-9, 9), "bessel_j1": (-9, 9),
}  # fmt: skip


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", sorted(SPECIAL_DOMAINS))
def test_special_functions(op: str, dt: str) -> None:
    x = sample(dt, (40,), *SPECIAL_DOMAINS[op])
    got, want = host(K[op](dev(x))), C[op](x)
    assert got.dtype == want.dtype
    tol = 1e-9 if dt == "float64" else RTOL[dt]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def test_special_binary_scans_and_complex_parts() -> None:
    a, b = sample("float64", (30,), 1.1, 4, seed=1), sample("float64", (30,), 0.5, 3, seed=2)
    both("atan2", a - 2.5, b - 1.5)
    both("zeta", a, b)
    for n in (0, 1, 2):
        both("polygamma", b, n)
    for dt in ("int64", "float32", "float16"):
        both("cumprod", sample(dt, (3, 6), -1.5, 1.5), 1, exact=dt == "int64")
    z = sample("complex64", (3, 4))
    both("real", z, exact=True)
    both("imag", z, exact=True)
    both("complex", sample("float32", (3, 4), seed=1), sample("float32", (3, 4), seed=2), exact=True)


def test_nonzero() -> None:
    x = sample("int32", (4, 5), lo=-1, hi=1)
    both("nonzero", x, exact=True)


def test_cat_and_philox() -> None:
    parts = [sample("float32", (2, 3), seed=i) for i in range(3)]
    check(K["cat"]([dev(p) for p in parts], 0), C["cat"](parts, 0), exact=True)
    assert host(K["philox"](4, (0, 0), (0, 0, 0, 0), 0)).tolist() == [
        0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8
    ]  # fmt: skip
    for n, key, ctr in [(1001, (5, 6), (0xFFFFFFF0, 0xFFFFFFFF, 1, 0)), (3, (1, 2), (3, 4, 5, 6))]:
        check(K["philox"](n, key, ctr, 0), C["philox"](n, key, ctr, 0), exact=True)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax(op: str, dt: str) -> None:
    x = sample(dt, (3, 300, 4), lo=-8, hi=8)
    for d in range(3):
        xd = x.astype(np.float64)
        z = xd - xd.max(axis=d, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=d, keepdims=True))
        want = (z - lse) if op == "log_softmax" else np.exp(z - lse)
        check(K[op](dev(x), d), want.astype(x.dtype))


@pytest.mark.parametrize("dt", FLOATS)
def test_conv_and_pooling(dt: str) -> None:
    nn = pytest.importorskip("ember_conformance.cases_nn")
    x, w = sample(dt, (2, 4, 7, 6), seed=1), sample(dt, (6, 2, 3, 2), seed=2)
    args = ((2, 1), (1, 1), (1, 2), 2)
    want = nn._conv2d(x.astype(np.float64), w.astype(np.float64), *args).astype(x.dtype)
    check(K["conv2d"](dev(x), dev(w), *args), want)
    for params in [((2, 2), (2, 2), (0, 0), (1, 1), False), ((3, 2), (2, 1), (1, 1), (1, 2), True)]:
        gv, gi = K["max_pool2d"](dev(x), *params)
        wv, wi = nn._max_pool2d(x, *params)
        check(gv, wv, exact=True)
        check(gi, wi, exact=True)
        k, s, p, _, ceil = params
        for cip in (False, True):
            want = nn._avg_pool2d(x.astype(np.float64), k, s, p, ceil, cip).astype(x.dtype)
            check(K["avg_pool2d"](dev(x), k, s, p, ceil, cip), want)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_kernel(dt: str, nesterov: bool) -> None:
    from ember_cuda.optim import sgd_update

    p, g, b = (sample(dt, (50,), seed=i).astype(np.float64) for i in range(3))
    gp, gb = dev(p.astype(npd(dt))), dev(b.astype(npd(dt)))
    for first in (True, False):
        sgd_update(gp, dev(g.astype(npd(dt))), gb, 0.1, 0.9, 0.1, 0.01, nesterov, False, first)
        d = g + 0.01 * p
        b = d if first else 0.9 * b + 0.9 * d
        p = p - 0.1 * (d + 0.9 * b if nesterov else b)
    check(gp, p.astype(npd(dt)))
    check(gb, b.astype(npd(dt)))


def test_second_device_if_present() -> None:
    if BE.device_count() < 2:
        pytest.skip("one CUDA device")
    a = BE.from_numpy(np.arange(4, dtype=np.float32), 1)
    out = K["add"](a, a)
    assert BE.index_of(out) == 1 and host(out).tolist() == [0, 2, 4, 6]


def test_frontend_end_to_end() -> None:
    import ember

    x = ember.tensor([[1.0], [2.0]], device="cuda")
    y = ember.tensor([1.0, 2.0], device="cuda")
    assert (x + y).cpu().tolist() == [[2.0, 3.0], [3.0, 4.0]]
    ember.manual_seed(0)
    a = ember.rand(1000, device="cuda").cpu()
    ember.manual_seed(0)
    b = ember.rand(1000, device="cpu")
    assert a.tolist() == b.tolist()
