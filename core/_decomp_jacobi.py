"""Decompositions of ``eigh``, ``svd`` and ``lstsq`` by Jacobi rotations (batched).

Cyclic Jacobi on the Hermitian matrix (two-sided, for ``eigh``) or on the columns
(one-sided Hestenes, for ``svd``): each rotation is a unitary ``G`` equal to the identity
outside rows/columns p and q, built from whole-batch primitives, so every batch element
rotates at once. Sweeps stop when the off-diagonal part is below 1e-15 (float64) relative
(one host read a sweep). Jacobi methods are as accurate as LAPACK's; each rotation costs
a few (n, n) matmuls, so they suit the small and medium matrices a backend without a
linear-algebra kernel meets; a backend with big matrices registers kernels.
"""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from ._creation import arange, eye, zeros
from ._decomp_linalg import conj_if_complex, geqrf_q, mH, real_part
from ._ops._composite import decomposition
from ._ops.join import cat
from ._ops.pointwise_unary import abs, sqrt
from ._ops.select import where
from ._tensor import Tensor

__all__ = ["jacobi_eigh", "jacobi_svd"]

_MAX_SWEEPS = 40


def _eps(dtype: Any) -> float:
    return 1e-15 if dtype in (D.float64, D.complex128) else 1e-7


def _rotation(n: int, p: int, q: int, c: Tensor, s: Tensor, phase: Tensor, like: Tensor) -> Tensor:
    """G = I except G[p,p] = c, G[p,q] = s, G[q,p] = -s phase, G[q,q] = c phase (batched)."""
    I = eye(n, dtype=like.dtype, device=like._device)
    ar = arange(n, device=like._device)
    rp, rq = (ar == p).unsqueeze(-1), (ar == q).unsqueeze(-1)
    cp, cq = ar == p, ar == q
    c, s, phase = (v.to(like.dtype).unsqueeze(-1).unsqueeze(-1) for v in (c, s, phase))
    G = where(rp & cp, c, I)
    G = where(rp & cq, s, G)
    G = where(rq & cp, -s * phase, G)
    return where(rq & cq, c * phase, G)


def _angle(app: Tensor, aqq: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """(c, s) of the real rotation zeroing the off-diagonal b of [[app, b], [b, aqq]]."""
    tiny = b == 0
    tau = (aqq - app) / (2 * where(tiny, 1.0, b))
    sign = where(tau >= 0, 1.0, -1.0).to(tau.dtype)
    t = sign / (abs(tau) + sqrt(1 + tau * tau))
    t = where(tiny, 0.0, t)
    c = 1 / sqrt(1 + t * t)
    return c, t * c


def _phase(x: Tensor) -> tuple[Tensor, Tensor]:
    """(|x|, conj(x) / |x|) with phase 1 where x is 0 (or x is real: then the sign)."""
    mag = abs(x)
    safe = where(mag == 0, 1.0, mag)
    return mag, where(mag == 0, 1.0, conj_if_complex(x) / safe.to(x.dtype))


def _off(A: Tensor) -> float:
    n = A._shape[-1]
    mask = eye(n, dtype=D.bool_, device=A._device)
    total = (real_part(A * conj_if_complex(A))).sum((-2, -1))
    off = where(mask, 0.0, real_part(A * conj_if_complex(A))).sum((-2, -1))
    return float((off / where(total == 0, 1.0, total)).amax().item()) if off.numel() else 0.0


def jacobi_eigh(A: Tensor) -> tuple[Tensor, Tensor]:
    """(eigenvalues ascending, eigenvectors) of a full Hermitian A."""
    n = A._shape[-1]
    V = eye(n, dtype=A.dtype, device=A._device).expand(A._shape).contiguous()
    for _ in range(_MAX_SWEEPS):
        if n < 2 or _off(A) < _eps(A.dtype) ** 2:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                b, phase = _phase(A[..., p, q])
                c, s = _angle(real_part(A[..., p, p]), real_part(A[..., q, q]), b)
                G = _rotation(n, p, q, c, s, phase, A)
                A = mH(G) @ A @ G
                V = V @ G
    w = real_part(A.diagonal(0, -2, -1))
    order = w.argsort(-1)
    w = w.gather(-1, order)
    V = V.gather(-1, order.unsqueeze(-2).expand(V._shape))
    return w, V


@decomposition("linalg_eigh")
def _eigh(A: Tensor, upper: bool) -> tuple[Tensor, Tensor]:
    half = A.triu(1) if upper else A.tril(-1)
    d = real_part(A.diagonal(0, -2, -1)).to(A.dtype).diag_embed()
    return jacobi_eigh(half + mH(half) + d)


def _orthogonalise(U: Tensor) -> tuple[Tensor, Tensor]:
    """One-sided Jacobi on U's columns: (U with orthogonal columns, the accumulated V)."""
    n = U._shape[-1]
    V = eye(n, dtype=U.dtype, device=U._device).expand(U._shape[:-2] + (n, n)).contiguous()
    for _ in range(_MAX_SWEEPS):
        if n < 2 or _off(mH(U) @ U) < _eps(U.dtype) ** 2:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                up, uq = U[..., :, p], U[..., :, q]
                alpha = real_part(up * conj_if_complex(up)).sum(-1)
                beta = real_part(uq * conj_if_complex(uq)).sum(-1)
                g, phase = _phase((conj_if_complex(up) * uq).sum(-1))
                c, s = _angle(alpha, beta, g)
                G = _rotation(n, p, q, c, s, phase, U)
                U, V = U @ G, V @ G
    return U, V


def jacobi_svd(A: Tensor, full: bool) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S descending, Vh) of A (..., m, n) with m >= n."""
    m, n = A._shape[-2:]
    U, V = _orthogonalise(A)
    S = sqrt(real_part(U * conj_if_complex(U)).sum(-2))
    order = (-S).argsort(-1)
    S = S.gather(-1, order)
    U = U.gather(-1, order.unsqueeze(-2).expand(U._shape))
    V = V.gather(-1, order.unsqueeze(-2).expand(V._shape))
    live = (S > 0).unsqueeze(-2)
    U = where(live, U / where(live, S.unsqueeze(-2), 1.0).to(U.dtype), 0.0)
    # Columns for zero singular values (and, for full, the rest of C^m): a unitary completion.
    Q = geqrf_q(U, m if full else n)
    U = cat([where(live, U, Q[..., :, :n]), Q[..., :, n:]], -1) if full else where(live, U, Q)
    return U, S, mH(V)


@decomposition("linalg_svd")
def _svd(A: Tensor, full_matrices: bool) -> tuple[Tensor, Tensor, Tensor]:
    m, n = A._shape[-2:]
    if m >= n:
        return jacobi_svd(A, full_matrices)
    U, S, Vh = jacobi_svd(mH(A), full_matrices)
    return mH(Vh), S, mH(U)


@decomposition("linalg_lstsq")
def _lstsq(A: Tensor, B: Tensor) -> Tensor:
    """The minimum-norm least-squares solution pinv(A) B (the CPU kernel's), through the SVD."""
    m, n = A._shape[-2:]
    if A.numel() == 0:
        return zeros(A._shape[:-2] + (n, B._shape[-1]), dtype=A.dtype, device=A._device)
    U, S, Vh = _svd(A, False)
    cutoff = S[..., :1] * (1e-15 if A.dtype in (D.float64, D.complex128) else 1e-7) * max(m, n)
    keep = S > cutoff
    inv = where(keep, 1 / where(keep, S, 1.0), 0.0).to(A.dtype)
    return mH(Vh) @ (inv.unsqueeze(-1) * (mH(U) @ B))
