"""Tensor creation: tensor/as_tensor/from_numpy, filled tensors, ranges (vs PyTorch 2.13)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import assert_close, assert_equal


def test_tensor_nested_lists_infer_dtype_and_shape():
    t = ember.tensor([[1, 2, 3], [4, 5, 6]])
    assert t.shape == (2, 3) and t.dtype is ember.int64
    assert t.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert ember.tensor([1, 2.5]).dtype is ember.float32
    assert ember.tensor([True, 2]).dtype is ember.int64
    assert ember.tensor([True, False]).dtype is ember.bool
    assert ember.tensor([1, 2j]).dtype is ember.complex64
    assert ember.tensor(2.5).dim() == 0
    assert ember.tensor([]).shape == (0,) and ember.tensor([]).dtype is ember.float32
    assert ember.tensor([[]]).shape == (1, 0)


def test_tensor_ragged_list_raises_pytorch_message():
    with pytest.raises(ValueError, match=r"^expected sequence of length 2 at dim 1 \(got 1\)$"):
        ember.tensor([[1, 2], [3]])


@pytest.mark.parametrize(
    "dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
)
def test_tensor_from_numpy_array_keeps_dtype_and_copies(dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    t = ember.tensor(a)
    assert t.dtype is getattr(ember, dtype)
    assert_equal(t, a)
    a[0, 0] = 1 if dtype != "bool" else True
    t2 = ember.tensor(a)
    a[0, 0] = 0
    assert t2.tolist()[0][0] == 1  # tensor() copied
    assert t.cpu().numpy()[0, 0] == 0


@pytest.mark.parametrize(
    "values, dtype, bad",
    [
        ([300], "int8", 300),
        (-129, "int8", -129),
        ([256], "uint8", 256),
        ([40000], "int16", 40000),
        ([2**31], "int32", 2**31),
    ],
)
def test_out_of_range_python_ints_raise(values, dtype, bad):
    # PyTorch 2.13: "value cannot be converted to type int8 without overflow"
    msg = f"value cannot be converted to type {dtype} without overflow"
    with pytest.raises(RuntimeError, match=msg):
        ember.tensor(values, dtype=getattr(ember, dtype))


def test_out_of_range_int64_raises_like_pytorch():
    for v in (2**63, -(2**63) - 1, 2**64):
        with pytest.raises(ValueError, match="Overflow when unpacking long long"):
            ember.tensor([v])


def test_negative_python_ints_wrap_into_uint8_like_pytorch():
    # PyTorch 2.13: tensor([-1], dtype=uint8) -> 255, tensor([-200], dtype=uint8) -> 56
    assert ember.tensor([-1, -128, -200], dtype=ember.uint8).tolist() == [255, 128, 56]


def test_conversions_of_tensors_and_numpy_arrays_wrap():
    assert_equal(ember.tensor(300).to(ember.int8), np.int8(44), ember.int8)
    assert ember.tensor(np.array([300]), dtype=ember.int8).tolist() == [44]
    assert ember.tensor([1.5, -2.7], dtype=ember.int32).tolist() == [1, -2]
    assert ember.tensor([1e40], dtype=ember.float32).tolist() == [float("inf")]


@pytest.mark.cpu_only  # as_tensor shares a NumPy array's memory only on the CPU
def test_as_tensor_shares_memory_only_when_nothing_changes():
    a = np.array([1.0, 2.0, 3.0])
    t = ember.as_tensor(a)
    a[0] = 10.0
    assert t.tolist() == [10.0, 2.0, 3.0]
    c = ember.as_tensor(a, dtype=ember.float32)
    a[1] = 20.0
    assert c.tolist() == [10.0, 2.0, 3.0]
    assert ember.as_tensor([1, 2], dtype=ember.float64).tolist() == [1.0, 2.0]
    src = ember.ones(2)
    assert ember.as_tensor(src) is src or ember.as_tensor(src).data_ptr() == src.data_ptr()


def test_from_numpy_is_zero_copy_both_ways():
    a = np.zeros((2, 3), dtype=np.float32)
    t = ember.from_numpy(a)
    assert t.dtype is ember.float32 and t.shape == (2, 3)
    a[1, 2] = 5.0
    assert t[1, 2].item() == 5.0
    t[0, 1] = 7.0
    assert a[0, 1] == 7.0
    t.add_(1)
    assert a.tolist() == [[1.0, 8.0, 1.0], [1.0, 1.0, 6.0]]


def test_from_numpy_rejects_negative_strides_and_unsupported_types():
    with pytest.raises(ValueError, match="negative"):
        ember.from_numpy(np.arange(3)[::-1])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.object_"):
        ember.from_numpy(np.array([None, 1]))


@pytest.mark.parametrize("fn, value", [(ember.zeros, 0.0), (ember.ones, 1.0), (ember.empty, None)])
def test_filled_factories_accept_varargs_tuple_list_and_size(fn, value):
    for args in ((2, 3), ((2, 3),), ([2, 3],), (ember.Size([2, 3]),)):
        t = fn(*args)
        assert t.shape == (2, 3) and t.dtype is ember.float32
        if value is not None:
            assert t.tolist() == [[value] * 3] * 2
    assert fn(2, dtype=ember.int16).dtype is ember.int16
    assert fn(()).shape == () and fn(0).shape == (0,)


def test_negative_size_raises():
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        ember.zeros(-1)


def test_full_infers_dtype_from_fill_value():
    assert ember.full((2,), 7).dtype is ember.int64
    assert ember.full((2,), 7.0).dtype is ember.float32
    assert ember.full((2,), True).dtype is ember.bool
    assert ember.full((2,), 1j).dtype is ember.complex64
    assert ember.full((2, 1), 3.5, dtype=ember.float64).tolist() == [[3.5], [3.5]]


def test_like_factories_follow_input():
    x = ember.tensor([[1, 2]], dtype=ember.int32)
    for fn, v in ((ember.zeros_like, 0), (ember.ones_like, 1), (ember.empty_like, None)):
        t = fn(x)
        assert t.shape == (1, 2) and t.dtype is ember.int32
        if v is not None:
            assert t.tolist() == [[v, v]]
    assert ember.full_like(ember.tensor([1, 2]), 2.7).tolist() == [2, 2]
    assert_equal(ember.ones_like(ember.tensor([1, 2]), dtype=ember.float64), [1.0, 1.0], ember.float64)


def test_arange_values_and_dtypes():
    assert_equal(ember.arange(5), np.arange(5), ember.int64)
    assert_equal(ember.arange(1, 4, 0.5), np.arange(1, 4, 0.5, dtype=np.float32), ember.float32)
    assert ember.arange(0, 1, 0.1).shape == (10,)
    assert ember.arange(5, 1, -2).tolist() == [5, 3]
    assert ember.arange(1.0, 5).dtype is ember.float32
    assert_equal(ember.arange(5, dtype=ember.float64), np.arange(5.0), ember.float64)
    assert ember.arange(3, 3).shape == (0,)


@pytest.mark.parametrize(
    "args, msg",
    [
        ((5, 1), "upper bound and lower bound inconsistent with step sign"),
        ((1, 5, -1), "upper bound and lower bound inconsistent with step sign"),
        ((0, 5, 0), "step must be nonzero"),
        ((0, float("inf")), "unsupported range: 0 -> inf"),
    ],
)
def test_arange_errors(args, msg):
    with pytest.raises(RuntimeError, match=msg):
        ember.arange(*args)


def test_linspace_and_logspace():
    assert_equal(ember.linspace(0, 1, 5), np.array([0, 0.25, 0.5, 0.75, 1], np.float32), ember.float32)
    assert ember.linspace(-1, 1, 1).tolist() == [-1.0]
    assert ember.linspace(0, 1, 0).shape == (0,)
    assert_close(ember.linspace(-3, 7, 11, dtype=ember.float64), np.linspace(-3, 7, 11), rtol=0, atol=1e-15)
    assert ember.linspace(0, 10, 5, dtype=ember.int64).tolist() == [0, 2, 5, 7, 10]
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        ember.linspace(0, 1, -1)
    assert ember.logspace(0, 2, 3).tolist() == [1.0, 10.0, 100.0]
    assert ember.logspace(0, 3, 4, base=2).tolist() == [1.0, 2.0, 4.0, 8.0]


# PyTorch 2.13's values to the last bit (its formula: the step in the dtype, start + step*i for
# the first half, end - step*(steps-1-i) for the rest, fused multiply-adds).
LINSPACE = [
    ((-34.0, -36.1232582, 8), "float32", [-34.0, -34.303321838378906, -34.60664367675781, -34.90996551513672, -35.21329116821289, -35.5166130065918, -35.8199348449707, -36.12325668334961]),
    ((-34.0, -36.1232582, 8), "float64", [-34.0, -34.3033226, -34.6066452, -34.909967800000004, -35.2132904, -35.516613, -35.8199356, -36.1232582]),
    ((-19.0696418, -34.0, 5), "float32", [-19.06964111328125, -22.802230834960938, -26.534820556640625, -30.267410278320312, -34.0]),
    ((-19.0696418, -34.0, 5), "float64", [-19.0696418, -22.80223135, -26.5348209, -30.26741045, -34.0]),
    ((6.4, 13.0399293, 6), "float32", [6.400000095367432, 7.727985858917236, 9.0559720993042, 10.383957862854004, 11.711943626403809, 13.039929389953613]),
    ((6.4, 13.0399293, 6), "float64", [6.4, 7.72798586, 9.05597172, 10.38395758, 11.71194344, 13.0399293]),
    ((0, 1, 7), "float32", [0.0, 0.1666666716337204, 0.3333333432674408, 0.5, 0.6666666269302368, 0.8333333134651184, 1.0]),
    ((-29.1, 46.0, 10), "int64", [-29, -20, -12, -3, 4, 12, 21, 29, 37, 46]),
]  # fmt: skip


@pytest.mark.parametrize("args, dtype, expected", LINSPACE)
def test_linspace_matches_pytorch_bits(args, dtype, expected):
    assert ember.linspace(*args, dtype=getattr(ember, dtype)).tolist() == expected


def test_arange_float64_matches_pytorch_bits():
    assert ember.arange(-3, 7, 0.7, dtype=ember.float64).tolist() == [
        -3.0, -2.3, -1.6, -0.9000000000000001, -0.20000000000000018, 0.4999999999999998, 1.1999999999999997,
        1.8999999999999997, 2.5999999999999996, 3.3, 3.9999999999999996, 4.699999999999999, 5.3999999999999995,
        6.1, 6.799999999999999,
    ]  # fmt: skip


def test_eye():
    assert_equal(ember.eye(3), np.eye(3, dtype=np.float32), ember.float32)
    assert ember.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert_equal(ember.eye(2, dtype=ember.int64), np.eye(2, dtype=np.int64), ember.int64)


def test_requires_grad_on_integer_tensors_raises_pytorch_text():
    msg = "^Only Tensors of floating point and complex dtype can require gradients$"
    with pytest.raises(RuntimeError, match=msg):
        ember.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match=msg):
        ember.zeros(2, dtype=ember.int64, requires_grad=True)
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients$"):
        ember.tensor([1, 2]).requires_grad_()
    assert ember.tensor([1.0], requires_grad=True).requires_grad
    assert ember.tensor([1j], requires_grad=True).requires_grad
    assert ember.zeros(2, requires_grad=True).is_leaf


def test_data_of_a_tensor_requiring_grad_cannot_become_integer():
    # The seed's 1.12 behaviour (integer data under requires_grad) is refused since 1.13.
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^data set to a tensor that requires gradients must be floating"):
        a.data = ember.tensor([1, 1])
    assert a.dtype is ember.float32 and a.tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="^Variable data has to be a tensor, but got list$"):
        a.data = [1.0]
    a.data = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)
    assert a.dtype is ember.float64 and a.requires_grad and a.shape == (3,)
    b = ember.tensor([1, 2])
    b.data = ember.tensor([1.5])
    assert b.dtype is ember.float32 and b.tolist() == [1.5]
