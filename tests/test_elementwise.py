"""Elementwise math and every Python operator against NumPy; PyTorch's integer and bool rules."""

from __future__ import annotations

import operator

import ember
import numpy as np
import pytest
from _helpers import assert_close, assert_equal

A_INT = np.array([[7, -7, 5], [-5, 0, 9]], dtype=np.int64)
B_INT = np.array([[2, 2, -3], [-3, 4, 4]], dtype=np.int64)
A_FLT = np.array([[7.5, -7.5, 5.25], [-5.0, 0.0, 9.5]], dtype=np.float32)
B_FLT = np.array([[2.0, 2.0, -3.0], [-3.0, 4.0, 0.5]], dtype=np.float32)

ARITH = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod]
ARITH_IDS = ["add", "sub", "mul", "truediv", "floordiv", "mod"]


def _np_ref(op, a, b):
    with np.errstate(all="ignore"):
        r = op(a.astype(np.float64), b.astype(np.float64) if isinstance(b, np.ndarray) else b)
    if op is operator.truediv:
        return r
    if op is operator.floordiv:
        return np.floor(a.astype(np.float64) / b)
    return r


@pytest.mark.parametrize("op", ARITH, ids=ARITH_IDS)
@pytest.mark.parametrize("a, b", [(A_INT, B_INT), (A_FLT, B_FLT)], ids=["int64", "float32"])
def test_binary_operators_tensor_tensor(op, a, b):
    got = op(ember.tensor(a), ember.tensor(b))
    exp = _np_ref(op, a, b)
    if op is operator.truediv or a.dtype.kind == "f":
        assert got.dtype is ember.float32
        assert_close(got, exp, rtol=1e-6)
    else:
        assert_equal(got, exp.astype(np.int64), ember.int64)


@pytest.mark.parametrize("op", ARITH, ids=ARITH_IDS)
@pytest.mark.parametrize("scalar", [3, -2, 2.5])
def test_binary_operators_with_python_scalars_both_sides(op, scalar):
    a = A_INT if isinstance(scalar, int) else A_FLT
    t = ember.tensor(a)
    nonzero = np.where(a == 0, 1, a).astype(a.dtype)
    tn = ember.tensor(nonzero)
    got, rgot = op(t, scalar), op(scalar, tn)
    exp = op(a.astype(np.float64), scalar)
    with np.errstate(all="ignore"):
        rexp = op(scalar, nonzero.astype(np.float64))
    if op is operator.floordiv:
        exp, rexp = np.floor(a / scalar), np.floor(scalar / nonzero.astype(np.float64))
    assert_close(got, exp, rtol=1e-6)
    assert_close(rgot, rexp, rtol=1e-6)
    if op is not operator.truediv and isinstance(scalar, int):
        assert got.dtype is ember.int64 and rgot.dtype is ember.int64


@pytest.mark.parametrize(
    "iop, op",
    [
        (operator.iadd, np.add),
        (operator.isub, np.subtract),
        (operator.imul, np.multiply),
        (operator.ifloordiv, np.floor_divide),
        (operator.imod, np.remainder),
        (operator.iand, np.bitwise_and),
        (operator.ior, np.bitwise_or),
        (operator.ixor, np.bitwise_xor),
        (operator.ipow, np.power),
        (operator.ilshift, np.left_shift),
        (operator.irshift, np.right_shift),
    ],
)
def test_inplace_operators_keep_identity_and_bump_version(iop, op):
    t = ember.tensor(np.abs(A_INT) + 1)
    same, v0 = t, t._version
    t = iop(t, 2)
    assert t is same and t._version > v0
    assert_equal(t, op(np.abs(A_INT) + 1, 2), ember.int64)


def test_inplace_true_division_and_float_inplace_ops():
    t = ember.tensor(A_FLT.copy())
    t /= 2
    assert_close(t, A_FLT / 2)
    t = ember.tensor([1.0, 2.0])
    t += ember.tensor([1, 2])
    assert t.dtype is ember.float32 and t.tolist() == [2.0, 4.0]


