"""The backend's array-level algorithms, run with NumPy standing in for CuPy.

conv2d's im2col layout, the stable descending sort, gather's index grids and scatter's flat
target offsets are plain array code that CuPy and NumPy spell alike; running them on NumPy
checks the algorithms against the CPU backend and the conformance references without a GPU
(CuPy's own behaviour, e.g. its stable argsort, is left to test_gpu.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from ember.backends import get
from ember_cuda import indexing, pool, sort

CPU = get("cpu").k


@pytest.fixture
def on_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    for mod in (indexing, pool, sort):
        monkeypatch.setattr(mod, "cupy", np)
    monkeypatch.setattr(pool, "matmul", np.matmul)


CONV_CASES = [
    ((2, 3, 5, 5), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1),
    ((1, 2, 6, 5), (3, 2, 3, 2), (2, 1), (1, 2), (1, 1), 1),
    ((1, 2, 7, 7), (2, 2, 2, 3), (1, 1), (0, 1), (2, 2), 1),
    ((2, 4, 4, 4), (6, 2, 3, 3), (1, 1), (1, 1), (1, 1), 2),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_im2col_matches_the_reference(on_numpy: None, case: tuple) -> None:
    nn = pytest.importorskip("ember_conformance.cases_nn")
    xs, ws, stride, padding, dilation, groups = case
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    got = pool.conv2d(x, w, stride, padding, dilation, groups)
    np.testing.assert_allclose(
        got, nn._conv2d(x, w, stride, padding, dilation, groups), rtol=1e-12, atol=1e-12
    )
    assert got.flags.c_contiguous


@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_matches_the_cpu_backend(on_numpy: None, descending: bool) -> None:
    x = np.random.default_rng(1).integers(-2, 3, (5, 11)).astype(np.float32)
    x[1, [2, 7]] = np.nan
    for dim in (0, 1):
        gv, gi = sort.sort(x, dim, descending)
        wv, wi = CPU["sort"](x, dim, descending)
        np.testing.assert_array_equal(gi, wi)
        np.testing.assert_array_equal(gv, wv)


def test_gather_grids_and_bounds(on_numpy: None) -> None:
    x = np.arange(20.0).reshape(4, 5)
    idx = np.array([[0, 3, 1], [2, 2, 0]], np.int64)
    for dim in (0, 1):
        np.testing.assert_array_equal(indexing.gather(x, dim, idx), CPU["gather"](x, dim, idx))
    with pytest.raises(IndexError, match="gather: index 5 is out of bounds for dimension 0 with size 4"):
        indexing.gather(x, 0, idx + 2)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_scatter_targets_match_the_cpu_backend(on_numpy: None, dim: int) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5, 6))
    shape = [3, 4, 5]
    shape[dim] = 7
    idx = rng.integers(0, x.shape[dim], shape).astype(np.int64)
    src = rng.standard_normal((7, 7, 7))
    out = x.copy()
    lin = indexing._targets(out, idx, dim)
    val = src[tuple(slice(0, s) for s in idx.shape)].reshape(-1)
    np.add.at(out.reshape(-1), lin, val)
    np.testing.assert_allclose(out, CPU["scatter"](x, dim, idx, src, "add"), rtol=1e-12)
