"""Helpers of the OpenCL backend's oracle tests (a module name unique across ember's test
folders, so running them together with ``tests/`` cannot pick up another ``conftest``).

``make(layout, shape, dtype)`` builds the same values twice, as a NumPy view for the CPU
kernel and as the matching CLArray view (built with this backend's own view kernels), so
every layout (0-d, empty, expanded, transposed, step-sliced) is compared without copies.
"""

from __future__ import annotations

from typing import Any

import ember.backends as eb
import numpy as np

LAYOUTS = ("contig", "zerod", "empty", "expanded", "transposed", "sliced")


def declared() -> list[str]:
    """Names of the dtypes the OpenCL backend declares; an unavailable backend is an error
    (these tests exist to prove the backend: a missing OpenCL platform must fail them)."""
    lb = eb.get("opencl")
    order = [d.name for d in eb.ALL_DTYPES]
    return sorted((d.name for d in lb.backend.dtypes), key=order.index)


# float16, bfloat16 and complex are certified by the conformance suite (every op, every
# layout, tolerances per dtype) and by test_half_complex.py's exact checks; the oracle
# tests below cover the other dtypes, whose results must equal the CPU kernels' exactly.
NEW_DTYPES = ("float16", "bfloat16", "complex64", "complex128")


def oracle_dtypes() -> list[str]:
    """The declared dtypes that the oracle tests run (see NEW_DTYPES)."""
    return [d for d in declared() if d not in NEW_DTYPES]


def values(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: str, positive: bool = False
) -> np.ndarray:
    """Random values of ``dtype``; small integers so products and powers stay readable."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "uint8":
        return rng.integers(0, 40, shape).astype(dtype)
    if dtype.startswith("int"):
        lo = 1 if positive else -20
        return rng.integers(lo, 20, shape).astype(dtype)
    v = rng.standard_normal(shape) * 3
    return (np.abs(v) + 0.1 if positive else v).astype(dtype)


def make(
    lb: eb.LoadedBackend, layout: str, data: Any, shape: tuple[int, ...] = (3, 4)
) -> tuple[np.ndarray, Any]:
    """(NumPy view, CLArray view) with the same values; ``data(shape)`` draws base values."""
    k, be = lb.k, lb.backend
    if layout == "zerod":
        base = np.asarray(data(()))
        return base, be.from_numpy(base, 0)
    if layout == "empty":
        base = data((0,) + shape[1:])
        return base, be.from_numpy(base, 0)
    if layout == "expanded":
        base = data((1,) + shape[1:])
        return np.broadcast_to(base, shape), k["expand"](be.from_numpy(base, 0), shape)
    if layout == "transposed":
        base = data(shape[::-1])
        perm = tuple(range(len(shape)))[::-1]
        return base.transpose(perm), k["permute"](be.from_numpy(base, 0), perm)
    if layout == "sliced":
        base = data(tuple(2 * s + 1 for s in shape))
        key = tuple(slice(1, 2 * s + 1, 2) for s in shape)
        return base[key], k["slice"](be.from_numpy(base, 0), key)
    base = data(shape)
    return base, be.from_numpy(base, 0)


def check(got: np.ndarray, want: np.ndarray, rtol: float = 0.0, atol: float = 0.0) -> None:
    """Same shape, dtype and values; exact unless tolerances are given."""
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if rtol or atol:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)
