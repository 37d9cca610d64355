"""dtypes and type promotion: promote_types, result_type, default dtype (vs PyTorch 2.13)."""

from __future__ import annotations

import ember
import pytest

NAMES = [
    "bool", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
]  # fmt: skip

# Recorded with PyTorch 2.13: torch.promote_types(row, column) for every pair.
PROMOTE = {
    "bool": [
        "bool",
        "uint8",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
    "uint8": [
        "uint8",
        "uint8",
        "int16",
        "int16",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
    "int8": [
        "int8",
        "int16",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
    "int16": [
        "int16",
        "int16",
        "int16",
        "int16",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
    "int32": [
        "int32",
        "int32",
        "int32",
        "int32",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
    "int64": [
        "int64",
        "int64",
        "int64",
        "int64",
        "int64",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
    "float16": [
        "float16",
        "float16",
        "float16",
        "float16",
        "float16",
        "float16",
        "float16",
        "float32",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
    "bfloat16": [
        "bfloat16",
        "bfloat16",
        "bfloat16",
        "bfloat16",
        "bfloat16",
        "bfloat16",
        "float32",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
    "float32": [
        "float32",
        "float32",
        "float32",
        "float32",
        "float32",
        "float32",
        "float32",
        "float32",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
    "float64": [
        "float64",
        "float64",
        "float64",
        "float64",
        "float64",
        "float64",
        "float64",
        "float64",
        "float64",
        "float64",
        "complex128",
        "complex128",
    ],
    "complex64": [
        "complex64",
        "complex64",
        "complex64",
        "complex64",
        "complex64",
        "complex64",
        "complex64",
        "complex64",
        "complex64",
        "complex128",
        "complex64",
        "complex128",
    ],
    "complex128": [
        "complex128",
        "complex128",
        "complex128",
        "complex128",
        "complex128",
        "complex128",
        "complex128",
        "complex128",
        "complex128",
        "complex128",
        "complex128",
        "complex128",
    ],
}


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_matches_pytorch_table(a):
    got = [ember.promote_types(getattr(ember, a), getattr(ember, b)).name for b in NAMES]
    assert got == PROMOTE[a]


def _t(values, dtype):
    return ember.tensor(values, dtype=getattr(ember, dtype))


# (left operand, right operand, expected dtype, expected values): recorded with PyTorch 2.13.
RESULT_CASES = [
    (lambda: ember.tensor([1, 2]), 2.5, "float32", [3.5, 4.5]),
    (lambda: _t([1], "int32"), lambda: ember.tensor(1), "int32", [2]),
    (lambda: _t([1], "uint8"), lambda: _t([1], "int8"), "int16", [2]),
    (lambda: ember.tensor([True]), 1, "int64", [2]),
    (lambda: _t([1], "float16"), lambda: _t([1], "bfloat16"), "float32", [2.0]),
    (lambda: ember.tensor([1]), 1j, "complex64", [1 + 1j]),
    (lambda: _t([1.0], "float64"), 1j, "complex128", [1 + 1j]),
    (lambda: _t([1], "int32"), lambda: ember.tensor(1j, dtype=ember.complex128), "complex128", [1 + 1j]),
    (lambda: ember.tensor([1.0]), lambda: ember.tensor(1.0, dtype=ember.float64), "float32", [2.0]),
    (lambda: _t([1], "int8"), lambda: ember.tensor(1.0, dtype=ember.float64), "float64", [2.0]),
    (lambda: _t(1, "int8"), lambda: _t(1, "int32"), "int32", 2),
    (lambda: _t([1.0], "float16"), 2.5, "float16", [3.5]),
    (lambda: _t([1], "uint8"), 1000, "uint8", [233]),
    (lambda: ember.tensor([True]), True, "bool", [True]),
    (lambda: ember.tensor([True]), 2.5, "float32", [3.5]),
    (lambda: _t([1j], "complex64"), lambda: ember.tensor(1.0, dtype=ember.float64), "complex64", [1 + 1j]),
    (lambda: ember.tensor([1.0]), lambda: ember.tensor(1j, dtype=ember.complex128), "complex64", [1 + 1j]),
]


def _make(x):
    return x() if callable(x) else x


@pytest.mark.parametrize("a, b, dtype, values", RESULT_CASES)
def test_add_result_dtype_and_values(a, b, dtype, values):
    x, y = _make(a), _make(b)
    assert ember.result_type(x, y) == getattr(ember, dtype)
    r = x + y
    assert r.dtype == getattr(ember, dtype)
    assert r.tolist() == values


def test_result_type_scalar_and_zero_dim():
    i32 = _t([1], "int32")
    assert ember.result_type(i32, 2.5) is ember.float32
    assert ember.result_type(i32, ember.tensor(5)) is ember.int32
    assert ember.result_type(2.5, i32) is ember.float32


def test_default_dtype_roundtrip():
    assert ember.get_default_dtype() is ember.float32
    ember.set_default_dtype(ember.float64)
    assert ember.get_default_dtype() is ember.float64
    assert ember.tensor([1.0]).dtype is ember.float64
    assert ember.tensor([1j]).dtype is ember.complex128
    assert (ember.tensor([1]) + 2.5).dtype is ember.float64
    assert ember.arange(3.0).dtype is ember.float64
    ember.set_default_dtype(ember.float32)
    assert ember.tensor([1.0]).dtype is ember.float32


def test_set_default_dtype_rejects_integers():
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        ember.set_default_dtype(ember.int32)


def test_dtype_properties_and_aliases():
    assert ember.float is ember.float32 and ember.double is ember.float64
    assert ember.long is ember.int64 and ember.int is ember.int32 and ember.half is ember.float16
    assert ember.float32.is_floating_point and not ember.int8.is_floating_point
    assert ember.complex64.is_complex and not ember.float64.is_complex
    assert ember.int16.itemsize == 2 and ember.complex128.itemsize == 16
    assert repr(ember.float32) == "ember.float32"