def test_inplace_cannot_change_dtype_or_shape():
    # PyTorch 2.13's messages
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ember.tensor([1, 2]).add_(1.5)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ember.tensor([1, 2]).mul_(ember.tensor([1.5, 2.0]))
    with pytest.raises(
        RuntimeError, match=r"output with shape \[2, 1\] doesn't match the broadcast shape \[2, 3\]"
    ):
        ember.ones(2, 1).add_(ember.ones(2, 3))


def test_floor_division_floors_toward_minus_infinity():
    a, b = ember.tensor([7, -7, 7, -7, 0]), ember.tensor([2, 2, -2, -2, 3])
    assert (a // b).tolist() == [3, -4, -4, 3, 0]
    assert ember.floor_divide(a, b).tolist() == [3, -4, -4, 3, 0]
    fa, fb = ember.tensor([7.5, -7.5, 7.5, -7.5, 0.0]), ember.tensor([2.0, 2, -2, -2, 3])
    assert (fa // fb).tolist() == [3.0, -4.0, -4.0, 3.0, 0.0]
    assert (7 // ember.tensor([2, -2])).tolist() == [3, -4]
    assert ember.div(ember.tensor([-7, 7]), 2, rounding_mode="floor").tolist() == [-4, 3]
    assert ember.div(ember.tensor([-7, 7]), 2, rounding_mode="trunc").tolist() == [-3, 3]
    assert ember.div(ember.tensor([-7.0, 7.0]), 2, rounding_mode="trunc").tolist() == [-3.0, 3.0]
    with pytest.raises(
        RuntimeError, match="div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'x'"
    ):
        ember.div(ember.tensor([1.0]), 2, rounding_mode="x")


def test_remainder_takes_the_sign_of_the_divisor():
    assert (ember.tensor([7, -7, 7, -7, 0]) % ember.tensor([2, 2, -2, -2, 3])).tolist() == [1, 1, -1, -1, 0]
    fa, fb = ember.tensor([7.5, -7.5, 7.5, -7.5, 0.0]), ember.tensor([2.0, 2, -2, -2, 3])
    assert (fa % fb).tolist() == [1.5, 0.5, -0.5, -1.5, 0.0]
    assert (7 % ember.tensor([2, -2])).tolist() == [1, -1]
    assert (-7.5 % ember.tensor([2, -2])).tolist() == [0.5, -1.5]
    assert ember.remainder(ember.tensor([-3.0, 3.0]), -2).tolist() == [-1.0, -1.0]


@pytest.mark.parametrize(
    "fn",
    [
        lambda: ember.tensor([1, 2]) // 0,
        lambda: ember.tensor([1, 2]) // ember.tensor([1, 0]),
        lambda: ember.tensor([1, 2]) % 0,
        lambda: ember.tensor([1, 2]) % ember.tensor([1, 0]),
    ],
)
def test_integer_division_by_zero_raises(fn):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn()


def test_true_division_of_integers_gives_float_and_ieee_results():
    r = ember.tensor([1, 0, -1]) / 0
    assert r.dtype is ember.float32
    assert r.tolist()[0] == float("inf") and np.isnan(r.tolist()[1]) and r.tolist()[2] == float("-inf")
    assert (1 / ember.tensor([2, 4])).tolist() == [0.5, 0.25]


def test_number_divided_by_tensor_rounds_like_pytorch():
    # PyTorch evaluates ``number / tensor`` as ``tensor.reciprocal() * number`` (recorded values).
    x = ember.tensor([-2.5, -1.0, 0.0, 0.5, 1.5, 3.25])
    assert (-3 / x).tolist() == [1.2000000476837158, 3.0, float("-inf"), -6.0, -2.0, -0.9230769872665405]
    assert (2.5 / x).tolist()[4:] == [1.6666667461395264, 0.7692307829856873]
    assert (2.5 / x.double()).tolist()[4:] == [1.6666666666666665, 0.7692307692307693]
    assert (2.5 / ember.tensor([3, 6])).tolist() == [0.8333333730697632, 0.4166666865348816]


def test_unsupported_operands_behave_as_in_pytorch():
    t = ember.ones(2)
    assert (t == None) is False and (t != None) is True and (t == "a") is False
    assert None not in [t]
    cases = [
        (lambda: t + None, "unsupported operand type(s) for +: 'Tensor' and 'NoneType'"),
        (lambda: t + [1, 2], "unsupported operand type(s) for +: 'Tensor' and 'list'"),
        (lambda: [1] + t, 'can only concatenate list (not "Tensor") to list'),
        (lambda: t < None, "'<' not supported between instances of 'Tensor' and 'NoneType'"),
        (lambda: t @ "a", "unsupported operand type(s) for @: 'Tensor' and 'str'"),
    ]
    for fn, msg in cases:
        with pytest.raises(TypeError) as e:
            fn()
        assert str(e.value) == msg


def test_bool_negation_and_subtraction_raise_pytorch_text():
    with pytest.raises(
        RuntimeError,
        match=r"^Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not\(\)` operator instead.$",
    ):
        -ember.tensor([True])
    two = r"^Subtraction, the `-` operator, with two bool tensors is not supported. Use the `\^` or `logical_xor\(\)` operator instead.$"
    for fn in (
        lambda: ember.tensor([True]) - ember.tensor([False]),
        lambda: ember.tensor([True]) - True,
        lambda: True - ember.tensor([True]),
    ):
        with pytest.raises(RuntimeError, match=two):
            fn()


def test_bool_arithmetic_follows_pytorch():
    t, f = ember.tensor([True, False]), ember.tensor([True, True])
    assert_equal(t + f, [True, True], ember.bool)
    assert_equal(t * f, [True, False], ember.bool)
    assert_equal(t / f, np.array([1.0, 0.0], np.float32), ember.float32)
    assert_equal(~t, [False, True], ember.bool)


def test_powers():
    assert_equal(2 ** ember.tensor([3, 4]), [8, 16], ember.int64)
    assert_equal(2.5 ** ember.tensor([3, 4]), np.array([15.625, 39.0625], np.float32), ember.float32)
    assert_equal(ember.tensor([4, 9]) ** 0.5, np.array([2.0, 3.0], np.float32), ember.float32)
    assert ember.tensor([0.0]) ** 0 == 1.0
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        ember.tensor([2]) ** -1
    # an integer tensor exponent truncates instead (PyTorch 2.13)
    base = ember.tensor([2, 1, -1, -1, 0, 3])
    assert (base ** ember.tensor([-1, -3, -3, -2, -1, 0])).tolist() == [0, 1, -1, 1, 0, 1]


def test_bitwise_and_shift_operators():
    a = ember.tensor([12, 10])
    assert (a & 6).tolist() == [4, 2] and (6 & a).tolist() == [4, 2]
    assert (a | 3).tolist() == [15, 11] and (a ^ ember.tensor([1, 1])).tolist() == [13, 11]
    assert (~ember.tensor([12, -1])).tolist() == [-13, 0]
    assert (ember.tensor([1, 2]) << 2).tolist() == [4, 8]
    assert (ember.tensor([8, -8]) >> 1).tolist() == [4, -4]
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        ember.tensor([1.0]) & 1


@pytest.mark.parametrize(
    "op",
    [
        operator.and_,
        operator.or_,
        operator.xor,
        operator.lshift,
        operator.rshift,
        operator.pow,
        operator.mod,
        operator.floordiv,
    ],
)
def test_reflected_integer_operators_against_numpy(op):
    a = np.array([1, 2, 3, 5], dtype=np.int64)
    got = op(7, ember.tensor(a))
    assert_equal(got, op(np.int64(7), a), ember.int64)
    assert_equal(op(ember.tensor(a), ember.tensor(a[::-1].copy())), op(a, a[::-1]), ember.int64)


def test_unary_operators_and_integer_wraparound():
    assert_equal(+ember.tensor([1, -1]), [1, -1], ember.int64)
    assert_equal(abs(ember.tensor([1, -1])), [1, 1], ember.int64)
    assert_equal(-ember.tensor([1], dtype=ember.uint8), np.array([255], np.uint8), ember.uint8)
    assert_equal(ember.tensor([-128], dtype=ember.int8).abs(), np.array([-128], np.int8))
    assert_equal(ember.tensor([100], dtype=ember.int8) * 2, np.array([-56], np.int8))
    assert_equal(ember.tensor([3 + 4j]).abs(), np.array([5.0], np.float32), ember.float32)
    assert_equal(ember.tensor([1 + 2j]) * ember.tensor([3 - 1j]), np.array([5 + 5j], np.complex64))


UNARY = [
    ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("sin", np.sin), ("cos", np.cos),
    ("tanh", np.tanh), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc),
    ("round", np.round), ("sign", np.sign), ("log1p", np.log1p), ("expm1", np.expm1),
    ("abs", np.abs), ("neg", np.negative), ("reciprocal", np.reciprocal), ("square", np.square),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("exp2", np.exp2), ("log2", np.log2),
    ("log10", np.log10), ("tan", np.tan), ("rsqrt", lambda x: 1 / np.sqrt(x)),
    ("relu", lambda x: np.maximum(x, 0)),
]  # fmt: skip


@pytest.mark.parametrize("name, ref", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_math_against_numpy_float64(name, ref, dtype):
    x = np.array([0.25, 0.5, 1.5, 2.5, 3.75, 0.1, 7.0], dtype=dtype)
    if name in ("floor", "ceil", "trunc", "round", "sign", "abs", "neg", "relu"):
        x = np.concatenate([x, -x])
    got = getattr(ember, name)(ember.tensor(x))
    assert got.dtype is getattr(ember, dtype)
    tol = 1e-6 if dtype == "float32" else 1e-13
    assert_close(got, ref(x.astype(np.float64)), rtol=tol, atol=tol)
    assert_close(getattr(ember.tensor(x), name)(), ref(x.astype(np.float64)), rtol=tol, atol=tol)


def test_unary_on_integers_promotes_to_default_float():
    assert ember.tensor([4, 9]).sqrt().dtype is ember.float32
    assert_close(ember.tensor([0, 1], dtype=ember.int16).exp(), [1.0, np.e], rtol=1e-6)
    assert_close(ember.tensor([True]).sin(), [np.sin(1.0)], rtol=1e-6)
    assert_equal(ember.tensor([1, 2]).round(), [1, 2], ember.int64)


def test_round_half_to_even_and_decimals():
    r = ember.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.4]).round()
    assert r.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 2.0]
    assert ember.tensor([1.2345, 2.5551]).round(decimals=2).tolist() == pytest.approx([1.23, 2.56], abs=1e-6)


