"""Elementwise math against NumPy/SciPy in float64, gradients by gradcheck."""

from __future__ import annotations

import ember
import numpy as np
import pytest
import scipy.special as sp
from _opsref import close, dbl, grad_ok, same

# Composites without a kernel on the primitives-only test backend warn once (by design).
pytestmark = pytest.mark.filterwarnings("ignore:.*has no kernel.*:RuntimeWarning")

V = np.array([-3.0, -1.5, -0.5, -0.0, 0.0, 1e-9, 0.25, 0.75, 2.0, 7.5])
U = np.array([0.5, -2.0, 3.0, -1.0, 2.0, -0.0, 1.0, -4.0, 0.0, 1.0])
UNIT = np.linspace(-0.95, 0.95, 9)
POS = np.array([0.1, 0.5, 1.0, 2.5, 7.0, 30.0])

UNARY = [
    ("sinh", np.sinh, V, None),
    ("cosh", np.cosh, V, None),
    ("asinh", np.arcsinh, V, None),
    ("acosh", np.arccosh, 1 + POS, None),
    ("atanh", np.arctanh, UNIT, None),
    ("asin", np.arcsin, UNIT, None),
    ("acos", np.arccos, UNIT, None),
    ("atan", np.arctan, V, None),
    ("erfc", sp.erfc, V, None),
    ("erfinv", sp.erfinv, UNIT, None),
    ("lgamma", sp.gammaln, POS, None),
    ("digamma", sp.digamma, POS, None),
    ("frac", lambda a: a - np.trunc(a), V, None),
]


@pytest.mark.parametrize("name,ref,data,_", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, ref, data, _, cpu_prims):
    fn = getattr(ember, name)
    close(fn(ember.tensor(data, dtype=ember.float64)), ref(data), rtol=1e-12, atol=1e-15)
    close(fn(ember.tensor(data, dtype=ember.float32)), ref(data).astype(np.float32), rtol=2e-6, atol=1e-6)
    close(fn(ember.tensor(data, device=cpu_prims)), ref(data).astype(np.float32), rtol=2e-6, atol=1e-6)
    close(getattr(ember.tensor(data[::2]), name)(), ref(data[::2]).astype(np.float32), rtol=2e-6, atol=1e-6)
    assert fn(ember.zeros(0)).shape == (0,)
    assert fn(ember.tensor(data[-1], dtype=ember.float64)).shape == ()
    if name != "frac":
        assert fn(ember.tensor([1, 0])).dtype == ember.float32  # integers promote
        x = ember.tensor(data[1:4], dtype=ember.float64, requires_grad=True)
        grad_ok(fn, x)


def test_polygamma():
    for n in range(4):
        close(ember.polygamma(n, ember.tensor(POS, dtype=ember.float64)), sp.polygamma(n, POS), rtol=1e-10)
    grad_ok(lambda a: ember.polygamma(1, a), dbl(3, low=0.5, high=2.0))
    with pytest.raises(RuntimeError):
        ember.polygamma(-1, ember.ones(1))


BINARY = [
    ("atan2", np.arctan2),
    ("hypot", np.hypot),
    ("fmod", np.fmod),
    ("copysign", np.copysign),
    ("logaddexp", np.logaddexp),
    ("logaddexp2", np.logaddexp2),
    ("fmax", np.fmax),
    ("fmin", np.fmin),
    ("float_power", lambda a, b: np.power(np.abs(a), b)),
    ("xlogy", lambda a, b: sp.xlogy(a, np.abs(b))),
]


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, ref):
    fn = getattr(ember, name)
    a, b = V, U
    if name == "fmod":
        b = np.where(b == 0, 1.5, b)
    if name in ("float_power", "xlogy"):
        a, b = (np.abs(a), b) if name == "float_power" else (a, np.abs(b))
    with np.errstate(all="ignore"):
        exp = ref(a, b)
    close(
        fn(ember.tensor(a, dtype=ember.float64), ember.tensor(b, dtype=ember.float64)),
        exp,
        rtol=1e-12,
        atol=1e-300,
    )
    close(
        fn(ember.tensor(a.reshape(2, 5)), ember.tensor(b[:5])),
        ref(a.reshape(2, 5), b[:5]).astype(np.float32),
        rtol=2e-6,
        atol=1e-6,
    )


