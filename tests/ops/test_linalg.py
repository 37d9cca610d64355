"""ember.linalg against NumPy/SciPy (batched, float64), gradients by gradcheck."""

from __future__ import annotations

import ember
import numpy as np
import pytest
import scipy.linalg as sl
from _opsref import close, dbl, grad_ok, same

# Composites without a kernel on the primitives-only test backend warn once (by design).
pytestmark = pytest.mark.filterwarnings("ignore:.*has no kernel.*:RuntimeWarning")

L = ember.linalg
RNG = np.random.default_rng(11)
A = RNG.normal(size=(2, 3, 3))
B = RNG.normal(size=(2, 3, 2))
SPD = A @ A.transpose(0, 2, 1) + 3 * np.eye(3)


def t(a):
    return ember.tensor(a)


def test_det_inv_solve(cpu_prims):
    for dev in ("cpu", cpu_prims):
        x = ember.tensor(A, device=dev)
        close(L.det(x), np.linalg.det(A), rtol=1e-10)
        close(L.inv(x), np.linalg.inv(A), rtol=1e-10)
        close(L.solve(x, ember.tensor(B, device=dev)), np.linalg.solve(A, B), rtol=1e-10)
    sign, logabs = L.slogdet(t(A))
    ns, nl = np.linalg.slogdet(A)
    close(sign, ns)
    close(logabs, nl)
    close(L.solve(t(A), t(B[..., 0])), np.linalg.solve(A, B[..., :1])[..., 0])
    close(L.solve(t(A[0]), t(B)), np.linalg.solve(A[0], B))
    close(
        L.solve(t(A), t(B.transpose(0, 2, 1)), left=False),
        np.linalg.solve(A.transpose(0, 2, 1), B).transpose(0, 2, 1),
    )
    close(L.det(ember.tensor(A, dtype=ember.float32)), np.linalg.det(A), rtol=1e-5)
    assert L.det(ember.zeros(0, 2, 2)).shape == (0,)


def test_qr_grad_unsupported_modes():
    with pytest.raises(NotImplementedError):
        L.qr(dbl(2, 3), mode="r")


def test_errors():
    with pytest.raises(L.LinAlgError):
        L.inv(ember.zeros(2, 2))
    assert issubclass(L.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError, match="square"):
        L.inv(ember.zeros(2, 3))
    with pytest.raises(RuntimeError, match="floating point"):
        L.det(ember.zeros(2, 2, dtype=ember.int64))
    with pytest.raises(L.LinAlgError):
        L.cholesky(-ember.eye(2))
    res = L.inv_ex(ember.zeros(2, 2))
    assert res.info.item() == 1
    assert L.cholesky_ex(ember.eye(2)).info.item() == 0


def test_factorisations():
    close(L.cholesky(t(SPD)), np.linalg.cholesky(SPD))
    close(L.cholesky(t(SPD), upper=True), np.linalg.cholesky(SPD).transpose(0, 2, 1))
    q, r = L.qr(t(B))
    close(q @ r, B)
    close(q.mT @ q, np.broadcast_to(np.eye(2), (2, 2, 2)), atol=1e-12)
    assert L.qr(t(B), mode="complete").Q.shape == (2, 3, 3)
    w, v = L.eigh(t(SPD))
    close(w, np.linalg.eigh(SPD)[0])
    close(v @ ember.diag_embed(w) @ v.mT, SPD)
    close(L.eigvalsh(t(SPD)), np.linalg.eigvalsh(SPD))
    w, v = L.eig(t(A))
    assert w.dtype == ember.complex128
    close(t(A + 0j) @ v, v * w.unsqueeze(-2))
    close(np.sort_complex(L.eigvals(t(A[0])).cpu().numpy()), np.sort_complex(np.linalg.eigvals(A[0])))
    U, S, Vh = L.svd(t(B), full_matrices=False)
    close(S, np.linalg.svd(B, compute_uv=False))
    close(U @ ember.diag_embed(S) @ Vh, B)
    assert L.svd(t(B)).U.shape == (2, 3, 3)
    close(L.svdvals(t(A)), np.linalg.svd(A, compute_uv=False))
    close(L.matrix_exp(t(A)), np.stack([sl.expm(a) for a in A]), rtol=1e-10)


