"""dtype queries and legacy tensor types against PyTorch's: ``finfo``/``iinfo`` fields and reprs,
``can_cast``/``promote_types`` for all 12x12 dtype pairs, ``result_type`` with Python numbers,
and the legacy constructors (``FloatTensor([1, 2])``, ``LongTensor(2, 3)``, ``Tensor()``),
``isinstance`` checks and ``x.type(...)`` conversions that old PyTorch code relies on."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest
import torch

_NAMES = [d.name for d in ember.backends.ALL_DTYPES]  # the 12 dtypes, in promotion order
_FLOATS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
_INTS = ["uint8", "int8", "int16", "int32", "int64"]
_LEGACY = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
]


def _name(d: Any) -> str:
    return str(d).split(".")[-1]


def _raises(fn: Any, *args: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as exc:
        fn(*args)
    return exc.type, str(exc.value).replace("torch.", "ember.")


@pytest.mark.parametrize("name", _FLOATS)
def test_finfo_fields_and_repr(name: str) -> None:
    t, e = torch.finfo(getattr(torch, name)), ember.finfo(getattr(ember, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(e, field) == getattr(t, field), field
        assert type(getattr(e, field)) is type(getattr(t, field)), field
    assert repr(e) == repr(t)


@pytest.mark.parametrize("name", _INTS)
def test_iinfo_fields_and_repr(name: str) -> None:
    t, e = torch.iinfo(getattr(torch, name)), ember.iinfo(getattr(ember, name))
    assert (e.bits, e.min, e.max, e.dtype) == (t.bits, t.min, t.max, t.dtype)
    assert type(e.max) is type(t.max)
    assert repr(e) == repr(t)


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_finfo_without_argument_is_the_default_dtype(default: str) -> None:
    torch.set_default_dtype(getattr(torch, default))
    ember.set_default_dtype(getattr(ember, default))
    try:
        assert repr(ember.finfo()) == repr(torch.finfo())
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)


@pytest.mark.parametrize(
    ("fn", "arg"),
    [
        ("finfo", "int32"),
        ("finfo", "bool"),
        ("iinfo", "bool"),
        ("finfo", 1),
        ("iinfo", 1),
        ("finfo", "float32"),
        ("iinfo", None),
    ],
)
def test_info_bad_input_raises_torch_error(fn: str, arg: Any) -> None:
    """A dtype named by string is the dtype; a plain int, str or None is a bad argument."""
    t_arg = getattr(torch, arg) if arg in ("int32", "bool") else arg
    e_arg = getattr(ember, arg) if arg in ("int32", "bool") else arg
    assert _raises(getattr(ember, fn), e_arg) == _raises(getattr(torch, fn), t_arg)


@pytest.mark.parametrize("a", _NAMES)
def test_can_cast_and_promote_types_all_pairs(a: str) -> None:
    for b in _NAMES:
        ta, tb, ea, eb = getattr(torch, a), getattr(torch, b), getattr(ember, a), getattr(ember, b)
        assert ember.can_cast(ea, eb) == torch.can_cast(ta, tb), (a, b)
        assert _name(ember.promote_types(ea, eb)) == _name(torch.promote_types(ta, tb)), (a, b)


@pytest.mark.parametrize(
    ("x", "y"), [(1, 2.0), (1, 2), (True, 1), (True, False), (1, 1j), (2.5, 1j), (False, 2.5), (3, True)]
)
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_result_type_of_python_numbers(x: Any, y: Any, default: str) -> None:
    torch.set_default_dtype(getattr(torch, default))
    ember.set_default_dtype(getattr(ember, default))
    try:
        assert _name(ember.result_type(x, y)) == _name(torch.result_type(x, y))
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)


@pytest.mark.parametrize(("a", "b"), [("int32", 2.5), ("uint8", 300), ("float16", [1.0]), ("bool", 1)])
def test_result_type_with_tensors(a: str, b: Any) -> None:
    t = torch.zeros(2, dtype=getattr(torch, a))
    e = ember.zeros(2, dtype=getattr(ember, a))
    if isinstance(b, list):
        tb, eb = torch.tensor(b, dtype=torch.float64), ember.tensor(b, dtype=ember.float64)
        assert _name(ember.result_type(e, eb)) == _name(torch.result_type(t, tb))
    else:
        assert _name(ember.result_type(e, b)) == _name(torch.result_type(t, b))
        assert _name(ember.result_type(b, e)) == _name(torch.result_type(b, t))


@pytest.mark.parametrize("name", _LEGACY)
@pytest.mark.parametrize("data", [[1, 0, 2], [[1.0, 2.5], [0.0, 3.0]], [], [True, False]])
def test_legacy_constructor_from_data(name: str, data: Any) -> None:
    t, e = getattr(torch, name)(data), getattr(ember, name)(data)
    assert _name(e.dtype) == _name(t.dtype) and tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


@pytest.mark.parametrize("name", [*_LEGACY, "Tensor"])
@pytest.mark.parametrize("size", [(2, 3), (4,), (), (0, 2)])
def test_legacy_constructor_of_size(name: str, size: tuple[int, ...]) -> None:
    """Uninitialised storage in PyTorch: only the shape and dtype are compared."""
    t, e = getattr(torch, name)(*size), getattr(ember, name)(*size)
    assert (_name(e.dtype), tuple(e.shape)) == (_name(t.dtype), tuple(t.shape))
    t, e = getattr(torch, name)(torch.Size(size)), getattr(ember, name)(ember.Size(size))
    assert (_name(e.dtype), tuple(e.shape)) == (_name(t.dtype), tuple(t.shape))


def test_tensor_constructor_is_float_of_the_default_dtype() -> None:
    for data in ([1, 2], [[1.5], [2.0]], (3, 4)):
        t, e = torch.Tensor(data), ember.Tensor(data)
        assert _name(e.dtype) == _name(t.dtype) == "float32"
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    torch.set_default_dtype(torch.float64)
    ember.set_default_dtype(ember.float64)
    try:
        assert _name(ember.Tensor([1]).dtype) == _name(torch.Tensor([1]).dtype) == "float64"
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)


def test_legacy_constructor_of_a_tensor_aliases_it() -> None:
    t, e = torch.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0])
    torch.FloatTensor(t).add_(1)
    ember.FloatTensor(e).add_(1)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert (
        _raises(ember.FloatTensor, ember.tensor([1, 2]))[0]
        is _raises(torch.FloatTensor, torch.tensor([1, 2]))[0]
    )


@pytest.mark.parametrize("bad", [["a"], [2.5], ["ab", 2], [[1], 2]])
def test_legacy_constructor_bad_input_raises_torch_type(bad: list[Any]) -> None:
    t_type, t_msg = _raises(torch.FloatTensor, *bad)
    e_type, e_msg = _raises(ember.FloatTensor, *bad)
    assert e_type is t_type
    assert e_msg.splitlines()[0].split(" - ")[0] == t_msg.splitlines()[0].split(" - ")[0]


@pytest.mark.parametrize("dtype", _NAMES[:10])
def test_isinstance_of_legacy_types(dtype: str) -> None:
    t = torch.zeros(2, dtype=getattr(torch, dtype))
    e = ember.zeros(2, dtype=getattr(ember, dtype))
    for name in _LEGACY:
        assert isinstance(e, getattr(ember, name)) == isinstance(t, getattr(torch, name)), name
    assert isinstance(e, ember.Tensor) and not isinstance([1.0], ember.FloatTensor)
    assert repr(ember.FloatTensor) == repr(torch.FloatTensor).replace("torch.", "ember.")


@pytest.mark.parametrize("src", ["float32", "int64", "bool", "float16"])
@pytest.mark.parametrize("target", _LEGACY)
def test_type_conversions(src: str, target: str) -> None:
    t = torch.tensor([0, 1, 2], dtype=getattr(torch, src))
    e = ember.tensor([0, 1, 2], dtype=getattr(ember, src))
    want = t.type(getattr(torch, target))
    for arg in (getattr(ember, target), f"torch.{target}", f"ember.{target}"):
        got = e.type(arg)
        assert _name(got.dtype) == _name(want.dtype)
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    assert e.type(getattr(ember, target)).type() == want.type().replace("torch.", "ember.")


def test_type_with_a_dtype_and_bad_arguments() -> None:
    t, e = torch.tensor([1.5]), ember.tensor([1.5])
    assert e.type() == t.type().replace("torch.", "ember.") == "ember.FloatTensor"
    assert _name(e.type(ember.int64).dtype) == _name(t.type(torch.int64).dtype)
    assert (e.type(ember.FloatTensor) is e) == (t.type(torch.FloatTensor) is t) is True
    assert (e.type("torch.FloatTensor") is e) == (t.type("torch.FloatTensor") is t) is True
    assert _raises(e.type, "foo") == _raises(t.type, "foo")
    assert _raises(e.type, "torch.FooTensor") == _raises(t.type, "torch.FooTensor")
    assert _raises(e.type, 1) == _raises(t.type, 1)
