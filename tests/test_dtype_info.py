"""dtype limits, casting queries and legacy tensor types, with exact expected values (the same
behaviours are compared against PyTorch in tests_torch/test_dtype_info_torch.py)."""

from __future__ import annotations

import ember
import numpy as np
import pytest


def test_finfo_float32_fields_and_repr() -> None:
    f = ember.finfo(ember.float32)
    assert (f.bits, f.dtype, f.eps, f.resolution) == (32, "float32", 2.0**-23, 1e-06)
    assert f.max == -f.min == float(np.finfo(np.float32).max)
    assert f.tiny == f.smallest_normal == 2.0**-126
    assert repr(f) == (
        "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
        "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)"
    )


def test_finfo_half_types_and_complex() -> None:
    h, b = ember.finfo(ember.float16), ember.finfo(ember.bfloat16)
    assert (h.bits, h.max, h.eps, h.tiny, h.resolution) == (16, 65504.0, 2.0**-10, 2.0**-14, 0.001)
    assert (b.bits, b.eps, b.tiny, b.resolution) == (16, 2.0**-7, 2.0**-126, 0.01)
    assert b.max == 3.3895313892515355e38
    assert ember.finfo(ember.complex128) == ember.finfo(ember.float64)
    assert ember.finfo(ember.complex64).dtype == "float32"


def test_finfo_default_follows_default_dtype() -> None:
    assert ember.finfo() == ember.finfo(ember.float32)
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.finfo().dtype == "float64" and ember.finfo().eps == 2.0**-52
    finally:
        ember.set_default_dtype(ember.float32)


def test_iinfo_values_and_repr() -> None:
    assert repr(ember.iinfo(ember.uint8)) == "iinfo(min=0, max=255, dtype=uint8)"
    assert repr(ember.iinfo(ember.int32)) == "iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32)"
    i = ember.iinfo(ember.int64)
    assert (i.bits, i.min, i.max, i.dtype) == (64, -(2**63), 2**63 - 1, "int64")


@pytest.mark.parametrize(
    ("fn", "arg", "message"),
    [
        ("finfo", ember.int32, "ember.finfo() requires a floating point input type. Use ember.iinfo"),
        ("iinfo", ember.bool, "ember.bool is not supported by ember.iinfo"),
        ("iinfo", ember.float32, "ember.iinfo() requires an integer input type"),
        ("finfo", "float32", "finfo(): argument 'type' (position 1) must be ember.dtype, not str"),
        ("iinfo", None, "iinfo(): argument 'type' (position 1) must be ember.dtype, not NoneType"),
    ],
)
def test_info_bad_input(fn: str, arg: object, message: str) -> None:
    with pytest.raises(TypeError) as exc:
        getattr(ember, fn)(arg)
    assert str(exc.value).startswith(message)


def test_can_cast_rules() -> None:
    assert ember.can_cast(ember.int64, ember.float16)
    assert ember.can_cast(ember.bool, ember.uint8)
    assert ember.can_cast(ember.float64, ember.complex64)
    assert ember.can_cast(ember.int8, ember.uint8)
    assert not ember.can_cast(ember.float32, ember.int64)
    assert not ember.can_cast(ember.complex64, ember.float64)
    assert not ember.can_cast(ember.uint8, ember.bool)
    with pytest.raises(TypeError, match="must be ember.dtype, not int"):
        ember.can_cast(1, ember.int64)


def test_result_type_of_python_numbers() -> None:
    assert ember.result_type(1, 2.0) is ember.float32
    assert ember.result_type(True, 1) is ember.int64
    assert ember.result_type(True, False) is ember.bool
    assert ember.result_type(1, 1j) is ember.complex64
    assert ember.result_type(ember.tensor([1], dtype=ember.uint8), 300) is ember.uint8
    with pytest.raises(TypeError, match="expected a Python number, got str"):
        ember.result_type("a", 1)


def test_legacy_constructors() -> None:
    x = ember.FloatTensor([1, 2])
    assert x.dtype is ember.float32 and x.tolist() == [1.0, 2.0]
    assert ember.LongTensor(2, 3).shape == (2, 3) and ember.LongTensor(2, 3).dtype is ember.int64
    assert ember.Tensor().shape == (0,) and ember.Tensor(2, 3).dtype is ember.float32
    assert ember.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert ember.ByteTensor([1, 255]).dtype is ember.uint8
    assert ember.BoolTensor([1, 0]).tolist() == [True, False]
    assert ember.HalfTensor(ember.Size([])).shape == ()
    assert repr(ember.FloatTensor) == "<class 'ember.FloatTensor'>"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((2.5,), "new(): data must be a sequence (got float)"),
        (("ab",), "new(): invalid data type 'str'"),
        (([1], 2), "new() received an invalid combination of arguments - got (list, int)"),
        ((ember.tensor([1, 2]),), "expected ember.float32 (got ember.int64)"),
    ],
)
def test_legacy_constructor_bad_input(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(TypeError) as exc:
        ember.FloatTensor(*args)
    assert str(exc.value) == message


def test_legacy_isinstance() -> None:
    x = ember.zeros(2)
    assert isinstance(x, ember.FloatTensor) and isinstance(x, ember.Tensor)
    assert not isinstance(x, ember.DoubleTensor) and not isinstance([1.0], ember.FloatTensor)
    assert isinstance(ember.zeros(2, dtype=ember.bool), ember.BoolTensor)


def test_tensor_type_conversions() -> None:
    x = ember.tensor([1.5, 2.0])
    assert x.type() == "ember.FloatTensor"
    assert x.type(ember.LongTensor).tolist() == [1, 2]
    assert x.type("torch.LongTensor").dtype is ember.int64
    assert x.type("ember.DoubleTensor").type() == "ember.DoubleTensor"
    assert x.type(ember.int64).dtype is ember.int64
    with pytest.raises(ValueError, match="^invalid type: 'foo'$"):
        x.type("foo")
    with pytest.raises(TypeError, match="^dtype must be a type, str, or dtype object$"):
        x.type(1)
