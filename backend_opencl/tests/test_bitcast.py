"""The ``bitcast`` view kernel on OpenCL: the same bytes as another dtype, aliasing its base.

The CPU kernel (NumPy's ``view(dtype)``) is the oracle for values, shape and layout; writes
through the result must reach the base's buffer and writes to the base must show through.
"""

from __future__ import annotations

from typing import Any

import ember.backends as eb
import numpy as np
import pytest
from _ocl_helpers import oracle_dtypes

DTYPES = oracle_dtypes()
DT = eb.DTYPES_BY_NAME
BASE = np.arange(48, dtype=np.int64).reshape(6, 8) * 3 + 1  # small non-negative: no NaN bit patterns


def _pairs() -> list[tuple[str, str]]:
    return [(a, b) for a in DTYPES for b in DTYPES if a != "bool" and b != "bool"]


def _views(ocl: Any, src: str) -> list[tuple[str, Any, np.ndarray]]:
    """(label, CLArray view, the same view in NumPy) for layouts every bitcast accepts."""
    host = BASE.astype(src)
    d = ocl.backend.from_numpy(host.copy(), 0)
    return [
        ("contig", d, host),
        ("rows", ocl.k["slice"](d, (slice(1, 6, 2),)), host[1:6:2]),
        ("cols", ocl.k["slice"](d, (slice(0, 6, 1), slice(4, 8, 1))), host[:, 4:8]),
    ]


def _accepted(x: Any, ratio: int) -> bool:
    """PyTorch's preconditions for a larger itemsize (the frontend checks them first)."""
    outer = x.strides[:-1]
    return x.shape[-1] % ratio == 0 and x.offset % ratio == 0 and all(s % ratio == 0 for s in outer)


@pytest.mark.parametrize(("src", "dst"), _pairs())
def test_bitcast_matches_numpy_view(ocl: Any, src: str, dst: str) -> None:
    old, new = DT[src].itemsize, DT[dst].itemsize
    checked = 0
    for label, x, ref in _views(ocl, src):
        if new > old and not _accepted(x, new // old):
            continue
        out = ocl.k["bitcast"](x, DT[dst])
        want = ref.view(np.dtype(dst))
        strides, offset = ocl.backend.layout(out)
        assert out.dtype is DT[dst] and out.shape == want.shape, label
        assert strides == tuple(s // new for s in want.strides), label
        assert offset == x.offset * old // new, label
        assert ocl.backend.storage_id(out) == ocl.backend.storage_id(x), label
        assert ocl.backend.to_numpy(out).tobytes() == np.ascontiguousarray(want).tobytes(), label
        checked += 1
    assert checked >= 2


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
def test_bitcast_aliases_both_ways(ocl: Any, dtype: str) -> None:
    host = BASE.astype(dtype)
    base = ocl.backend.from_numpy(host.copy(), 0)
    as_bytes = ocl.k["bitcast"](base, DT["uint8"])
    assert ocl.backend.storage_id(as_bytes) == ocl.backend.storage_id(base)
    row = ocl.k["slice"](as_bytes, (2,))
    fill = np.full(row.shape, 0x11, dtype=np.uint8)
    ocl.k["assign"](row, ocl.backend.from_numpy(fill, 0))
    want = host.copy()
    want[2] = np.full(8 * host.itemsize, 0x11, np.uint8).view(host.dtype)
    assert ocl.backend.to_numpy(base).tobytes() == want.tobytes()
    new = BASE.astype(dtype)[::-1].copy()
    ocl.k["assign"](base, ocl.backend.from_numpy(new, 0))
    assert ocl.backend.to_numpy(as_bytes).tobytes() == new.tobytes()


def test_bitcast_bool_to_uint8_and_back(ocl: Any) -> None:
    host = np.array([[True, False, True, True]])
    d = ocl.backend.from_numpy(host, 0)
    u = ocl.k["bitcast"](d, DT["uint8"])
    assert ocl.backend.to_numpy(u).tolist() == [[1, 0, 1, 1]]
    back = ocl.k["bitcast"](u, DT["bool"])
    assert ocl.backend.to_numpy(back).tolist() == [[True, False, True, True]]


def test_bitcast_zero_dim_same_itemsize(ocl: Any) -> None:
    d = ocl.backend.from_numpy(np.array(1.0, dtype=np.float32), 0)
    out = ocl.k["bitcast"](d, DT["int32"])
    assert out.shape == () and ocl.backend.to_numpy(out).item() == 0x3F800000
