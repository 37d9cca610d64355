"""The wider surface: atleast_nd, scatters, index grids, histograms, covariance, trapezoids,
gcd/lcm, frexp, and the older top-level linear-algebra functions (NumPy references and
values recorded from PyTorch 2.13)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _opsref import close, dbl, grad_ok, same

RNG = np.random.default_rng(5)
X = RNG.normal(size=(3, 4))
M = RNG.normal(size=(3, 3))
SPD = M @ M.T + np.eye(3)


def t(a):
    return ember.tensor(a)


def test_atleast_and_splits():
    assert ember.atleast_1d(ember.tensor(1.0)).shape == (1,)
    assert ember.atleast_2d(ember.tensor([1, 2])).shape == (1, 2)
    assert [a.shape for a in ember.atleast_3d(ember.tensor(1.0), ember.tensor([1.0, 2.0]))] == [
        (1, 1, 1),
        (1, 2, 1),
    ]
    assert [p.shape for p in ember.hsplit(t(X), 2)] == [(3, 2), (3, 2)]
    assert [p.shape for p in ember.vsplit(t(X), [1])] == [(1, 4), (2, 4)]
    with pytest.raises(RuntimeError):
        ember.hsplit(t(X), 3)
    with pytest.raises(RuntimeError):
        ember.dsplit(t(X), 2)
    same(ember.ravel(t(X).T), X.T.reshape(-1))
    same(ember.narrow_copy(t(X), 1, 1, 2), X[:, 1:3])
    same(ember.row_stack([t(X[0]), t(X[1])]), X[:2])


def test_scatters():
    got = ember.select_scatter(t(X), ember.zeros(3, dtype=ember.float64), 1, -1)
    exp = X.copy()
    exp[:, -1] = 0
    same(got, exp)
    got = ember.slice_scatter(t(X), ember.zeros(3, 2, dtype=ember.float64), 1, 0, None, 2)
    exp = X.copy()
    exp[:, ::2] = 0
    same(got, exp)
    got = ember.diagonal_scatter(t(X), ember.ones(3, dtype=ember.float64), 1)
    exp = X.copy()
    exp[[0, 1, 2], [1, 2, 3]] = 1
    same(got, exp)
    grad_ok(lambda a, b: ember.diagonal_scatter(a, b, -1), dbl(3, 4), dbl(2, seed=1))
    grad_ok(lambda a, b: ember.slice_scatter(a, b, 0, 1), dbl(3, 4), dbl(2, 4, seed=1))


def test_index_grids_and_blocks():
    same(ember.tril_indices(3, 4, 1), np.array(np.tril_indices(3, 1, 4)))
    same(ember.triu_indices(4, 3, -1), np.array(np.triu_indices(4, -1, 3)))
    same(
        ember.block_diag(ember.tensor(1), ember.tensor([[2.0, 3.0]]), ember.tensor([4, 5])),
        [[1, 0, 0, 0, 0], [0, 2, 3, 0, 0], [0, 0, 0, 4, 5]],
    )
    same(ember.cartesian_prod(ember.tensor([1, 2]), ember.tensor([3, 4])), [[1, 3], [1, 4], [2, 3], [2, 4]])
    same(ember.combinations(ember.tensor([1, 2, 3, 4]), 3), [[1, 2, 3], [1, 2, 4], [1, 3, 4], [2, 3, 4]])
    same(ember.combinations(ember.tensor([1.0, 2.0]), with_replacement=True), [[1, 1], [1, 2], [2, 2]])
    assert ember.combinations(ember.tensor([1, 2]), 3).shape == (0, 3)
    same(ember.vander(ember.tensor([1, 2, 3])), np.vander([1, 2, 3]))
    same(ember.vander(ember.tensor([1.0, 2.0]), 4, True), np.vander([1.0, 2.0], 4, True))
    grad_ok(lambda a, b: ember.block_diag(a, b), dbl(2, 2), dbl(1, 3, seed=1))


def test_isin_isreal():
    i = ember.tensor([[12, -18, 0], [7, 0, 5]])
    same(ember.isin(i, ember.tensor([0, 5, 12])), np.isin(i.cpu().numpy(), [0, 5, 12]))
    same(ember.isin(i, ember.tensor([0, 5]), invert=True), ~np.isin(i.cpu().numpy(), [0, 5]))
    same(ember.isin(i, 5), i.cpu().numpy() == 5)
    same(ember.isreal(ember.tensor([1 + 0j, 1j])), [True, False])


def test_histogram_cov_trapezoid():
    h, e = ember.histogram(t(X), 4)
    nh, ne = np.histogram(X, 4)
    close(h, nh)
    close(e, ne)
    h, e = ember.histogram(t(X), 3, range=(-1.0, 1.0), density=True)
    close(h, np.histogram(X, 3, (-1, 1), density=True)[0])
    h, _ = ember.histogram(t(X), t(np.array([-2.0, 0.0, 0.5, 3.0])), weight=t(np.abs(X)))
    close(h, np.histogram(X, [-2.0, 0.0, 0.5, 3.0], weights=np.abs(X))[0])
    close(ember.cov(t(X)), np.cov(X))
    close(ember.cov(t(X), correction=0), np.cov(X, bias=True))
    fw, aw = np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 1.0])
    close(ember.cov(t(X), fweights=t(fw), aweights=t(aw)), np.cov(X, fweights=fw, aweights=aw))
    close(ember.cov(t(X[0])), np.cov(X[0]))
    close(ember.corrcoef(t(X)), np.corrcoef(X))
    xs = np.array([0.0, 1.0, 3.0, 4.0])
    close(ember.trapezoid(t(X), t(xs)), np.trapezoid(X, xs))
    close(ember.trapz(t(X), dx=0.5, dim=0), np.trapezoid(X, dx=0.5, axis=0))
    from scipy.integrate import cumulative_trapezoid

    close(ember.cumulative_trapezoid(t(X), t(xs)), cumulative_trapezoid(X, xs))
    grad_ok(lambda a: ember.cov(a), dbl(2, 5))
    grad_ok(lambda a: ember.trapezoid(a, dx=0.3), dbl(2, 5))


def test_math_more():
    i = ember.tensor([[12, -18, 0], [7, 0, 5]])
    o = ember.tensor([8, 12, 0])
    same(ember.gcd(i, o), np.gcd(i.cpu().numpy(), o.cpu().numpy()))
    same(ember.lcm(i, o), np.lcm(i.cpu().numpy(), o.cpu().numpy()))
    m, e = ember.frexp(ember.tensor([8.0, -0.3, 0.0, 1.0, 0.75, 1e-40]))
    nm, ne = np.frexp(np.float32([8.0, -0.3, 0.0, 1.0, 0.75, 1e-40]))
    same(m, nm)
    same(e, ne.astype(np.int32))
    close(ember.ldexp(ember.tensor([1.0, 3.0]), ember.tensor([2, -1])), [4.0, 1.5])
    same(ember.heaviside(ember.tensor([-1.0, 0.0, 2.0]), ember.tensor([0.5])), [0.0, 0.5, 1.0])
    same(
        ember.nextafter(ember.tensor([1.0, 0.0]), ember.tensor([2.0, -1.0])),
        np.nextafter(np.float32([1, 0]), np.float32([2, -1])),
    )
    close(ember.deg2rad(ember.tensor([180, 90])), [np.pi, np.pi / 2])
    close(ember.rad2deg(t(X)), np.rad2deg(X))
    close(ember.clamp_min(t(X), 0.1), np.maximum(X, 0.1))
    close(t(X).clamp_max(0.2), np.minimum(X, 0.2))
    close(
        ember.renorm(t(X), 2, 0, 1.0),
        X * np.minimum(1, 1.0 / (np.linalg.norm(X, axis=1, keepdims=True) + 1e-7)),
    )
    with pytest.raises(RuntimeError):
        ember.gcd(ember.tensor([1.0]), ember.tensor([2.0]))
    grad_ok(lambda a: ember.renorm(a, 2, 1, 0.5), dbl(3, 4))


def test_old_linalg_functions():
    close(ember.det(t(M)), np.linalg.det(M))
    close(t(M).det(), np.linalg.det(M))
    close(ember.logdet(t(SPD)), np.log(np.linalg.det(SPD)))
    assert np.isnan(ember.logdet(t(-SPD)).item())
    close(ember.inverse(t(M)), np.linalg.inv(M))
    close(t(M).inverse(), np.linalg.inv(M))
    close(ember.pinverse(t(X)), np.linalg.pinv(X))
    close(ember.matrix_power(t(M), 3), np.linalg.matrix_power(M, 3))
    close(ember.cholesky(t(SPD)), np.linalg.cholesky(SPD))
    close(t(SPD).cholesky(upper=True), np.linalg.cholesky(SPD).T)
    U, S, V = ember.svd(t(X))
    close(U @ ember.diag(S) @ V.mT, X)
    assert V.shape == (4, 3)
    Q, R = ember.qr(t(X.T))
    close(Q @ R, X.T)
    L = np.linalg.cholesky(SPD)
    close(ember.cholesky_solve(t(X[:, :2]), t(L)), np.linalg.solve(SPD, X[:, :2]))
    close(ember.cholesky_solve(t(X[:, :2]), t(L.T), upper=True), np.linalg.solve(SPD, X[:, :2]))
    close(ember.cholesky_inverse(t(L)), np.linalg.inv(SPD))
    sol, coef = ember.triangular_solve(t(X[:, :2]), t(M))
    close(sol, np.linalg.solve(np.triu(M), X[:, :2]))
    same(coef, M)
    unit_lower = np.tril(M, -1) + np.eye(3)
    close(
        ember.triangular_solve(t(X[:, :2]), t(M), upper=False, transpose=True, unitriangular=True).solution,
        np.linalg.solve(unit_lower.T, X[:, :2]),
    )
    close(ember.linalg.solve_triangular(t(M), t(X), upper=True), np.linalg.solve(np.triu(M), X))
    close(
        ember.linalg.solve_triangular(t(M), t(X.T), upper=False, left=False), X.T @ np.linalg.inv(np.tril(M))
    )
    res = ember.linalg.solve_ex(ember.zeros(2, 2), ember.ones(2, 1))
    assert res.info.item() == 1
    eye3 = 3 * ember.eye(3, dtype=ember.float64)
    grad_ok(
        lambda a: ember.linalg.solve_triangular(a + eye3, ember.ones(3, 1, dtype=ember.float64), upper=True),
        dbl(3, 3),
    )
    grad_ok(lambda a: ember.logdet(a @ a.mT + ember.eye(3, dtype=ember.float64)), dbl(3, 3))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nextafter_matches_numpy(dtype):
    rng = np.random.default_rng(2)
    special = [1.0, 0.0, -0.0, 2.0, -2.0, 0.5, 1e-6, -3.5, 65504.0, np.inf, -np.inf, np.nan, 1.0]
    targets = [2.0, -1.0, 1.0, 0.0, 0.0, 1.0, 0.0, -10.0, np.inf, 0.0, 0.0, 1.0, 1.0]
    x = np.concatenate([special, rng.normal(size=100) * 10.0 ** rng.integers(-30, 30, 100)]).astype(dtype)
    y = np.concatenate([targets, rng.normal(size=100)]).astype(dtype)
    with np.errstate(all="ignore"):
        same(ember.nextafter(ember.tensor(x), ember.tensor(y)), np.nextafter(x, y))
