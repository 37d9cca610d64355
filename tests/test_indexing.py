"""Indexing: basic and advanced getitem/setitem against NumPy, PyTorch's errors.

Every case also runs on ``cpu_prims`` (see conftest.py), where ``index``/``index_put``/
``nonzero`` go through the frontend's decompositions instead of NumPy's fancy indexing.
"""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import assert_equal

A = np.arange(125).reshape(5, 5, 5)


@pytest.fixture(params=["cpu", "prims"])
def device(request, cpu_prims):
    return "cpu" if request.param == "cpu" else cpu_prims


def _t(a, device):
    return ember.tensor(a, device=device)


def test_seed_examples(device):
    a = ember.arange(125, device=device).reshape(5, 5, 5)
    assert a[[1, 2], [3, 2], [1, 0]].tolist() == [41, 60]
    assert a[[2, 3, 2], [0], [1]].tolist() == [51, 76, 51]
    assert a[[[1, 0], [0, 1]], [0], [1]].shape == (2, 2)


KEYS = [
    (1,),
    (-1,),
    (1, -2),
    (slice(1, 4),),
    (slice(None, None, 2),),
    (slice(-4, -1, 2), slice(None), 3),
    (slice(3, 100),),
    (slice(-100, 2),),
    (None,),
    (Ellipsis, 2),
    (1, Ellipsis, None, 0),
    (None, Ellipsis, None),
    ([0, 2, 4],),
    ([[0, 1], [3, 4]],),
    ([0, 0, 3],),
    ([-1, 0],),
    (slice(None), [1, 3]),
    ([0, 1], slice(None), [1, 2]),  # non-adjacent: advanced dims go first
    ([0, 1], None, [1, 2]),
    (slice(None), [0, 1], [1, 2]),  # adjacent: stay in place
    (slice(1, 3), [0, 1], [1, 2]),
    ([0, 1], 0),
    (slice(None), 0, [1, 2]),
    ([[0], [1]], slice(None), [1, 2, 3]),  # broadcasting index arrays
    ([1, 2], slice(None), 0),
    (Ellipsis, [0, 4]),
    ([],),
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_getitem_matches_numpy(key, device):
    t = _t(A, device)
    np_key = tuple(np.array(k, dtype=np.int64) if isinstance(k, list) else k for k in key)
    exp = A[np_key]
    got = t[key if len(key) > 1 else key[0]]
    assert_equal(got.to("cpu"), exp, ember.int64)


def test_int_with_non_adjacent_advanced_index_follows_pytorch_not_numpy(device):
    # PyTorch applies the int as basic indexing first, so [5, 2] (NumPy gives (2, 5)).
    t = _t(A, device)
    assert t[0, :, [1, 2]].shape == (5, 2)
    assert_equal(t[0, :, [1, 2]].to("cpu"), A[0][:, [1, 2]])


def test_setitem_in_place_adjacent_advanced_dims(device):
    t = ember.zeros(3, 2, 2, dtype=ember.int64, device=device)
    t[1:3, [0, 1], [1, 0]] = ember.tensor([[1, 2], [3, 4]], device=device)
    exp = np.zeros((3, 2, 2), np.int64)
    exp[1:3, [0, 1], [1, 0]] = [[1, 2], [3, 4]]
    assert_equal(t.to("cpu"), exp)


def test_index_with_tensors(device):
    t = _t(A, device)
    i = ember.tensor([[1, 0], [0, 4]], device=device)
    assert_equal(t[i].to("cpu"), A[np.array([[1, 0], [0, 4]])])
    assert_equal(t[i, 2, i].to("cpu"), A[np.array([[1, 0], [0, 4]]), 2, np.array([[1, 0], [0, 4]])])
    assert_equal(t[ember.tensor(1, device=device)].to("cpu"), A[1])
    i32 = ember.tensor([2, 0], dtype=ember.int32, device=device)
    assert t[0, 0][i32].tolist() == [2, 0]


def test_bool_masks(device):
    t = _t(A, device)
    m = t[:, :, 0] > 60
    assert_equal(t[m].to("cpu"), A[A[:, :, 0] > 60])
    row = ember.tensor([True, False, True, False, True], device=device)
    assert_equal(t[row, 1:3].to("cpu"), A[np.array([True, False, True, False, True]), 1:3])
    assert_equal(t[..., row].to("cpu"), A[..., np.array([True, False, True, False, True])])
    assert t[True].shape == (1, 5, 5, 5) and t[False].shape == (0, 5, 5, 5)
    u8 = ember.tensor([1, 0, 1], dtype=ember.uint8, device=device)
    assert ember.arange(3, device=device)[u8].tolist() == [0, 2]


def test_setitem_basic_with_broadcasting(device):
    t = ember.zeros(3, 4, dtype=ember.int64, device=device)
    t[1] = 5
    t[:, 1::2] = ember.tensor([7, 8], device=device)
    t[2, :2] = ember.tensor([[1, 2]], device=device)
    exp = np.zeros((3, 4), np.int64)
    exp[1] = 5
    exp[:, 1::2] = [7, 8]
    exp[2, :2] = [1, 2]
    assert_equal(t.to("cpu"), exp)


def test_setitem_advanced_and_masks(device):
    t = ember.zeros(4, 3, device=device)
    t[[0, 2]] = ember.tensor([1.0, 2.0, 3.0], device=device)
    t[[1, 3], [0, 2]] = -1.0
    t[t > 2] = 9.0
    t[:, [1]] = ember.tensor([[5.0], [6.0], [7.0], [8.0]], device=device)
    exp = np.zeros((4, 3), np.float32)
    exp[[0, 2]] = [1.0, 2.0, 3.0]
    exp[[1, 3], [0, 2]] = -1.0
    exp[exp > 2] = 9.0
    exp[:, [1]] = [[5.0], [6.0], [7.0], [8.0]]
    assert_equal(t.to("cpu"), exp)


def test_setitem_duplicates_and_index_put_accumulate(device):
    t = ember.zeros(4, device=device)
    t[ember.tensor([0, 0, 2], device=device)] = ember.tensor([1.0, 2.0, 3.0], device=device)
    assert t.tolist()[2] == 3.0 and t.tolist()[0] in (1.0, 2.0)
    acc = ember.zeros(4, device=device).index_put_(
        (ember.tensor([0, 0, 2], device=device),),
        ember.tensor([1.0, 2.0, 3.0], device=device),
        accumulate=True,
    )
    assert acc.tolist() == [3.0, 0.0, 3.0, 0.0]


def test_setitem_writes_through_views(device):
    base = ember.zeros(3, 4, device=device)
    view = base[1:]
    view[[0, 1], [1, 2]] = 4.0
    assert base.to("cpu").numpy()[1, 1] == 4.0 and base.to("cpu").numpy()[2, 2] == 4.0
    v0 = base._version
    view[0] = 1.0
    assert base._version == v0 + 1


@pytest.mark.parametrize(
    "key, exc, msg",
    [
        (5, IndexError, "index 5 is out of bounds for dimension 0 with size 5"),
        (-6, IndexError, "index -6 is out of bounds for dimension 0 with size 5"),
        ((0, 7), IndexError, "index 7 is out of bounds for dimension 1 with size 5"),
        ([0, 5], IndexError, "index 5 is out of bounds for dimension 0 with size 5"),
        ([0, -6], IndexError, "index -6 is out of bounds for dimension 0 with size 5"),
        ((0, 0, 0, 0), IndexError, "too many indices for tensor of dimension 3"),
        (slice(None, None, -1), ValueError, "step must be greater than zero"),
        (slice(None, None, 0), ValueError, "slice step cannot be zero"),
        (
            1.5,
            IndexError,
            (
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                "indices (got float)"
            ),
        ),
    ],
)
def test_getitem_errors(key, exc, msg, device):
    with pytest.raises(exc) as e:
        _t(A, device)[key]
    assert str(e.value) == msg


def test_other_index_errors(device):
    t = _t(A, device)
    with pytest.raises(IndexError) as e:
        t[ember.tensor([True, False], device=device)]
    assert str(e.value) == (
        "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [5, 5, 5] at index 0"
    )
    with pytest.raises(IndexError, match="^tensors used as indices must be long, int, byte or bool tensors$"):
        t[ember.tensor([1.0], device=device)]
    with pytest.raises(
        IndexError, match=r"^invalid index of a 0-dim tensor. Use `tensor.item\(\)` in Python"
    ):
        ember.tensor(5, device=device)[0]
    assert ember.tensor(5, device=device)[...].item() == 5
    assert ember.tensor(5, device=device)[None].shape == (1,)
    with pytest.raises(IndexError, match="^index 4 is out of bounds for dimension 0 with size 4$"):
        ember.zeros(4, device=device)[4] = 1.0
    with pytest.raises(IndexError, match="^index 4 is out of bounds for dimension 0 with size 4$"):
        ember.zeros(4, device=device)[[4]] = 1.0


def test_setitem_values_of_other_kinds(device):
    t = ember.zeros(3, device=device)
    t[0] = np.float32(2.5)
    t[1] = np.int64(3)
    t[2] = ember.tensor(7)
    assert t.tolist() == [2.5, 3.0, 7.0]
    with pytest.raises(TypeError, match="^can't assign a list to a ember.FloatTensor$"):
        t[0] = [1.0, 2.0]


def test_setitem_shape_mismatch_messages(device):
    with pytest.raises(RuntimeError) as e:
        ember.zeros(4, device=device)[0:2] = ember.ones(3, device=device)
    assert str(e.value) == (
        "The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 0.  "
        "Target sizes: [2].  Tensor sizes: [3]"
    )
    with pytest.raises(RuntimeError) as e:
        ember.zeros(4, device=device)[ember.tensor([0, 1], device=device)] = ember.ones(3, device=device)
    assert (
        str(e.value)
        == "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2]"
    )


def test_gather_scatter_index_select_nonzero(device):
    x = _t(np.arange(12.0).reshape(3, 4), device)
    idx = ember.tensor([[0, 2], [3, 1], [1, 1]], device=device)
    assert_equal(
        x.gather(1, idx).to("cpu"),
        np.take_along_axis(np.arange(12.0).reshape(3, 4), idx.to("cpu").numpy(), 1),
    )
    s = ember.zeros(3, 4, device=device).scatter(1, idx, ember.ones(3, 2, device=device))
    assert s.sum(1).tolist() == [2.0, 2.0, 1.0]
    sa = ember.zeros(3, 4, device=device).scatter_add(1, idx, ember.ones(3, 2, device=device))
    assert sa.tolist()[2] == [0.0, 2.0, 0.0, 0.0]
    assert x.index_select(1, ember.tensor([0, 3], device=device)).tolist() == [
        [0.0, 3.0],
        [4.0, 7.0],
        [8.0, 11.0],
    ]
    nz = ember.tensor([[0, 1], [2, 0]], device=device)
    assert nz.nonzero().tolist() == [[0, 1], [1, 0]]
    assert [t.tolist() for t in nz.nonzero(as_tuple=True)] == [[0, 1], [1, 0]]
    m = ember.arange(4.0, device=device).masked_fill(
        ember.tensor([True, False, True, False], device=device), -1
    )
    assert m.tolist() == [-1.0, 1.0, -1.0, 3.0]
    with pytest.raises(RuntimeError, match="^index 3 is out of bounds for dimension 0 with size 3$"):
        ember.arange(3, device=device).gather(0, ember.tensor([3], device=device))
