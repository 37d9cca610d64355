"""LU with partial pivoting, written in ember ops (so it is batched, runs on every backend and
is differentiable): ``lu_factor``, ``lu``, ``lu_solve``, ``lu_unpack`` and the older forms.

The elimination is right-looking and unblocked; pivots are the first largest magnitude in
each column, as LAPACK's ``getrf`` picks them.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._ops.join import cat
from .._ops.select import where
from .._public import op, public
from .._tensor import Tensor
from ._decomp import _mH, check_matrix, solve

PUBLIC = public(
    __name__,
    {
        "lu_unpack": op(),
        "old_lu": op("lu", function=False),
        "old_lu_solve": op("lu_solve", function=False),
    },
)
__all__ = [*PUBLIC, "lu", "lu_factor", "lu_factor_ex", "lu_solve"]

_lu_factor_t = namedtuple("lu_factor", ["LU", "pivots"])
_lu_factor_ex_t = namedtuple("lu_factor_ex", ["LU", "pivots", "info"])
_lu_t = namedtuple("lu", ["P", "L", "U"])


def _arange(n: int, like: Tensor) -> Tensor:
    from .._creation import arange

    return arange(n, device=like._device)


def _eliminate(A: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(packed LU, 0-based row order, 0-based pivot row of each step)."""
    m, n = A._shape[-2:]
    batch = A._shape[:-2]
    rows = _arange(m, A)
    order = rows.expand(batch + (m,))
    LU, steps = A, []
    for j in range(min(m, n)):
        p = LU[..., j:, j].abs().argmax(-1, keepdim=True) + j
        steps.append(p)
        swap = where(rows == j, p, where(rows == p, j, rows))
        LU = LU.gather(-2, swap.unsqueeze(-1).expand(LU._shape))
        order = order.gather(-1, swap)
        pivot = LU[..., j : j + 1, j : j + 1]
        safe = where(pivot == 0, 1.0, pivot).to(A.dtype)
        mult = where(pivot == 0, 0.0, LU[..., j + 1 :, j : j + 1] / safe).to(A.dtype)
        rest = LU[..., j + 1 :, j + 1 :] - mult * LU[..., j : j + 1, j + 1 :]
        below = cat([LU[..., j + 1 :, :j], mult, rest], -1)
        LU = cat([LU[..., : j + 1, :], below], -2)
    piv = cat(steps, -1) if steps else order[..., :0]
    return LU, order, piv


@autocast_op("linalg.lu_factor_ex")
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """``(LU, pivots, info)``: packed factors, 1-based LAPACK pivots, and 0 or the first zero pivot."""
    from .._ops.diagonal import diagonal

    if isinstance(A, Tensor) and A.ndim < 2:
        raise RuntimeError(
            f"ember.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(A._shape)} instead"
        )
    check_matrix("lu_factor", A, square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, _, piv = _eliminate(A)
    d = diagonal(LU, 0, -2, -1)
    zero = (d == 0).to(D.int32)
    first = where(zero.sum(-1) > 0, zero.argmax(-1) + 1, 0).to(D.int32)
    if check_errors:
        from ._ex import raise_ex

        msg = (
            "U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. If you still "
            "want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
        )
        raise_ex(first, "ember.linalg.lu_factor_ex", msg, RuntimeError)
    return _lu_factor_ex_t(LU, (piv + 1).to(D.int32), first)


@autocast_op("linalg.lu_factor")
def lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """``(LU, pivots)`` of ``A = P L U``; raises for singular inputs as PyTorch does."""
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    if bool((info > 0).any().item()):
        from ._decomp import LinAlgError

        k = int(info.reshape(-1).amax().item())
        raise LinAlgError(
            f"ember.linalg.lu_factor: U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. "
            "If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
            "linalg.lu_factor_ex(A, pivot)"
        )
    return _lu_factor_t(LU, piv)


def _order_from_pivots(pivots: Tensor, m: int) -> Tensor:
    """The row order produced by applying LAPACK's swaps ``pivots`` (1-based) to ``0..m-1``."""
    rows = _arange(m, pivots)
    order = rows.expand(pivots._shape[:-1] + (m,))
    p0 = pivots.to(D.int64) - 1
    for j in range(pivots._shape[-1]):
        p = p0[..., j : j + 1]
        swap = where(rows == j, p, where(rows == p, j, rows))
        order = order.gather(-1, swap)
    return order


def lu_unpack(
    LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True
) -> Any:
    """``(P, L, U)`` from packed factors: ``A = P @ L @ U``."""
    from .._creation import eye
    from .._ops.diagonal import tril, triu

    m, n = LU_data._shape[-2:]
    k = min(m, n)
    L = tril(LU_data, -1)[..., :, :k] + eye(m, k, dtype=LU_data.dtype, device=LU_data._device)
    U = triu(LU_data)[..., :k, :]
    order = _order_from_pivots(LU_pivots, m)
    P = (order.unsqueeze(-1) == _arange(m, LU_data)).to(LU_data.dtype).mT
    return _lu_t(P, L, U)


def lu(A: Tensor, *, pivot: bool = True) -> Any:
    """``(P, L, U)`` with ``A = P @ L @ U`` (L unit lower, U upper)."""
    LU, piv, _ = lu_factor_ex(A, pivot=pivot)
    return lu_unpack(LU, piv)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """Solve ``A X = B`` (or ``X A = B``, or with ``A^H``) from ``lu_factor``'s output."""
    from ._compat import _triangle

    P, _, _ = lu_unpack(LU, pivots)
    L = _triangle(LU, False, True)
    U = _triangle(LU, True, False)
    if left and not adjoint:  # A = P L U:  X = U^-1 L^-1 P^T B
        return solve(U, solve(L, P.mT @ B))
    if left:  # A^H X = B: U^H L^H P^T X = B
        return P @ solve(_mH(L), solve(_mH(U), B))
    if not adjoint:  # X A = B: X = B U^-1 L^-1 P^T
        return solve(L, solve(U, B, left=False), left=False) @ P.mT
    return _mH(lu_solve(LU, pivots, _mH(B), left=True, adjoint=False))


def old_lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> Any:
    """``torch.lu``: ``(LU, pivots)`` (and ``infos`` if asked)."""
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


@autocast_op("lu_solve")
def old_lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve(b, LU_data, LU_pivots)``: ``linalg.lu_solve`` with the older argument order."""
    return lu_solve(LU_data, LU_pivots, b)