def test_comparisons_against_numpy():
    a, b = ember.tensor(A_FLT), ember.tensor(B_FLT)
    for op in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
        assert_equal(op(a, b), op(A_FLT, B_FLT), ember.bool)
        assert_equal(op(a, 2.0), op(A_FLT, 2.0), ember.bool)
        assert_equal(op(2.0, a), op(2.0, A_FLT), ember.bool)
    assert_equal(ember.tensor([1, 2]) == 1.0, [True, False], ember.bool)
    nan, nan2 = ember.tensor([float("nan")]), ember.tensor([float("nan")])
    assert (nan != nan2).tolist() == [True] and (nan == nan2).tolist() == [False]
    assert_equal(ember.logical_and(ember.tensor([1, 0, 2]), ember.tensor([1.0, 1, 0])), [True, False, False])
    assert_equal(ember.isnan(ember.tensor([1.0, float("nan")])), [False, True])


def test_maximum_minimum_propagate_nan():
    r = ember.maximum(ember.tensor([float("nan"), 1.0]), ember.tensor([0.0, 2.0])).tolist()
    assert np.isnan(r[0]) and r[1] == 2.0
    assert ember.minimum(ember.tensor([3, 1]), ember.tensor([2, 5])).tolist() == [2, 1]


def test_complex_operands_are_refused_where_pytorch_refuses():
    c = ember.tensor([1 + 2j])
    with pytest.raises(NotImplementedError, match="\"div_floor_cpu\" not implemented for 'ComplexFloat'"):
        c // 2
    with pytest.raises(NotImplementedError, match="\"lt_cpu\" not implemented for 'ComplexFloat'"):
        _ = c < 2
    with pytest.raises(NotImplementedError, match="clamp is not supported for complex types"):
        c.clamp(0, 1)
    with pytest.raises(RuntimeError, match="maximum not implemented for complex tensors."):
        ember.maximum(c, c)


