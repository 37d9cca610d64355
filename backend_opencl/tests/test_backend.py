"""The Backend object, views and aliasing, declared dtypes, and availability without OpenCL."""

from __future__ import annotations

from typing import Any

import ember.backends as eb
import numpy as np
import pytest
from _ocl_helpers import declared
from ember.backends import DTYPES_BY_NAME, UnsupportedDTypeError
from ember.backends.ops import PRIMITIVES


def test_no_fallbacks_and_fused_composites(ocl: Any) -> None:
    assert ocl.fallbacks() == []
    for op in ("softmax", "log_softmax", "clone", "amin", "argmin", "sigmoid", "remainder", "round"):
        assert op in ocl.overridden_composites()
    assert set(PRIMITIVES) <= set(ocl.native)


def test_declared_dtypes(ocl: Any) -> None:
    """Every ember dtype on a device with fp64 (PoCL): the half types and complex64 need no
    extension; float64 and complex128 need cl_khr_fp64."""
    assert set(declared()) == {d.name for d in eb.ALL_DTYPES}


def test_dtype_without_fp64(ocl: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without cl_khr_fp64 the double-based dtypes are not declared, and refused by name."""
    from ember_opencl import backend, runtime

    dev = runtime.devices()[0]

    class NoFp64:
        extensions = " ".join(e for e in dev.extensions.split() if e != "cl_khr_fp64")

    monkeypatch.setattr(runtime, "devices", lambda: [NoFp64()])
    backend.declared_dtypes.cache_clear()
    try:
        names = {d.name for d in backend.declared_dtypes()}
        assert names == {d.name for d in eb.ALL_DTYPES} - {"float64", "complex128"}
        with pytest.raises(UnsupportedDTypeError, match="opencl: backend 'opencl' has no complex128 support"):
            backend.check_dtype(DTYPES_BY_NAME["complex128"])
    finally:
        monkeypatch.undo()
        backend.declared_dtypes.cache_clear()


def test_unsupported_numpy_dtype_raises(ocl: Any) -> None:
    with pytest.raises(UnsupportedDTypeError, match="uint32"):
        ocl.backend.from_numpy(np.ones(2, np.uint32), 0)


def _np(dtype: str) -> np.dtype:
    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


@pytest.mark.parametrize("dtype", declared())
def test_host_round_trip(ocl: Any, dtype: str) -> None:
    nd = _np(dtype)
    for shape in ((), (0,), (5,), (2, 3, 4)):
        a = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(nd)
        got = ocl.backend.to_numpy(ocl.backend.from_numpy(a, 0))
        assert got.dtype == a.dtype and got.shape == a.shape
        np.testing.assert_array_equal(got, a)
    t = np.arange(12).reshape(3, 4).astype(nd).T  # non-contiguous host input
    np.testing.assert_array_equal(ocl.backend.to_numpy(ocl.backend.from_numpy(t, 0)), t)


def _pair(ocl: Any, shape: tuple[int, ...] = (4, 6)) -> tuple[np.ndarray, Any]:
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return a, ocl.backend.from_numpy(a, 0)


def test_views_match_numpy_and_alias(ocl: Any) -> None:
    be, k = ocl.backend, ocl.k
    a, x = _pair(ocl)
    views = {
        "permute": (k["permute"](x, (1, 0)), a.T),
        "slice": (k["slice"](x, (slice(1, 4, 2), slice(0, 6, 3))), a[1:4:2, 0:6:3]),
        "select": (k["slice"](x, (2,)), a[2]),
        "negative int": (k["slice"](x, (-1, slice(1, 5, 1))), a[-1, 1:5]),
        "reshape": (k["reshape"](x, (2, 2, 6)), a.reshape(2, 2, 6)),
        "expand": (
            k["expand"](k["slice"](x, (slice(0, 1, 1),)), (3, 1, 6)),
            np.broadcast_to(a[0:1], (3, 1, 6)),
        ),
        "as_strided": (
            k["as_strided"](x, (3, 2), (1, 6), 2),
            np.lib.stride_tricks.as_strided(a[0, 2:], (3, 2), (4, 24)),
        ),
    }
    for name, (v, want) in views.items():
        np.testing.assert_array_equal(be.to_numpy(v), want, err_msg=name)
        assert be.storage_id(v) == be.storage_id(x), name
    assert be.layout(views["permute"][0]) == ((1, 6), 0)
    assert be.layout(views["slice"][0]) == ((12, 3), 6)
    assert be.index_of(x) == 0


def test_write_through_views(ocl: Any) -> None:
    be, k = ocl.backend, ocl.k
    a, x = _pair(ocl)
    k["assign"](k["slice"](x, (slice(0, 4, 2), slice(1, 6, 2))), -1.0)
    a[0:4:2, 1:6:2] = -1.0
    t = k["permute"](x, (1, 0))
    k["assign"](k["slice"](t, (0,)), be.from_numpy(np.full(4, 7, np.int32), 0))  # casts int -> float
    a[:, 0] = 7
    np.testing.assert_array_equal(be.to_numpy(x), a)
    y = k["add"](t, 1.0)  # base changes are seen by existing views
    np.testing.assert_array_equal(be.to_numpy(y), a.T + 1)


def test_assign_refuses_expanded_destination(ocl: Any) -> None:
    x = ocl.backend.from_numpy(np.zeros((1, 3), np.float32), 0)
    with pytest.raises(ValueError, match="expanded view"):
        ocl.k["assign"](ocl.k["expand"](x, (4, 3)), 1.0)


def test_assign_overlapping_source(ocl: Any) -> None:
    be, k = ocl.backend, ocl.k
    a, x = _pair(ocl, (10,))
    k["assign"](k["slice"](x, (slice(1, 10, 1),)), k["slice"](x, (slice(0, 9, 1),)))
    a[1:] = a[:-1].copy()
    np.testing.assert_array_equal(be.to_numpy(x), a)


def test_reshape_view_or_none(ocl: Any) -> None:
    k, be = ocl.k, ocl.backend
    a, x = _pair(ocl, (4, 6))
    t, at = k["permute"](x, (1, 0)), a.T
    s, as_ = k["slice"](x, (slice(0, 4, 1), slice(0, 6, 2))), a[:, ::2]
    cases = [
        (x, a, (3, 8)),
        (x, a, (24,)),
        (t, at, (24,)),
        (t, at, (2, 3, 4)),
        (s, as_, (12,)),
        (s, as_, (2, 2, 3)),
    ]
    cases += [(t, at, (6, 1, 4)), (k["slice"](x, (0,)), a[0], (2, 3)), (x, a, (1, 4, 1, 6, 1))]
    for v, h, shape in cases:
        try:
            want = np.reshape(h, shape, copy=False)
        except ValueError:
            want = None
        got = k["reshape"](v, shape)
        if want is None:
            assert got is None, shape
        else:
            assert got is not None and be.storage_id(got) == be.storage_id(x), shape
            np.testing.assert_array_equal(be.to_numpy(got), want)
    assert be.to_numpy(k["reshape"](be.from_numpy(np.zeros((0, 3), np.float32), 0), (3, 0))).shape == (3, 0)


def test_unavailable_without_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    """No OpenCL platform: importing works, unavailable_reason explains, nothing raises."""
    import pyopencl as cl
    from ember_opencl import backend, runtime

    def fail() -> list[Any]:
        raise cl.LogicError("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")

    monkeypatch.setattr(runtime, "_devices", None)
    monkeypatch.setattr(cl, "get_platforms", fail)
    backend.declared_dtypes.cache_clear()
    try:
        be = backend.OpenCLBackend()
        reason = be.unavailable_reason()
        assert reason is not None and reason.startswith("no OpenCL platform found")
        assert "clGetPlatformIDs failed" in reason
        assert be.device_count() == 0
    finally:
        monkeypatch.undo()
        backend.declared_dtypes.cache_clear()
        runtime._devices = None
        runtime.devices()


def test_registry_status(ocl: Any) -> None:
    row = next(r for r in eb.status() if r["name"] == "opencl")
    assert row["available"] and row["fallbacks"] == [] and row["devices"]


def test_wide_index_and_work_group_matmul(ocl: Any, cpu: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 64-bit index kernels (arrays over 2**31 elements) and the 8x8 work-group matmul
    (GPUs) are not chosen on small inputs on PoCL: force them and compare."""
    from ember_opencl import matmul, strided

    monkeypatch.setattr(strided, "_INT_MAX", 4)
    monkeypatch.setattr(matmul, "_packed", lambda dev, dt: False)
    rng = np.random.default_rng(14)
    be, k = ocl.backend, ocl.k
    a = rng.standard_normal((3, 70, 40)).astype(np.float32)
    b = rng.standard_normal((3, 40, 66)).astype(np.float32)
    x, y = be.from_numpy(a, 0), be.from_numpy(b, 0)
    np.testing.assert_allclose(be.to_numpy(k["matmul"](x, y)), a @ b, rtol=1e-4, atol=1e-4)
    t = k["permute"](x, (2, 0, 1))
    np.testing.assert_array_equal(be.to_numpy(k["mul"](t, 2.0)), a.transpose(2, 0, 1) * np.float32(2))
    np.testing.assert_allclose(be.to_numpy(k["sum"](t, (0, 2), False)), a.sum(axis=(1, 2)), rtol=1e-5)
    np.testing.assert_array_equal(be.to_numpy(k["argmax"](t, 1, False)), a.transpose(2, 0, 1).argmax(1))
    np.testing.assert_array_equal(be.to_numpy(k["cumsum"](t, 2)), np.cumsum(a.transpose(2, 0, 1), axis=2))
    v, i = k["sort"](t, 2, True)
    wv, wi = cpu.k["sort"](a.transpose(2, 0, 1), 2, True)
    np.testing.assert_array_equal(be.to_numpy(i), wi)
    np.testing.assert_array_equal(be.to_numpy(v), wv)
    idx = rng.integers(0, 3, (2, 70, 40))
    np.testing.assert_array_equal(
        be.to_numpy(k["gather"](x, 0, be.from_numpy(idx, 0))), cpu.k["gather"](a, 0, idx)
    )


def test_forked_child_raises_instead_of_hanging(ocl: Any) -> None:
    import multiprocessing as mp

    x = ocl.backend.from_numpy(np.ones(3, np.float32), 0)
    ocl.backend.synchronize(0)
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        message = pool.apply_async(_use_in_child, (ocl.name,)).get(timeout=60)
    assert "forked subprocess" in message and "spawn" in message
    assert ocl.backend.to_numpy(ocl.k["add"](x, 1.0)).tolist() == [2.0, 2.0, 2.0]  # parent unaffected


def _use_in_child(name: str) -> str:
    lb = eb.get(name)
    try:
        lb.backend.from_numpy(np.ones(2, np.float32), 0)
    except RuntimeError as e:
        return str(e)
    return "no error"
