"""ember.special against SciPy in float64; gradients by gradcheck."""

from __future__ import annotations

import ember
import numpy as np
import pytest
import scipy.special as ss
from _opsref import close, dbl, grad_ok

# Composites without a kernel on the primitives-only test backend warn once (by design).
pytestmark = pytest.mark.filterwarnings("ignore:.*has no kernel.*:RuntimeWarning")

sp = ember.special
X = np.array([-2.5, -0.7, 0.0, 0.3, 1.0, 4.0])
POS = np.array([0.2, 0.9, 1.5, 3.0, 8.0])
P = np.array([0.01, 0.2, 0.5, 0.8, 0.99])

CASES = [
    ("erf", ss.erf, X),
    ("erfc", ss.erfc, X),
    ("erfcx", ss.erfcx, X),
    ("erfinv", ss.erfinv, P * 2 - 1),
    ("expit", ss.expit, X),
    ("logit", ss.logit, P),
    ("exp2", np.exp2, X),
    ("expm1", np.expm1, X),
    ("log1p", np.log1p, POS),
    ("ndtr", ss.ndtr, X),
    ("ndtri", ss.ndtri, P),
    ("log_ndtr", ss.log_ndtr, X),
    ("i0", ss.i0, X),
    ("i0e", ss.i0e, X),
    ("i1", ss.i1, X),
    ("i1e", ss.i1e, X),
    ("gammaln", ss.gammaln, POS),
    ("digamma", ss.digamma, POS),
    ("psi", ss.psi, POS),
    ("sinc", np.sinc, X),
    ("entr", ss.entr, np.append(POS, [0.0, -1.0])),
    ("bessel_j0", ss.j0, X),
    ("bessel_j1", ss.j1, X),
    ("round", np.round, X),
]


@pytest.mark.parametrize("name,ref,data", CASES, ids=[c[0] for c in CASES])
def test_values(name, ref, data, cpu_prims):
    fn = getattr(sp, name)
    close(fn(ember.tensor(data, dtype=ember.float64)), ref(data), rtol=1e-12, atol=1e-14)
    close(fn(ember.tensor(data, device=cpu_prims)), ref(data).astype(np.float32), rtol=3e-6, atol=1e-6)
    assert fn(ember.zeros(0)).shape == (0,)


GRADS = [
    "erfcx",
    "erfinv",
    "ndtri",
    "log_ndtr",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "gammaln",
    "digamma",
    "sinc",
    "logit",
    "ndtr",
    "entr",
]


@pytest.mark.parametrize("name", GRADS)
def test_grads(name):
    low, high = (0.1, 0.9) if name in ("ndtri", "logit", "erfinv", "entr") else (0.2, 2.0)
    grad_ok(getattr(sp, name), dbl(4, low=low, high=high))
    if name.startswith("i"):
        grad_ok(getattr(sp, name), dbl(3, low=-2.0, high=-0.1))


def test_no_derivative_as_pytorch():
    """PyTorch marks bessel_j0/j1's outputs non-differentiable: no grad_fn at all."""
    x = dbl(2)
    for fn in (sp.bessel_j0, sp.bessel_j1):
        y = fn(x)
        assert y.requires_grad is False and y.grad_fn is None
        with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
            y.sum().backward()


def test_two_argument_functions():
    a, b = np.array([0.0, 1.0, 2.5]), np.array([0.5, -0.5, 3.0])
    close(sp.xlogy(ember.tensor(a), ember.tensor(np.abs(b))), ss.xlogy(a, np.abs(b)), rtol=1e-6)
    close(
        sp.xlog1py(ember.tensor(a, dtype=ember.float64), ember.tensor(b, dtype=ember.float64)),
        ss.xlog1py(a, b),
    )
    for n in range(3):
        close(sp.polygamma(n, ember.tensor(POS, dtype=ember.float64)), ss.polygamma(n, POS), rtol=1e-10)
    close(
        sp.zeta(ember.tensor([2.0, 3.5], dtype=ember.float64), ember.tensor(1.5, dtype=ember.float64)),
        ss.zeta([2.0, 3.5], 1.5),
    )
    close(
        sp.multigammaln(ember.tensor(POS + 2, dtype=ember.float64), 3),
        [ss.multigammaln(v, 3) for v in POS + 2],
    )
    close(
        sp.multigammaln(ember.tensor([0.5, 2.0]), 3), [float("inf"), 1.5963125], rtol=1e-6
    )  # PyTorch: no domain check
    grad_ok(lambda q: sp.zeta(ember.tensor([2.0, 3.0], dtype=ember.float64), q), dbl(2, low=1.0, high=2.0))
    grad_ok(lambda q: sp.multigammaln(q, 2), dbl(2, low=1.0, high=2.0))