@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (lambda c: c.floor(), NotImplementedError, "floor is not supported for complex inputs"),
        (lambda c: c.ceil(), NotImplementedError, "ceil is not supported for complex inputs"),
        (lambda c: c.trunc(), NotImplementedError, "trunc is not supported for complex inputs"),
        (lambda c: c.round(), NotImplementedError, "\"round_vml_cpu\" not implemented for 'ComplexFloat'"),
        (lambda c: c.amax(), NotImplementedError, "\"max_values_cpu\" not implemented for 'ComplexFloat'"),
        (lambda c: c.amin(), NotImplementedError, "\"min_values_cpu\" not implemented for 'ComplexFloat'"),
        (lambda c: c.max(), NotImplementedError, "\"max_all\" not implemented for 'ComplexFloat'"),
        (lambda c: c.argmax(), RuntimeError, "argmax(): does not support complex input"),
        (lambda c: c.argmin(), RuntimeError, "argmin(): does not support complex input"),
        (lambda c: c % 2, NotImplementedError, "\"remainder_cpu\" not implemented for 'ComplexFloat'"),
    ],
)
def test_complex_refusals_match_pytorch(fn, exc, msg):
    with pytest.raises(exc) as e:
        fn(ember.tensor([1 + 1j, 0j]))
    assert str(e.value) == msg


