"""The fast paths of the matmul and elementwise kernels, each against its plain counterpart.

The packed matmul copies ``a``'s panel row by row or column by column depending on its
strides, reads a transposed ``b`` along its columns, and stores full blocks of the last panel
straight to the output: each path performs the same fused multiply-adds in the same order,
so every layout of one product gives the same bits. Strided elementwise kernels carry a digit
counter per dimension across a work item's chunk instead of dividing per element, or take a
run of one row when rows are long.
"""

from __future__ import annotations

from typing import Any

import ember.backends as eb
import numpy as np
import pytest
from _ocl_helpers import values

# (n, k, m): one partial tile, several k panels with a partial last one, full and partial
# column blocks, an empty reduction.
SHAPES = [(5, 7, 3), (70, 300, 97), (64, 128, 64), (3, 0, 4)]


def _dev(ocl: eb.LoadedBackend, v: np.ndarray, transposed: bool) -> Any:
    """``v`` on the device, contiguous or as the transposed view of a contiguous array."""
    if not transposed:
        return ocl.backend.from_numpy(np.ascontiguousarray(v), 0)
    perm = tuple(range(v.ndim - 2)) + (v.ndim - 1, v.ndim - 2)
    return ocl.k["permute"](ocl.backend.from_numpy(np.ascontiguousarray(v.transpose(perm)), 0), perm)


def _host(ocl: eb.LoadedBackend, a: Any) -> np.ndarray:
    return np.asarray(ocl.backend.to_numpy(a))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_layouts_give_the_same_bits(ocl, shape: tuple[int, int, int], dtype: str) -> None:  # type: ignore[no-untyped-def]
    n, k, m = shape
    rng = np.random.default_rng(0)
    a, b = values(rng, (2, n, k), dtype), values(rng, (2, k, m), dtype)
    want = a.astype(np.float64) @ b.astype(np.float64)
    results = [
        _host(ocl, ocl.k["matmul"](_dev(ocl, a, ta), _dev(ocl, b, tb)))
        for ta in (False, True)
        for tb in (False, True)
    ]
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(results[0], want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_matmul_integer_paths_are_exact(ocl, dtype: str) -> None:  # type: ignore[no-untyped-def]
    """Integers accumulate in other lanes than their storage (no direct store): exact results."""
    rng = np.random.default_rng(1)
    a, b = values(rng, (70, 200), dtype), values(rng, (200, 67), dtype)
    want = a.astype(np.int64) @ b.astype(np.int64)
    want = want != 0 if dtype == "bool" else want.astype(dtype)
    for ta in (False, True):
        got = _host(ocl, ocl.k["matmul"](_dev(ocl, a, ta), _dev(ocl, b, not ta)))
        np.testing.assert_array_equal(got, want)


# Short last dims carry counters across chunks; from 16 on a work item takes a run of a row
# (one run, several, a partial last one).
WALKS = [(3, 5, 7, 11), (2, 70, 3), (130, 2, 1, 3), (3, 40, 17), (2, 3, 150)]


@pytest.mark.parametrize("shape", WALKS)
def test_strided_elementwise_walk_matches_numpy(ocl, shape: tuple[int, ...]) -> None:  # type: ignore[no-untyped-def]
    """A permuted operand plus a broadcast one: chunks start and wrap mid-dimension."""
    rng = np.random.default_rng(2)
    x = values(rng, shape[::-1], "float32")
    bias = values(rng, (shape[1],) + (1,) * (len(shape) - 2), "float32")
    perm = tuple(range(len(shape)))[::-1]
    xv = ocl.k["permute"](ocl.backend.from_numpy(x, 0), perm)
    bv = ocl.k["expand"](ocl.backend.from_numpy(bias, 0), shape)
    got = _host(ocl, ocl.k["add"](xv, bv))
    np.testing.assert_array_equal(got, x.transpose(perm) + np.broadcast_to(bias, shape))
