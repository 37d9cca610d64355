"""Decompositions of the linear-algebra composites into primitives, batched over leading dims.

Elimination with partial pivoting (``det``, ``slogdet``, ``solve``, ``inv``), column-wise
Cholesky, Householder reflections (``qr``, ``householder_product``, LAPACK's conventions)
and scaling and squaring with a Taylor series (``matrix_exp``). Each loop runs over the
matrix size n, each step a few whole-batch primitive calls. A singular or indefinite
matrix is found with one host read at the end and raises as the CPU kernel does.
"""

from __future__ import annotations

import math

from ember.backends import dtypes as D

from ._creation import arange, eye, zeros
from ._ops._composite import decomposition
from ._ops.join import cat
from ._ops.pointwise_unary import abs, log, sqrt
from ._ops.select import where
from ._tensor import Tensor

__all__ = ["conj_if_complex", "geqrf_q", "lu_diagonal", "mH", "qr_complete", "real_part", "solve"]

_TAYLOR_TERMS = 18  # for ||A|| <= 1/2: 0.5^19 / 19! ~ 2e-23


def _rows(A: Tensor) -> Tensor:
    return arange(A._shape[-2], device=A._device)


def conj_if_complex(x: Tensor) -> Tensor:
    return x.conj_physical() if x.dtype.is_complex else x


def mH(x: Tensor) -> Tensor:
    return conj_if_complex(x.mT)


def real_part(x: Tensor) -> Tensor:
    return x.real if x.dtype.is_complex else x