def test_bool_refusals_and_casts():
    t = ember.tensor([True, False])
    with pytest.raises(NotImplementedError, match="^\"remainder_cpu\" not implemented for 'Bool'$"):
        t % t
    with pytest.raises(NotImplementedError, match="^\"div_floor_cpu\" not implemented for 'Bool'$"):
        t // t
    with pytest.raises(
        TypeError, match=r"^~ \(operator.invert\) is only implemented on integer and Boolean-type tensors$"
    ):
        ~ember.tensor([1.0])
    assert_equal(t.sign(), [True, False], ember.bool)
    assert ember.tensor([1 + 1j, 0j, 0.5j]).bool().tolist() == [True, False, True]
    assert ember.tensor([0.5j]).to(ember.int64).tolist() == [0]


def test_where_promotes_and_broadcasts():
    cond = ember.tensor([True, False])
    assert_equal(
        ember.where(cond, ember.tensor([1, 2]), 2.5), np.array([1.0, 2.5], np.float32), ember.float32
    )
    assert_equal(ember.where(cond, 1, 0), [1, 0], ember.int64)
    assert_equal(ember.where(cond, 1.0, 0), np.array([1.0, 0.0], np.float32), ember.float32)
    c2 = ember.tensor([[True], [False]])
    r = ember.where(c2, ember.tensor([1, 2, 3]), ember.tensor(-1))
    assert r.tolist() == [[1, 2, 3], [-1, -1, -1]]
    with pytest.raises(
        RuntimeError,
        match="where expected condition to be a boolean tensor, but got a tensor with dtype Long",
    ):
        ember.where(ember.tensor([1, 0]), 1.0, 0)
    idx = ember.where(ember.tensor([[0, 1], [1, 1]]) != 0)
    assert [i.tolist() for i in idx] == [[0, 1, 1], [1, 0, 1]]


def test_clamp_result_dtype_follows_bounds():
    # PyTorch 1.13+ semantics, values recorded with PyTorch 2.13
    assert_equal(ember.tensor([0, 1, 2]).clamp(min=0.5), np.array([0.5, 1.0, 2.0], np.float32), ember.float32)
    assert_equal(ember.tensor([-1, 1, 5]).clamp(0, 3), [0, 1, 3], ember.int64)
    r = ember.tensor([0.0, 1, 2]).clamp(min=ember.tensor([1.0], dtype=ember.float64))
    assert_equal(r, [1.0, 1.0, 2.0], ember.float64)
    assert_equal(ember.tensor([0, 1, 2]).clamp(max=ember.tensor(1.5)), np.array([0, 1, 1.5], np.float32))
    assert ember.tensor([0.0, 1, 2]).clamp(2, 1).tolist() == [1.0, 1.0, 1.0]
    r = ember.tensor([float("nan"), 1.0]).clamp(0, 0.5).tolist()
    assert np.isnan(r[0]) and r[1] == 0.5
    assert ember.clip(ember.tensor([-2.0, 2.0]), -1, 1).tolist() == [-1.0, 1.0]
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        ember.tensor([1.0]).clamp()