def test_softmax_family():
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]])
    close(sp.softmax(ember.tensor(x), 1), ss.softmax(x, 1), rtol=1e-6)
    close(sp.log_softmax(ember.tensor(x), 0), ss.log_softmax(x, 0), rtol=1e-6)
    close(sp.logsumexp(ember.tensor(x), 1), ss.logsumexp(x, 1), rtol=1e-6)


def test_incomplete_gamma():
    a = np.array([0.5, 1.0, 2.5, 10.0, 100.0, 1000.0, 3.0, 0.1, 50.0])
    x = np.array([0.2, 1.0, 7.0, 9.0, 120.0, 990.0, 0.0, 30.0, 50.0])
    A, X = ember.tensor(a, dtype=ember.float64), ember.tensor(x, dtype=ember.float64)
    close(sp.gammainc(A, X), ss.gammainc(a, x), rtol=1e-11, atol=1e-300)
    close(sp.gammaincc(A, X), ss.gammaincc(a, x), rtol=1e-11, atol=1e-300)
    close(
        sp.gammainc(ember.tensor(a), ember.tensor(x)),
        ss.gammainc(a, x).astype(np.float32),
        rtol=2e-6,
        atol=1e-7,
    )
    # PyTorch 2.13 edge values: a == 0 gives 1 (lower) / 0 (upper), a < 0 NaN, x = inf gives 1
    close(
        sp.gammainc(ember.tensor([0.0, -1.0, 2.0]), ember.tensor([1.0, 1.0, float("inf")])),
        [1.0, np.nan, 1.0],
    )
    grad_ok(
        lambda q: sp.gammainc(ember.tensor([0.5, 3.0], dtype=ember.float64), q), dbl(2, low=0.5, high=4.0)
    )
    grad_ok(
        lambda q: sp.gammaincc(ember.tensor([0.5, 3.0], dtype=ember.float64), q), dbl(2, low=0.5, high=4.0)
    )
    a_leaf = dbl(2, low=1.0, high=2.0)
    with pytest.raises(NotImplementedError):
        sp.gammainc(a_leaf, ember.tensor([1.0, 2.0], dtype=ember.float64)).sum().backward()


@pytest.mark.parametrize(
    "name,ref",
    [
        ("modified_bessel_k0", ss.k0),
        ("modified_bessel_k1", ss.k1),
        ("scaled_modified_bessel_k0", ss.k0e),
        ("scaled_modified_bessel_k1", ss.k1e),
    ],
)
def test_modified_bessel_k(name, ref):
    x = np.array([1e-8, 1e-3, 0.1, 0.5, 1.0, 2.5, 7.0, 19.9, 20.1, 35.0, 100.0, 700.0])
    fn = getattr(sp, name)
    close(fn(ember.tensor(x, dtype=ember.float64)), ref(x), rtol=1e-13, atol=0)
    close(fn(ember.tensor(x[:8])), ref(x[:8]).astype(np.float32), rtol=2e-6)
    # PyTorch 2.13: inf at 0, NaN below
    close(fn(ember.tensor([0.0, -1.0])), [np.inf, np.nan])


def test_bessel_y_and_airy():
    x = np.array([1e-8, 1e-3, 0.1, 0.5, 1.0, 2.5, 7.0, 19.9, 24.9, 25.1, 35.0, 100.0, 1e4])
    close(sp.bessel_y0(ember.tensor(x, dtype=ember.float64)), ss.y0(x), rtol=1e-12, atol=1e-14)
    close(sp.bessel_y1(ember.tensor(x, dtype=ember.float64)), ss.y1(x), rtol=1e-12, atol=1e-14)
    a = np.array([-100.0, -30.0, -20.0, -5.5, -1.0, -1e-3, 0.0, 1e-3, 0.5, 2.0, 7.0, 20.0, 60.0])
    close(sp.airy_ai(ember.tensor(a, dtype=ember.float64)), ss.airy(a)[0], rtol=1e-12, atol=1e-14)
    close(sp.airy_ai(ember.tensor(a[:10])), ss.airy(a[:10])[0].astype(np.float32), rtol=1e-5, atol=1e-6)
    # edge values recorded from PyTorch 2.13
    edge = ember.tensor([0.0, -1.0, float("inf"), float("-inf"), float("nan")], dtype=ember.float64)
    close(sp.bessel_y0(edge), [-np.inf, np.nan, np.nan, np.nan, np.nan])
    close(sp.airy_ai(edge), [0.3550280538878172, 0.5355608832923521, np.nan, np.nan, np.nan], rtol=1e-12)
    close(sp.modified_bessel_k0(edge), [np.inf, np.nan, 0.0, np.nan, np.nan])