def test_binary_special_values():
    inf, nan = float("inf"), float("nan")
    a = ember.tensor([inf, -inf, nan, 1.0])
    b = ember.tensor([inf, -inf, 1.0, nan])
    same(ember.logaddexp(a, b), [inf, -inf, nan, nan])
    same(ember.fmax(a, b), [inf, -inf, 1.0, 1.0])
    same(ember.xlogy(ember.tensor([0.0, 0.0]), ember.tensor([0.0, nan])), [0.0, nan])
    same(ember.signbit(ember.tensor([-0.0, 0.0, -1.0, inf])), [True, False, True, False])
    same(ember.fmod(ember.tensor([-7, 7]), ember.tensor([3, -3])), [-1, 1])
    assert ember.float_power(ember.tensor([2]), 2).dtype == ember.float64
    same(
        ember.nan_to_num(ember.tensor([nan, inf, -inf, 2.0])),
        [0.0, 3.4028234663852886e38, -3.4028234663852886e38, 2.0],
    )
    same(ember.nan_to_num(ember.tensor([nan, inf]), 1.0, 2.0), [1.0, 2.0])
    same(ember.isposinf(a), [True, False, False, False])
    same(ember.isneginf(a), [False, True, False, False])
    same(ember.isneginf(ember.tensor([1])), [False])


def test_lerp_addc():
    s, e = ember.tensor([0.0, 1.0, 2.0]), ember.tensor([10.0, -1.0, 2.0])
    close(ember.lerp(s, e, 0.25), [2.5, 0.5, 2.0])
    close(ember.lerp(s, e, ember.tensor([0.0, 0.75, 1.0])), [0.0, -0.5, 2.0])
    close(ember.addcmul(s, e, e, value=0.5), [50.0, 1.5, 4.0])
    close(ember.addcdiv(s, e, ember.tensor([2.0, 4.0, 8.0]), value=2), [10.0, 0.5, 2.5])
    with pytest.raises(RuntimeError):
        ember.addcdiv(s, ember.tensor([1]), ember.tensor([2]))
    x, y = dbl(4), dbl(4, seed=1)
    grad_ok(lambda a, b: ember.lerp(a, b, 0.7), x, y)
    grad_ok(lambda a, b: ember.atan2(a, b + 2), x, y)
    grad_ok(lambda a, b: ember.hypot(a, b), x, y)
    grad_ok(lambda a, b: ember.logaddexp(a, b), x, y)
    grad_ok(lambda a, b: ember.xlogy(a, b + 2), x, y)
    grad_ok(lambda a, b: ember.fmod(a, b + 2), x, y)
    grad_ok(lambda a, b: ember.copysign(a, b), x, y)
    x.grad = None
    ember.copysign(x, y).sum().backward()
    assert y.grad is not None and (y.grad == 0).all()  # PyTorch gives zeros, not None


@pytest.mark.parametrize("dtype", [ember.int8, ember.int32, ember.int64, ember.uint8])
def test_shifts(dtype):
    a = np.array([1, 3, 7, 100], dtype=dtype.name)
    s = np.array([0, 1, 3, 2], dtype=dtype.name)
    ta, ts = ember.tensor(a, dtype=dtype), ember.tensor(s, dtype=dtype)
    same(ta << ts, np.left_shift(a, s))
    same(ta >> ts, np.right_shift(a, s))
    same(ember.bitwise_right_shift(ta, 1), a >> 1)
    same(ember.tensor([-8], dtype=ember.int64) >> 1, [-4])
    with pytest.raises(RuntimeError):
        ember.tensor([1.0]) << 1


def test_isclose_allclose_equal():
    a = ember.tensor([1.0, float("inf"), float("nan"), 1.0])
    b = ember.tensor([1.0 + 1e-7, float("inf"), float("nan"), 1.1])
    same(ember.isclose(a, b), [True, True, False, False])
    same(ember.isclose(a, b, equal_nan=True), [True, True, True, False])
    assert ember.allclose(a[:2], b[:2])
    assert not ember.allclose(a, b)
    assert ember.equal(ember.tensor([1, 2]), ember.tensor([1, 2]))
    assert not ember.equal(ember.tensor([1, 2]), ember.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError):
        ember.isclose(ember.tensor([1.0]), ember.tensor([1.0], dtype=ember.float64))


def test_sgn_complex():
    z = ember.tensor([3 + 4j, 0j, -2 + 0j])
    close(ember.sgn(z), [0.6 + 0.8j, 0, -1])
    same(ember.sgn(ember.tensor([-2.0, 0.0, 5.0])), [-1.0, 0.0, 1.0])
