"""``ember.linalg``: PyTorch's ``torch.linalg`` (batched; differentiable where PyTorch is).

Factorisations are composite ops: a backend may register kernels; otherwise they run on the
CPU backend (NumPy/LAPACK) and the results are copied back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._ops.diagonal import diagonal as _diagonal
from .._ops.matmul import matmul
from .._tensor import Tensor
from ._compat import solve_ex, solve_triangular
from ._decomp import (
    LinAlgError,
    cholesky,
    cholesky_ex,
    det,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    householder_product,
    inv,
    inv_ex,
    matrix_exp,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
)
from ._lu import lu, lu_factor, lu_factor_ex, lu_solve
from ._misc import (
    cond,
    cross,
    lstsq,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
    vector_norm,
)

if TYPE_CHECKING:
    from ._ldl import ldl_factor, ldl_factor_ex


def __getattr__(name: str) -> object:
    """``ldl_factor``, ``ldl_factor_ex``: their module loads on first use (rarely used)."""
    if name in ("ldl_factor", "ldl_factor_ex"):
        from . import _ldl

        value = getattr(_ldl, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The ``offset`` diagonal of the matrices in ``(dim1, dim2)`` (a view)."""
    return _diagonal(A, offset, dim1, dim2)


__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]