def _pivot(M: Tensor, j: int, ar: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Swap row j with the row (>= j) of the largest |M[:, j]|: (M, pivot row, its magnitude)."""
    col = abs(M[..., :, j])
    col = where(ar >= j, col, -1.0)
    p = col.argmax(-1)
    pp = p.unsqueeze(-1)
    perm = where(ar == j, pp, where(ar == pp, j, ar))
    M = M.gather(-2, perm.unsqueeze(-1).expand(M._shape))
    return M, p, col.amax(-1)


def _eliminate(M: Tensor, j: int, ar: Tensor, below_only: bool) -> tuple[Tensor, Tensor]:
    """Zero column j outside row j (below it only for LU); (M, zero-pivot flags)."""
    piv = M[..., j, j]
    zero = piv == 0
    safe = where(zero, 1.0, piv)
    keep = ar > j if below_only else ar != j
    f = where(keep, M[..., :, j] / safe.unsqueeze(-1), 0.0)
    f = where(zero.unsqueeze(-1), 0.0, f)
    return M - f.unsqueeze(-1) * M[..., j : j + 1, :], zero


def lu_diagonal(A: Tensor) -> tuple[Tensor, Tensor]:
    """(diagonal of U, permutation sign) of A's LU factorisation with partial pivoting."""
    n = A._shape[-1]
    ar = _rows(A)
    M, sign = A, zeros(A._shape[:-2], dtype=A.dtype, device=A._device) + 1
    for j in range(n):
        M, p, _ = _pivot(M, j, ar)
        sign = where(p != j, -sign, sign)
        M, _ = _eliminate(M, j, ar, below_only=True)
    return M.diagonal(0, -2, -1), sign


def _singular(flag: Tensor) -> None:
    if flag.numel() and bool(flag.any().item()):
        raise RuntimeError("linalg: Singular matrix")


def solve(A: Tensor, B: Tensor) -> Tensor:
    """Gauss-Jordan elimination with partial pivoting on [A | B]."""
    n = A._shape[-1]
    ar = _rows(A)
    M = cat([A, B], -1)
    bad = zeros(A._shape[:-2], dtype=D.bool_, device=A._device)
    for j in range(n):
        M, _, _ = _pivot(M, j, ar)
        M, zero = _eliminate(M, j, ar, below_only=False)
        bad = bad | zero
    _singular(bad)
    d = M.diagonal(0, -2, -1)[..., :n]
    return M[..., :, n:] / d.unsqueeze(-1)


@decomposition("linalg_det")
def _det(A: Tensor) -> Tensor:
    d, sign = lu_diagonal(A)
    return d.prod(-1) * sign


@decomposition("linalg_slogdet")
def _slogdet(A: Tensor) -> tuple[Tensor, Tensor]:
    d, sign = lu_diagonal(A)
    mag = abs(d)
    unit = where(mag == 0, 0.0, d / where(mag == 0, 1.0, mag).to(d.dtype))
    return unit.prod(-1) * sign, log(mag).sum(-1)


@decomposition("linalg_solve")
def _solve(A: Tensor, B: Tensor) -> Tensor:
    return solve(A, B)


@decomposition("linalg_inv")
def _inv(A: Tensor) -> Tensor:
    n = A._shape[-1]
    I = eye(n, dtype=A.dtype, device=A._device).expand(A._shape)
    return solve(A, I)


@decomposition("linalg_cholesky")
def _cholesky(A: Tensor, upper: bool) -> Tensor:
    """L column by column: L[:, j] = (A[:, j] - L L[j, :]^H) / L[j, j] below the diagonal."""
    n = A._shape[-1]
    ar = _rows(A)
    L = A * 0
    bad = zeros(A._shape[:-2], dtype=D.bool_, device=A._device)
    for j in range(n):
        c = A[..., :, j] - (L @ conj_if_complex(L[..., j, :]).unsqueeze(-1)).squeeze(-1)
        cj = real_part(c[..., j])
        bad = bad | ~(cj > 0)
        d = sqrt(where(cj > 0, cj, 1.0)).to(A.dtype)
        col = where(ar > j, c / d.unsqueeze(-1), where(ar == j, d.unsqueeze(-1), 0.0))
        L = where(ar == j, col.unsqueeze(-1), L)
    if bad.numel() and bool(bad.any().item()):
        raise RuntimeError("linalg: Matrix is not positive definite")
    return mH(L).contiguous() if upper else L


def _reflector(v: Tensor, tau: Tensor, X: Tensor) -> Tensor:
    """(I - tau v v^H) X for vectors v (..., m) and scalars tau (...)."""
    vh_x = conj_if_complex(v).unsqueeze(-2) @ X
    return X - (tau.unsqueeze(-1).unsqueeze(-1) * v.unsqueeze(-1)) @ vh_x


def _householder(A: Tensor, tau: Tensor, cols: int) -> Tensor:
    """The first ``cols`` columns of H_0 H_1 ... H_(k-1), H_i = I - tau_i v_i v_i^H."""
    m = A._shape[-2]
    ar = _rows(A)
    Q = eye(m, cols, dtype=A.dtype, device=A._device).expand(A._shape[:-2] + (m, cols))
    for i in range(tau._shape[-1] - 1, -1, -1):
        v = where(ar == i, 1.0, where(ar > i, A[..., :, i], 0.0))
        Q = _reflector(v, tau[..., i], Q)
    return Q.contiguous()


@decomposition("linalg_householder_product")
def _householder_product(A: Tensor, tau: Tensor) -> Tensor:
    return _householder(A, tau, A._shape[-1])


def _geqrf(A: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """LAPACK's geqrf by Householder reflections: (R, reflector vectors as columns, tau)."""
    m, n = A._shape[-2:]
    k = min(m, n)
    ar = _rows(A)
    R, vs, taus = A, [], []
    for j in range(k):
        x = where(ar >= j, R[..., :, j], 0.0)
        alpha = R[..., j, j]
        below = where(ar > j, x, 0.0)
        xnorm = sqrt((real_part(below * conj_if_complex(below))).sum(-1))
        ar_, ai = real_part(alpha), (alpha.imag if alpha.dtype.is_complex else alpha * 0)
        trivial = (xnorm == 0) & (ai == 0)
        beta = -where(ar_ >= 0, 1.0, -1.0) * sqrt(ar_ * ar_ + ai * ai + xnorm * xnorm)
        beta = where(trivial, 1.0, beta)
        tau = where(trivial, 0.0, ((beta - alpha) / beta.to(A.dtype)))
        scale = where(trivial, 1.0, alpha - beta.to(A.dtype))
        v = where(ar == j, 1.0, below / scale.unsqueeze(-1))
        R = _reflector(v, conj_if_complex(tau), R)  # H^H R
        # Exact zeros below the pivot: later reflectors then leave this column's lower part at 0.
        R = where((ar > j).unsqueeze(-1) & (arange(n, device=A._device) == j), 0.0, R)
        vs.append(v.unsqueeze(-1))
        taus.append(tau.unsqueeze(-1))
    if not k:
        return R, A[..., :, :0], zeros(A._shape[:-2] + (0,), dtype=A.dtype, device=A._device)
    return R, cat(vs, -1), cat(taus, -1)


def qr_complete(A: Tensor) -> tuple[Tensor, Tensor]:
    """(Q, R) of A's Householder QR, Q square."""
    R, V, tau = _geqrf(A)
    return _householder(V, tau, A._shape[-2]), R.triu()


def geqrf_q(A: Tensor, cols: int) -> Tensor:
    """The first ``cols`` columns of the unitary Q of A's Householder QR (cols <= m)."""
    _, V, tau = _geqrf(A)
    return _householder(V, tau, cols)


@decomposition("linalg_qr")
def _qr(A: Tensor, mode: str) -> tuple[Tensor, Tensor]:
    m, n = A._shape[-2:]
    k = min(m, n)
    R, V, tau = _geqrf(A)
    R = R.triu()
    if mode == "r":
        return zeros((0,), dtype=A.dtype, device=A._device), R[..., :k, :].contiguous()
    if mode == "complete":
        return _householder(V, tau, m), R.contiguous()
    return _householder(V, tau, k), R[..., :k, :].contiguous()


@decomposition("linalg_matrix_exp")
def _matrix_exp(A: Tensor) -> Tensor:
    """exp(A) = exp(A / 2^s)^(2^s) with ||A / 2^s||_1 <= 1/2 and a Taylor series."""
    n = A._shape[-1]
    if A.numel() == 0:
        return A.clone()
    norm = float(abs(A).sum(-2).amax().item())
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 and math.isfinite(norm) else 0
    X = A / (2.0**s)
    I = eye(n, dtype=A.dtype, device=A._device).expand(A._shape)
    out = I
    for k in range(_TAYLOR_TERMS, 0, -1):  # Horner: I + X/1 (I + X/2 (I + ...))
        out = I + (X @ out) / k
    for _ in range(s):
        out = out @ out
    return out
