"""Host conversion and metadata: item/tolist/numpy/__array__/DLPack, to(), casts, bool().

Expected values and messages were recorded with PyTorch 2.13.
"""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import assert_equal


def test_item_and_python_scalars():
    assert ember.tensor(1).item() == 1 and isinstance(ember.tensor(1).item(), int)
    assert ember.tensor(1.5).item() == 1.5 and ember.tensor(True).item() is True
    assert ember.tensor(1j).item() == 1j and ember.tensor([[7]], dtype=ember.int8).item() == 7
    assert float(ember.tensor([2.5])) == 2.5 and int(ember.tensor(2.7)) == 2
    assert complex(ember.tensor(1 + 2j)) == 1 + 2j
    assert [10, 20, 30][ember.tensor(1)] == 20


def test_scalar_conversion_errors():
    with pytest.raises(RuntimeError, match="^a Tensor with 2 elements cannot be converted to Scalar$"):
        ember.tensor([1, 2]).item()
    with pytest.raises(RuntimeError, match="^a Tensor with 0 elements cannot be converted to Scalar$"):
        ember.tensor([]).item()
    with pytest.raises(ValueError, match="^only one element tensors can be converted to Python scalars$"):
        int(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="^value cannot be converted to type double without overflow$"):
        float(ember.tensor(1 + 2j))
    with pytest.raises(
        TypeError, match="^only integer tensors of a single element can be converted to an index$"
    ):
        [10, 20, 30][ember.tensor(1.0)]
    with pytest.raises(TypeError, match=r"^len\(\) of a 0-d tensor$"):
        len(ember.tensor(1))
    with pytest.raises(TypeError, match="^iteration over a 0-d tensor$"):
        iter(ember.tensor(1))


def test_bool_of_tensors():
    assert bool(ember.tensor([0.0])) is False and bool(ember.tensor(3)) is True
    with pytest.raises(RuntimeError, match="^Boolean value of Tensor with more than one value is ambiguous$"):
        bool(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="^Boolean value of Tensor with no values is ambiguous$"):
        bool(ember.tensor([]))


def test_tolist_and_numpy():
    assert ember.tensor([[1, 2]], dtype=ember.int8).tolist() == [[1, 2]]
    assert ember.tensor(2.5).tolist() == 2.5
    assert ember.tensor([1.5], dtype=ember.bfloat16).tolist() == [1.5]
    t = ember.tensor([1.0, 2.0])
    a = t.numpy()
    assert a.dtype == np.float32
    a[0] = 7.0  # numpy() shares memory on the CPU
    assert t[0].item() == 7.0
    with pytest.raises(
        RuntimeError,
        match=r"^Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach\(\).numpy\(\) instead.$",
    ):
        ember.tensor([1.0], requires_grad=True).numpy()


def test_array_protocol_and_dlpack():
    t = ember.tensor([1.0, 2.0])
    assert np.asarray(t).dtype == np.float32
    assert np.asarray(t, dtype=np.float64).tolist() == [1.0, 2.0]
    assert np.from_dlpack(ember.tensor([1, 2])).tolist() == [1, 2]
    a = np.arange(3)
    e = ember.from_dlpack(a)
    assert e.dtype is ember.int64 and e.tolist() == [0, 1, 2]
    a[0] = 5
    assert e[0].item() == 5  # DLPack shares memory
    back = np.from_dlpack(e)
    back[1] = 9
    assert e.tolist() == [5, 9, 2]


def test_to_dtype_casts_like_pytorch():
    assert_equal(ember.tensor([1.7, -1.7]).to(ember.int32), np.array([1, -1], np.int32), ember.int32)
    assert ember.tensor([0.0, 0.1, -2]).to(ember.bool).tolist() == [False, True, True]
    assert_equal(ember.tensor([-1, 256]).to(ember.uint8), np.array([255, 0], np.uint8), ember.uint8)
    assert_equal(ember.tensor([1 + 2j]).to(ember.float32), np.array([1.0], np.float32))
    assert_equal(ember.tensor([1.9]).long(), [1], ember.int64)
    assert ember.tensor([1.9]).half().dtype is ember.float16
    assert_equal(ember.tensor([1]).double(), [1.0], ember.float64)
    assert ember.tensor([2, 0]).bool().tolist() == [True, False]
    assert_equal(ember.tensor([2.5]).int(), np.array([2], np.int32), ember.int32)
    assert ember.tensor([1]).float().dtype is ember.float32
    assert ember.tensor([1]).short().dtype is ember.int16 and ember.tensor([1]).byte().dtype is ember.uint8
    assert (
        ember.tensor([1]).char().dtype is ember.int8
        and ember.tensor([1.0]).bfloat16().dtype is ember.bfloat16
    )


def test_to_returns_self_when_nothing_changes():
    t = ember.ones(1)
    assert t.to(ember.float32) is t and t.to("cpu") is t and t.cpu() is t
    assert t.to(ember.float32, copy=True) is not t
    assert t.to(ember.zeros(1, dtype=ember.float64)).dtype is ember.float64
    assert t.type() == "ember.FloatTensor" and t.type(ember.int64).dtype is ember.int64
    u = t.to("cpu:1")
    assert u.device == ember.device("cpu", 1) and u.cpu().device == ember.device("cpu")
    v = t.to("cpu:1", ember.float64)
    assert v.dtype is ember.float64 and str(v.device) == "cpu:1"


def test_metadata():
    z = ember.zeros(2, 3)
    assert z.size() == (2, 3) and z.size(1) == 3 and z.size(-1) == 3 and type(z.shape).__name__ == "Size"
    with pytest.raises(
        IndexError, match=r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$"
    ):
        z.size(2)
    assert z.numel() == 6 and ember.numel(ember.zeros(0)) == 0 and ember.tensor(1).dim() == 0 and z.ndim == 2
    assert z.shape == (2, 3) and z.shape.numel() == 6
    assert z.is_floating_point() and not ember.zeros(1, dtype=ember.int8).is_floating_point()
    c = ember.zeros(1, dtype=ember.complex64)
    assert not c.is_floating_point() and c.is_complex() and ember.is_complex(c) and ember.is_tensor(c)
    assert ember.zeros(1, dtype=ember.float16).element_size() == 2 and c.element_size() == 8


def test_new_factories_follow_self():
    f64 = ember.zeros(1, dtype=ember.float64)
    assert_equal(f64.new_tensor([1, 2]), [1.0, 2.0], ember.float64)
    assert_equal(f64.new_zeros(2), [0.0, 0.0], ember.float64)
    i32 = ember.zeros(1, dtype=ember.int32)
    assert_equal(i32.new_ones((2,)), np.array([1, 1], np.int32), ember.int32)
    assert_equal(i32.new_full((2,), 3), np.array([3, 3], np.int32), ember.int32)
    assert i32.new_zeros(2, 3, dtype=ember.float32).shape == (2, 3)