def test_norms():
    for o in ["fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")]:
        close(L.matrix_norm(t(B), o), np.linalg.norm(B, o, axis=(-2, -1)), rtol=1e-10)
        close(L.norm(t(B[0]), o), np.linalg.norm(B[0], o), rtol=1e-10)
    for o in [0, 1, 2, 3.5, float("inf"), -float("inf")]:
        close(L.vector_norm(t(B), o, dim=1), np.linalg.norm(B, o, axis=1), rtol=1e-10)
    close(L.vector_norm(t(B)), np.linalg.norm(B.reshape(-1)))
    close(L.norm(t(B), dim=(1, 2)), np.linalg.norm(B, axis=(1, 2)))
    close(L.vector_norm(t(3 + 4j)), 5.0)
    close(L.matrix_norm(t(B), keepdim=True), np.linalg.norm(B, axis=(1, 2), keepdims=True))


def test_derived():
    close(L.pinv(t(B)), np.linalg.pinv(B), rtol=1e-10)
    same(L.matrix_rank(t(B)), [2, 2])
    same(L.matrix_rank(ember.tensor([[1.0, 2.0], [2.0, 4.0]])), 1)
    close(L.cond(t(A)), np.linalg.cond(A), rtol=1e-10)
    close(L.cond(t(A), 1), np.linalg.cond(A, 1), rtol=1e-10)
    for n in (-2, 0, 1, 3):
        close(L.matrix_power(t(A), n), np.linalg.matrix_power(A, n), rtol=1e-10)
    close(L.lstsq(t(B[0]), t(A[0])).solution, np.linalg.lstsq(B[0], A[0], rcond=None)[0], rtol=1e-10)
    close(L.multi_dot([t(A[0]), t(A[1]), t(B[0])]), A[0] @ A[1] @ B[0])
    close(L.multi_dot([t(A[0, 0]), t(A[1]), t(A[0, :, 0])]), A[0, 0] @ A[1] @ A[0, :, 0])
    T = RNG.normal(size=(4, 6))
    Tinv = L.tensorinv(t(np.linalg.qr(RNG.normal(size=(6, 6)))[0].reshape(6, 2, 3)), 1)
    assert Tinv.shape == (2, 3, 6)
    X = RNG.normal(size=(2, 3, 6))
    close(L.tensorsolve(t(X), t(T[:2, :3])), np.linalg.tensorsolve(X, T[:2, :3]), rtol=1e-9)
    close(L.vander(t(np.array([1.0, 2.0, 3.0]))), np.vander([1.0, 2.0, 3.0], increasing=True))
    close(L.vecdot(t(A), t(A), dim=-1), (A * A).sum(-1))
    h = RNG.normal(size=(4, 2))
    tau = np.array([1.2, 0.7])
    got = L.householder_product(t(h), t(tau))
    exp = np.eye(4)
    for i in range(2):
        v = np.concatenate([np.zeros(i), [1.0], h[i + 1 :, i]])
        exp = exp @ (np.eye(4) - tau[i] * np.outer(v, v))
    close(got, exp[:, :2])


def _sym(a):
    return a + a.mT


