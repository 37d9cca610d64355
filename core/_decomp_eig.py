"""Decomposition of the general eigenproblem ``eig`` into primitives (batched).

The complex Schur form by the shifted QR algorithm (Wilkinson shifts from each matrix's
active trailing 2x2 block, an exceptional shift after 10 steps without progress, deflation of
the last active row once it is negligible), then the eigenvectors of the triangular factor
by back substitution, mapped back by Q and normalised as LAPACK does (unit norm, largest
component real). Every batch element steps at once; which rows have deflated is read back
once a step. Each step is one Householder QR of the whole n x n matrix: meant for the small
and medium matrices of a backend without a linear-algebra kernel.
"""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from ._creation import arange, eye, tensor
from ._decomp_linalg import qr_complete
from ._ops._composite import decomposition
from ._ops.pointwise_unary import abs, sqrt
from ._ops.select import where
from ._tensor import Tensor

__all__ = ["schur"]

_STEPS_PER_EIGENVALUE = 30
_EXCEPTIONAL_EVERY = 10


def _eps(dtype: Any) -> float:
    return 2.2e-16 if dtype is D.complex128 else 1.2e-7


def _wilkinson(a: Tensor, b: Tensor, c: Tensor, d: Tensor) -> Tensor:
    """The eigenvalue of [[a, b], [c, d]] nearer to d."""
    half = (a - d) * 0.5
    disc = sqrt(half * half + b * c)
    mid = (a + d) * 0.5
    m1, m2 = mid + disc, mid - disc
    return where(abs(m1 - d) <= abs(m2 - d), m1, m2)


def _entry(T: Tensor, rows: Tensor, cols: Tensor) -> Tensor:
    """T[b, rows[b], cols[b]] for each batch element b (T is (B, n, n))."""
    n = T._shape[-1]
    flat = T.reshape(T._shape[0], n * n)
    return flat.gather(1, (rows * n + cols).unsqueeze(-1)).squeeze(-1)


def _step(T: Tensor, Q: Tensor, shift: Tensor, eye_n: Tensor) -> tuple[Tensor, Tensor]:
    """One shifted QR step, T = R Q' + shift, on every batch element."""
    s = shift.unsqueeze(-1).unsqueeze(-1) * eye_n
    Qk, R = qr_complete(T - s)
    return R @ Qk + s, Q @ Qk


def schur(A: Tensor) -> tuple[Tensor, Tensor]:
    """(T upper triangular, Q unitary) with A = Q T Q^H, for complex A of shape (B, n, n)."""
    B, n = A._shape[0], A._shape[-1]
    eye_n = eye(n, dtype=A.dtype, device=A._device)
    ar = arange(n, device=A._device)
    T, Q = A, eye_n.expand(A._shape).contiguous()
    active, stuck = [n] * B, [0] * B
    for _ in range(_STEPS_PER_EIGENVALUE * n):
        if all(a <= 1 for a in active):
            break
        last = tensor([max(a - 1, 1) for a in active], device=A._device)
        # Zero what has deflated: below the diagonal in rows >= each element's active size.
        done = (ar.unsqueeze(-1) > ar) & (
            ar.unsqueeze(-1) >= tensor(active, device=A._device).reshape(B, 1, 1)
        )
        T = where(done, 0.0, T)
        d, c = _entry(T, last, last), _entry(T, last, last - 1)
        a, b = _entry(T, last - 1, last - 1), _entry(T, last - 1, last)
        row = where(
            ar < last.unsqueeze(-1), T.gather(1, last.reshape(B, 1, 1).expand(B, 1, n)).squeeze(1), 0.0
        )
        off = sqrt((abs(row) * abs(row)).sum(-1))
        small = off <= _eps(A.dtype) * (abs(d) + abs(a))
        for i, flag in enumerate(small.tolist()):
            if active[i] > 1 and flag:
                active[i], stuck[i] = active[i] - 1, 0
            else:
                stuck[i] += 1
        kick = tensor([1.0 if s and s % _EXCEPTIONAL_EVERY == 0 else 0.0 for s in stuck], device=A._device)
        shift = _wilkinson(a, b, c, d) + kick.to(A.dtype) * 0.75 * off.to(A.dtype)
        T, Q = _step(T, Q, shift, eye_n)
    strict = ar.unsqueeze(-1) > ar
    return where(strict, 0.0, T), Q


def _triangular_vectors(T: Tensor) -> Tensor:
    """Y upper triangular with T Y = Y diag(T): column k solves (T - T_kk) y = 0, y_k = 1."""
    n = T._shape[-1]
    ar = arange(n, device=T._device)
    diag = T.diagonal(0, -2, -1)
    tiny = _eps(T.dtype) * (abs(diag).amax(-1, keepdim=True) + 1)
    Y = eye(n, dtype=T.dtype, device=T._device).expand(T._shape).contiguous()
    for j in range(n - 2, -1, -1):
        row = where(ar > j, T[..., j, :], 0.0)
        num = (row.unsqueeze(-2) @ Y).squeeze(-2)
        den = T[..., j, j].unsqueeze(-1) - diag
        den = where(abs(den) < tiny, tiny.to(T.dtype), den)
        new = where(ar > j, -num / den, where(ar == j, 1.0, 0.0))
        Y = where((ar == j).unsqueeze(-1), new.unsqueeze(-2), Y)
    return Y


def _normalised(V: Tensor) -> Tensor:
    """Columns of unit norm with their largest component real and positive (LAPACK's zgeev)."""
    mag = abs(V)
    norm = sqrt((mag * mag).sum(-2, keepdim=True))
    big = mag.argmax(-2, keepdim=True)
    lead = V.gather(-2, big)
    phase = abs(lead) / where(abs(lead) == 0, 1.0, lead)
    return V * phase / norm.to(V.dtype)


@decomposition("linalg_eig")
def _eig(A: Tensor) -> tuple[Tensor, Tensor]:
    ct = D.complex128 if A.dtype in (D.float64, D.complex128) else D.complex64
    shape, n = A._shape, A._shape[-1]
    if A.numel() == 0:
        empty = A.to(ct).clone()  # new memory, never A itself
        return empty.diagonal(0, -2, -1).clone(), empty
    flat = A.to(ct).reshape(-1, n, n)
    T, Q = schur(flat)
    V = _normalised(Q @ _triangular_vectors(T))
    w = T.diagonal(0, -2, -1)
    if not A.dtype.is_complex:
        w = _conjugate_pairs(w)
    return w.reshape(shape[:-1]).contiguous(), V.reshape(shape)


def _conjugate_pairs(w: Tensor) -> Tensor:
    """A real matrix's eigenvalues as exact conjugate pairs (and exactly real ones), as LAPACK's
    dgeev gives them: each is averaged with the conjugate of its nearest partner's conjugate."""
    dist = abs(w.unsqueeze(-1) - w.conj_physical().unsqueeze(-2))
    partner = dist.argmin(-1)
    return (w + w.gather(-1, partner).conj_physical()) * 0.5
