"""Products against NumPy: add* family, tensordot, kron, cross, einsum."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _opsref import close, dbl, grad_ok

RNG = np.random.default_rng(3)


def r(*shape):
    return RNG.normal(size=shape)


def t(a):
    return ember.tensor(a)


def test_vector_products():
    a, b = r(4), r(4)
    close(ember.vdot(t(a + 1j * b), t(b + 0j)), np.vdot(a + 1j * b, b))
    close(ember.inner(t(a), t(b)), np.inner(a, b))
    A, B = r(2, 3), r(4, 3)
    close(ember.inner(t(A), t(B)), np.inner(A, B))
    close(ember.outer(t(a), t(b)), np.outer(a, b))
    close(t(a).ger(t(b)), np.outer(a, b))
    with pytest.raises(RuntimeError):
        ember.vdot(t(A), t(B))


def test_add_family():
    M, m1, m2, v = r(3, 4), r(3, 2), r(2, 4), r(4)
    close(ember.addmm(t(M), t(m1), t(m2), beta=0.5, alpha=2), 0.5 * M + 2 * m1 @ m2)
    close(ember.addmm(t(np.full((3, 4), np.nan)), t(m1), t(m2), beta=0), m1 @ m2)
    close(ember.addmv(t(M[:, 0]), t(M), t(v)), M[:, 0] + M @ v)
    close(ember.addr(t(M), t(np.ones(3)), t(v)), M + np.outer(np.ones(3), v))
    b1, b2 = r(5, 3, 2), r(5, 2, 4)
    close(ember.baddbmm(t(M), t(b1), t(b2), alpha=0.5), M + 0.5 * b1 @ b2)
    close(ember.addbmm(t(M), t(b1), t(b2)), M + (b1 @ b2).sum(0))
    x = t(M.copy())
    x.addmm_(t(m1), t(m2))
    close(x, M + m1 @ m2)
    grad_ok(
        lambda a, b, c: ember.addmm(a, b, c, beta=0.3, alpha=1.5),
        dbl(3, 4),
        dbl(3, 2, seed=1),
        dbl(2, 4, seed=2),
    )


def test_tensordot_kron_cross():
    A, B = r(2, 3, 4), r(4, 3, 5)
    close(ember.tensordot(t(A), t(B), ([1, 2], [1, 0])), np.tensordot(A, B, ([1, 2], [1, 0])))
    close(ember.tensordot(t(A), t(B[:, :, 0].T.copy()), 2), np.tensordot(A, B[:, :, 0].T, 2))
    close(ember.tensordot(t(A), t(B), 0), np.tensordot(A, B, 0))
    close(ember.kron(t(A[0]), t(B[0])), np.kron(A[0], B[0]))
    u, w = r(4, 3), r(4, 3)
    close(ember.cross(t(u), t(w), dim=1), np.cross(u, w))
    close(ember.linalg.cross(t(u), t(w[:1])), np.cross(u, w[:1]))
    with pytest.raises(RuntimeError):
        ember.tensordot(t(A), t(B), ([0], [0]))


EQUATIONS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->ji", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...i,i", [(2, 3, 4), (4,)]),
    ("bij,bkj,bk->bi", [(2, 3, 4), (2, 5, 4), (2, 5)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("i,i,i->", [(3,), (3,), (3,)]),
    ("ab,cd->", [(2, 3), (4, 5)]),
]


@pytest.mark.parametrize("eq,shapes", EQUATIONS, ids=[e[0] for e in EQUATIONS])
def test_einsum(eq, shapes):
    arrays = [r(*s) for s in shapes]
    close(ember.einsum(eq, *[t(a) for a in arrays]), np.einsum(eq, *arrays), rtol=1e-10, atol=1e-12)
    close(ember.einsum(eq, [t(a) for a in arrays]), np.einsum(eq, *arrays), rtol=1e-10, atol=1e-12)


def test_einsum_grad_and_errors():
    grad_ok(lambda a, b: ember.einsum("bij,bjk->bik", a, b), dbl(2, 2, 3), dbl(2, 3, 2, seed=1))
    grad_ok(lambda a: ember.einsum("ii->", a), dbl(3, 3))
    with pytest.raises(RuntimeError):
        ember.einsum("ij,jk", t(r(2, 3)))
    with pytest.raises(RuntimeError):
        ember.einsum("ijk", t(r(2, 3)))