GRADS = {
    "det": L.det,
    "inv": L.inv,
    "slogdet": lambda a: L.slogdet(a).logabsdet,
    "solve": lambda a: L.solve(a, a[..., :1] * 2 + 1),
    "cholesky": lambda a: L.cholesky(_sym(a) @ _sym(a).mT + ember.eye(3, dtype=ember.float64)),
    "eigh_values": lambda a: L.eigh(_sym(a)).eigenvalues,
    "eigh_vectors": lambda a: L.eigh(_sym(a)).eigenvectors.abs(),
    "svdvals": L.svdvals,
    "svd_U": lambda a: L.svd(a[..., :2], full_matrices=False).U.abs(),
    "svd_Vh": lambda a: L.svd(a[..., :2, :], full_matrices=False).Vh.abs(),
    "matrix_exp": L.matrix_exp,
    "pinv": lambda a: L.pinv(a[..., :2]),
    "norm_nuc": lambda a: L.matrix_norm(a, "nuc"),
    "vector_norm": lambda a: L.vector_norm(a, 3, dim=-1),
    "lstsq": lambda a: L.lstsq(a, a[..., :1] + 1).solution,
    "eigvals": lambda a: L.eigvals(a).abs(),
    "qr_Q": lambda a: L.qr(a[..., :2]).Q,
    "qr_R": lambda a: L.qr(a).R,
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients(name):
    grad_ok(GRADS[name], dbl(2, 3, 3, seed=5))


def _first_grad(f, x):
    leaf = x.detach().requires_grad_()
    (g,) = ember.autograd.grad(f(leaf), leaf, create_graph=True)
    return leaf, g


@pytest.mark.parametrize("name", ["inv", "det", "matrix_exp", "eigh_values"])
def test_second_order(name):
    """d/dx <grad f(x), v> by autograd against central differences of grad f."""
    fn = GRADS[name]
    x = dbl(3, 3, seed=2).detach()
    v = dbl(3, 3, seed=4).detach()
    leaf, g = _first_grad(lambda a: fn(a + 3 * ember.eye(3, dtype=ember.float64)).sum(), x)
    (hv,) = ember.autograd.grad((g * v).sum(), leaf)
    eps = 1e-6
    num = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            d = np.zeros((3, 3))
            d[i, j] = eps
            gp = _first_grad(lambda a: fn(a + 3 * ember.eye(3, dtype=ember.float64)).sum(), x + t(d))[1]
            gm = _first_grad(lambda a: fn(a + 3 * ember.eye(3, dtype=ember.float64)).sum(), x - t(d))[1]
            num[i, j] = ((gp - gm) * v).sum().item() / (2 * eps)
    close(hv, num, rtol=1e-4, atol=1e-6)


def test_lu_family():
    S = ember.tensor([[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [1.0, 1.0, 1.0]])
    LU, piv = L.lu_factor(S)  # recorded from PyTorch 2.13
    close(LU, [[1.0, 1.0, 1.0], [0.0, 3.0, 4.0], [0.0, 0.3333333432674408, 0.6666666269302368]], rtol=1e-6)
    same(piv, np.int32([3, 2, 3]))
    res = L.lu_factor_ex(ember.tensor([[1.0, 2.0], [2.0, 4.0]]))
    close(res.LU, [[2.0, 4.0], [0.5, 0.0]])
    assert res.info.item() == 2 and res.info.dtype == ember.int32
    with pytest.raises(RuntimeError):
        L.lu_factor(ember.tensor([[1.0, 2.0], [2.0, 4.0]]))
    for shape in [(2, 4, 4), (3, 5), (5, 3)]:
        a = RNG.normal(size=shape)
        P, Lo, U = L.lu(t(a))
        close(P @ Lo @ U, a, rtol=1e-10, atol=1e-12)
        sp = sl.lu(a[0] if a.ndim == 3 else a)
        close((P[0] if a.ndim == 3 else P), sp[0])
    LU, piv = L.lu_factor(t(A))
    close(L.lu_solve(LU, piv, t(B)), np.linalg.solve(A, B), rtol=1e-10)
    close(L.lu_solve(LU, piv, t(B), adjoint=True), np.linalg.solve(A.transpose(0, 2, 1), B), rtol=1e-10)
    close(
        L.lu_solve(LU, piv, t(B.transpose(0, 2, 1)), left=False),
        np.linalg.solve(A.transpose(0, 2, 1), B).transpose(0, 2, 1),
        rtol=1e-10,
    )
    LU1, piv1 = t(A[0]).lu()
    close(t(B[0]).lu_solve(LU1, piv1), np.linalg.solve(A[0], B[0]), rtol=1e-10)
    P, Lo, U = ember.lu_unpack(LU1, piv1)
    close(P @ Lo @ U, A[0])
    grad_ok(lambda a: L.lu(a).U, dbl(3, 3, seed=8))
    grad_ok(lambda a: L.lu(a).L, dbl(3, 3, seed=8))
    grad_ok(lambda a: L.lu_solve(*L.lu_factor(a), ember.ones(3, 1, dtype=ember.float64)), dbl(3, 3, seed=9))
