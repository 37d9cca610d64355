"""Alternative spellings, ``*_copy`` variants, gradient/pdist/put/unravel_index, and the
special polynomials (against NumPy/SciPy)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
import scipy.special as ss
from _opsref import close, dbl, grad_ok, same

RNG = np.random.default_rng(9)
X = RNG.normal(size=(4, 5))


def t(a):
    return ember.tensor(a)


def test_spellings():
    x = t(X)
    same(ember.greater(x, 0), X > 0)
    same(x.less_equal(0.1), X <= 0.1)
    same(ember.not_equal(x, x), np.zeros_like(X, bool))
    same(ember.fix(t(np.array([-1.5, 2.5]))), [-1.0, 2.0])
    same(ember.rsub(x, 1, alpha=2), 1 - 2 * X)
    same(ember.adjoint(t(X + 1j * X)), (X - 1j * X).T)
    same(ember.diagflat(t(np.array([[1, 2], [3, 4]]))), np.diagflat([[1, 2], [3, 4]]))
    close(ember.frobenius_norm(x), np.linalg.norm(X))
    close(ember.nuclear_norm(x), np.linalg.norm(X, "nuc"))
    assert ember.is_same_size(x, x) and not ember.is_conj(x) and not ember.is_neg(x)
    assert ember.resolve_conj(x) is x
    assert ember.is_nonzero(ember.tensor([2])) and not ember.is_nonzero(ember.tensor(0.0))
    with pytest.raises(RuntimeError):
        ember.is_nonzero(ember.tensor([1, 2]))
    close(
        ember.mvlgamma(ember.tensor([3.0, 4.5], dtype=ember.float64), 2),
        ss.multigammaln(np.array([3.0, 4.5]), 2),
    )
    close(ember.linalg.diagonal(x, offset=1), np.diagonal(X, 1))
    close(ember.linalg.matmul(x, x.T), X @ X.T)
    tau = t(np.array([1.0, 0.5]))
    close(ember.orgqr(t(X.T), tau), ember.linalg.householder_product(t(X.T), tau))


def test_copy_variants_do_not_alias():
    x = t(X)
    d = ember.diagonal_copy(x)
    d.fill_(0.0)
    assert (x.diagonal() != 0).all()
    same(ember.transpose_copy(x, 0, 1), X.T)
    same(ember.unfold_copy(ember.arange(5), 0, 2, 1), [[0, 1], [1, 2], [2, 3], [3, 4]])
    assert [p.shape for p in ember.split_copy(x, 2)] == [(2, 5), (2, 5)]
    grad_ok(lambda a: ember.permute_copy(a, (1, 0)), dbl(2, 3))


def test_put_unravel_pdist_gradient():
    z = ember.zeros(2, 3)
    same(
        ember.put(z, ember.tensor([0, 5, 5, -1]), ember.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True),
        [[1, 0, 0], [0, 0, 9]],
    )
    z.put_(ember.tensor([1]), ember.tensor([7.0]))
    same(z, [[0, 7, 0], [0, 0, 0]])
    with pytest.raises(IndexError):
        ember.put(z, ember.tensor([6]), ember.tensor([1.0]))
    r = ember.unravel_index(ember.tensor([7, 13, -1]), (4, 5))
    for a, b in zip(r, np.unravel_index(np.array([7, 13, 19]), (4, 5))):
        same(a, b)
    from scipy.spatial.distance import pdist

    close(ember.pdist(t(X)), pdist(X))
    close(ember.pdist(t(X), 1), pdist(X, "minkowski", p=1))
    grad_ok(lambda a: ember.pdist(a), dbl(3, 2))
    for order in (1, 2):
        for g, e in zip(
            ember.gradient(t(X), spacing=0.5, edge_order=order), np.gradient(X, 0.5, edge_order=order)
        ):
            close(g, e)
        xs, ys = np.array([0.0, 1.0, 3.0, 4.0]), np.array([0.0, 1.0, 3.0, 4.5, 7.0])
        got = ember.gradient(t(X), spacing=[t(xs), t(ys)], edge_order=order)
        for g, e in zip(got, np.gradient(X, xs, ys, edge_order=order)):
            close(g, e, rtol=1e-10)
    close(ember.gradient(t(X), dim=1)[0], np.gradient(X, axis=1))
    with pytest.raises(RuntimeError):
        ember.gradient(ember.zeros(1, 3))


POLY = [
    ("chebyshev_polynomial_t", ss.eval_chebyt, lambda x: x),
    ("chebyshev_polynomial_u", ss.eval_chebyu, lambda x: x),
    ("hermite_polynomial_h", ss.eval_hermite, lambda x: x),
    ("hermite_polynomial_he", ss.eval_hermitenorm, lambda x: x),
    ("laguerre_polynomial_l", ss.eval_laguerre, lambda x: x),
    ("legendre_polynomial_p", ss.eval_legendre, lambda x: x),
    ("shifted_chebyshev_polynomial_t", ss.eval_chebyt, lambda x: 2 * x - 1),
]


@pytest.mark.parametrize("name,ref,arg", POLY, ids=[p[0] for p in POLY])
def test_polynomials(name, ref, arg):
    x = np.array([-0.9, -0.3, 0.0, 0.4, 0.95, 1.5])
    fn = getattr(ember.special, name)
    for n in (0, 1, 2, 5, 9):
        close(fn(t(x), n), ref(n, arg(x)), rtol=1e-10, atol=1e-12)
    ns = np.array([0, 1, 2, 3, 4, 5])
    close(fn(t(x), t(ns)), ref(ns, arg(x)), rtol=1e-10, atol=1e-12)
    same(fn(t(x), -1), np.zeros(6))


def test_recorded_chebyshev_vw_and_spherical_j0():
    # recorded from PyTorch 2.13
    x = ember.tensor([-0.9, 0.0, 0.4], dtype=ember.float64)
    close(ember.special.chebyshev_polynomial_v(x, 3), [-4.472, 1.0, -0.728], rtol=1e-12)
    close(ember.special.chebyshev_polynomial_w(x, 3), [0.007999999999999821, -1.0, -1.448], rtol=1e-9)
    close(
        ember.special.spherical_bessel_j0(ember.tensor([0.0, 1.0, 3.0], dtype=ember.float64)),
        [1.0, np.sin(1.0), np.sin(3.0) / 3],
    )
    close(ember.special.modified_bessel_i0(ember.tensor([1.0], dtype=ember.float64)), ss.i0([1.0]))


def test_nonzero_static_sum_to_size():
    same(ember.nonzero_static(ember.tensor([0, 3, 0, 5]), size=3), [[1], [3], [-1]])
    same(ember.nonzero_static(ember.tensor([[1, 0], [0, 1]]), size=1, fill_value=7), [[0, 0]])
    same(ember.ones(2, 3).sum_to_size(1, 3), [[2.0, 2.0, 2.0]])
    same(ember.ones(2, 3).sum_to_size(3), [2.0, 2.0, 2.0])
    with pytest.raises(RuntimeError, match=r"size \{\[2\]\} is not expandable to size \{\[2, 3\]\}"):
        ember.ones(2, 3).sum_to_size(2)


def test_histogramdd():
    # recorded from PyTorch 2.13
    x = ember.tensor([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]])
    r = ember.histogramdd(x, bins=[3, 3], weight=ember.tensor([1.0, 2.0, 4.0, 8.0]))
    same(r.hist, [[0.0, 1.0, 0.0], [2.0, 0.0, 0.0], [4.0, 0.0, 8.0]])
    close(r.bin_edges[0], [0.0, 0.6666667, 1.3333334, 2.0], rtol=1e-6)
    r = ember.histogramdd(x, bins=2, range=[0.0, 1.0, 0.0, 2.0], density=True)
    same(r.hist, [[0.0, 1.0], [1.0, 0.0]])
    got = ember.histogramdd(x, bins=[ember.tensor([0.0, 1.0, 3.0]), ember.tensor([-1.0, 0.5, 2.0])])
    same(got.hist, [[0.0, 1.0], [2.0, 1.0]])
    pts = RNG.normal(size=(50, 3))
    h, e = ember.histogramdd(ember.tensor(pts), bins=[2, 3, 4])
    nh, ne = np.histogramdd(pts, bins=[2, 3, 4])
    close(h, nh)
    for a, b in zip(e, ne):
        close(a, b)
