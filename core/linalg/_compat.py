"""The older top-level linear-algebra functions (``torch.det``, ``torch.svd``, ...) and
triangular solves, composed from ``ember.linalg``."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from .._autocast_hook import autocast_op
from .._public import op, public
from .._tensor import Tensor
from ._decomp import _mH, check_matrix, cholesky, det, inv, qr, solve, svd
from ._misc import pinv

PUBLIC = public(
    __name__,
    {
        "cholesky_inverse": op(),
        "cholesky_solve": op(),
        "logdet": op(),
        "old_cholesky": op("cholesky", function=False),
        "old_qr": op("qr", function=False),
        "old_svd": op("svd", function=False),
        "pinverse": op(),
        "triangular_solve": op(),
    },
)
__all__ = [*PUBLIC, "inverse", "solve_ex", "solve_triangular"]

_svd_t = namedtuple("svd", ["U", "S", "V"])
_tri_t = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
_solve_ex_t = namedtuple("solve_ex", ["result", "info"])

inverse = inv


def logdet(input: Tensor) -> Tensor:
    """``log(det(input))`` (NaN for a negative determinant, -inf for a singular matrix)."""
    from .._ops.pointwise_unary import log

    return log(det(input))


@autocast_op("pinverse")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse with relative cutoff ``rcond``."""
    return pinv(input, rtol=rcond)


@autocast_op("cholesky")
def old_cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky``: the lower (or upper) Cholesky factor."""
    return cholesky(input, upper=upper)


@autocast_op("svd")
def old_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """``torch.svd``: ``(U, S, V)`` (V, not Vh); reduced unless ``some=False``."""
    U, S, Vh = svd(input, full_matrices=not some)
    if not compute_uv:
        from .._creation import zeros_like

        return _svd_t(zeros_like(U), S, zeros_like(Vh))
    return _svd_t(U, S, _mH(Vh))


@autocast_op("qr")
def old_qr(input: Tensor, some: bool = True) -> Any:
    """``torch.qr``: reduced (or complete) QR."""
    return qr(input, "reduced" if some else "complete")


def _triangle(A: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    from .._ops.diagonal import diag_embed, diagonal, tril, triu

    T = triu(A) if upper else tril(A)
    if unitriangular:
        T = T - diag_embed(diagonal(T, 0, -2, -1)) + diag_embed(diagonal(T, 0, -2, -1) * 0 + 1)
    return T


def solve_triangular(
    A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False
) -> Tensor:
    """``X`` with ``T X = B`` (``X T = B`` if not ``left``) for the triangle ``T`` of ``A``."""
    check_matrix("solve_triangular", A)
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    inner, other = (A._shape[-1], B._shape[-2]) if left else (A._shape[-2], B._shape[-1])
    if inner != other:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"linalg.solve_triangular: Incompatible shapes of A and B for the equation {eq} "
            f"({A._shape[-2]}x{A._shape[-1]} and {B._shape[-2]}x{B._shape[-1]})"
        )
    return solve(_triangle(A, upper, unitriangular), B, left=left)


@autocast_op("triangular_solve")
def triangular_solve(
    b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False
) -> Any:
    """``torch.triangular_solve``: ``(solution of op(T) X = b, a copy of A)``."""
    T = _triangle(A, upper, unitriangular)
    if transpose:
        T = T.mT
    return _tri_t(solve(T, b), A.clone())


@autocast_op("cholesky_solve")
def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """``X`` with ``(L L^H) X = B`` given the Cholesky factor ``L`` (or ``U`` if ``upper``)."""
    Lo = _mH(L) if upper else L
    return solve(_mH(Lo), solve(Lo, B))


@autocast_op("cholesky_inverse")
def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``L L^H`` from its Cholesky factor."""
    Lo = _mH(L) if upper else L
    Li = inv(Lo)
    return _mH(Li) @ Li


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> Any:
    """``(result, info)``: ``solve`` with info (``A``'s batch shape) 0 on success, else the
    1-based index of the first zero pivot of ``A``'s LU (LAPACK's ``getrf``); failed results are NaN."""
    from ember.backends import dtypes as D

    from .._creation import zeros
    from ._decomp import LinAlgError
    from ._ex import lu_info, mask_failed, raise_ex, settle

    try:
        out, info = solve(A, B, left=left), zeros(A._shape[:-2], dtype=D.int32, device=A._device)
    except LinAlgError:
        out, info = settle(A, lu_info(A.detach()), lambda M: solve(M, B, left=left))
        vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B._shape == A._shape[:-1])
        out = mask_failed(out, info, float("nan"), 1 if vector else 2)
    if check_errors:
        raise_ex(
            info,
            "ember.linalg.solve_ex",
            "The solver failed because the input matrix is singular.",
            LinAlgError,
        )
    return _solve_ex_t(out, info)
