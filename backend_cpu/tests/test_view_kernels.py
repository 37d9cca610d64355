"""The CPU view kernels' shortcuts against NumPy's own answers: ``expand`` builds the read-only
broadcast view itself for a contiguous input, ``reshape`` refuses a copy, ``layout`` skips
the address arithmetic for an array that owns its storage."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from ember_cpu.backend import CPUBackend
from ember_cpu.kernels import expand, reshape

CASES = [
    ((32,), (20, 10, 32)),
    ((1, 6), (4, 6)),
    ((4, 1), (4, 6)),
    ((), (2, 3)),
    ((3, 1, 6), (2, 3, 5, 6)),
    ((1, 0), (3, 0)),
    ((2, 3), (2, 3)),
]


@pytest.mark.parametrize(("shape", "to"), CASES)
@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int64, np.bool_, np.complex64, ml_dtypes.bfloat16]
)
def test_expand_matches_broadcast_to(shape: tuple, to: tuple, dtype: type) -> None:
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape).astype(dtype)
    got, want = expand(x, to), np.broadcast_to(x, to)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.strides == want.strides
    np.testing.assert_array_equal(got.astype(np.complex128), want.astype(np.complex128))
    assert not got.flags.writeable  # the contract: writing an expanded view raises ValueError
    with pytest.raises(ValueError):
        got[...] = 0
    if x.size:
        assert np.shares_memory(got, x)


def test_expand_sees_later_writes_and_keeps_its_base_chain() -> None:
    root = np.zeros((4, 6), np.float32)
    row = root[2]  # a contiguous view
    e = expand(row, (3, 6))
    root[2, 1] = 5.0
    assert e[0, 1] == 5.0 and e[2, 1] == 5.0
    b = e
    while isinstance(b.base, np.ndarray):
        b = b.base
    assert b is root  # storage_id() walks to the same root as for the row itself
    assert CPUBackend().storage_id(e) == CPUBackend().storage_id(root)


def test_expand_of_strided_or_invalid_input() -> None:
    x = np.arange(12.0).reshape(3, 4)[:, ::2]  # not contiguous: NumPy's own path
    np.testing.assert_array_equal(expand(x[:1], (4, 2)), np.broadcast_to(x[:1], (4, 2)))
    np.testing.assert_array_equal(expand(x.T[:, :1], (2, 5)), np.broadcast_to(x.T[:, :1], (2, 5)))
    with pytest.raises(ValueError):
        expand(np.ones(3), (4, 2))
    with pytest.raises(ValueError):
        expand(np.ones((2, 3)), (3,))


def test_reshape_views_or_refuses() -> None:
    x = np.arange(24.0).reshape(4, 6)
    v = reshape(x, (2, 12))
    assert v is not None and np.shares_memory(v, x) and v.shape == (2, 12)
    assert reshape(x.T, (24,)) is None  # would need a copy


@pytest.mark.parametrize(
    ("make", "want"),
    [
        (lambda r: r, ((6, 1), 0)),
        (lambda r: r[1:], ((6, 1), 6)),
        (lambda r: r[:, 2:], ((6, 1), 2)),
        (lambda r: r.T, ((1, 6), 0)),
        (lambda r: r[::2, 1::3], ((12, 3), 1)),
        (lambda r: np.broadcast_to(r[1], (3, 6)), ((0, 1), 6)),
        (lambda r: r.reshape(-1)[5:], ((1,), 5)),
        (lambda r: r[1:].copy(), ((6, 1), 0)),
    ],
)
def test_layout_strides_and_offset_in_elements(make: object, want: tuple) -> None:
    r = np.arange(24.0).reshape(4, 6)
    assert CPUBackend().layout(make(r)) == want  # type: ignore[operator]
