"""Norms and functions derived from the factorisations (pinv, rank, cond, powers, ...)."""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._creation import zeros
from .._dtype import pt_name
from .._ops._args import check_number
from .._ops._common import norm_dims
from .._ops._composite import composed
from .._ops.matmul import matmul
from .._ops.select import where
from .._public import op, public
from .._tensor import Tensor
from ._decomp import _run, check_matrix, inv, solve, svd, svdvals

PUBLIC = public(
    __name__,
    {
        "matrix_power": op(),
        "matrix_rank": op(),
    },
)
__all__ = [
    *PUBLIC,
    "cond",
    "cross",
    "lstsq",
    "matrix_norm",
    "multi_dot",
    "norm",
    "pinv",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]

_lstsq_t = namedtuple("lstsq", ["solution", "residuals", "rank", "singular_values"])
_EPS = {"float32": 1.1920928955078125e-07, "float64": 2.220446049250313e-16}


def _two_norm_rule(n: Any, g: Tensor) -> tuple:
    (x,), out, kw = n.ctx
    keepdim = kw["keepdim"]
    o, gg = (out, g) if keepdim else (out.reshape(kw["kshape"]), g.reshape(kw["kshape"]))
    scale = where(o == 0, 0.0, gg / where(o == 0, 1.0, o))
    return (x * scale,)


def _two_norm(x: Tensor, *, dims: tuple, keepdim: bool, kshape: tuple) -> Tensor:
    a = x.abs() if x.dtype.is_complex else x
    return (a * a).sum(dims, keepdim=keepdim).sqrt()


_two_norm_op = composed(_two_norm, "LinalgVectorNormBackward0", _two_norm_rule)


def _check_identity(x: Tensor, o: float, dim: Any) -> None:
    """A max (inf) or a negative power has no value over nothing: PyTorch refuses it, naming the
    ord as C++ prints it and each empty dim as the caller gave it."""
    if not (o < 0 or o == math.inf) or x.numel():
        return
    dims = [dim] if isinstance(dim, int) else list(dim or ())
    head = f"linalg.vector_norm cannot compute the {o:g} norm on "
    if not dims:
        raise RuntimeError(head + "an empty tensor because the operation does not have an identity")
    for d in dims:
        if x._shape[d] == 0:
            raise RuntimeError(
                head
                + f"the dimension {d}because this dimension is empty and the operation does not have an identity"
            )


def _max_min(t: Tensor, dim: int, keepdim: bool, ord: Any) -> Tensor:
    """amax for a positive ord, amin for a negative one; PyTorch's matrix norms take the max over
    an empty dim as 0 (the norms are non-negative), while the min raises amin's error."""
    if ord > 0 and t._shape[dim] == 0:
        shape = list(t._shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return zeros(tuple(shape), dtype=t.dtype, device=t._device)
    return t.amax(dim, keepdim) if ord > 0 else t.amin(dim, keepdim)


@autocast_op("linalg.vector_norm")
def vector_norm(
    x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all elements when None); ord may be inf, -inf, 0."""
    check_number("linalg_vector_norm", "ord", ord)
    if x.dtype.category < 2:
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {pt_name(x.dtype)}"
        )
    if dtype is not None:
        x = x.to(dtype)
    _check_identity(x, float(ord), dim)
    dims = norm_dims(dim, x.ndim)  # a scalar takes dim -1 or 0 (and raises PyTorch's error else)
    if not x.ndim:
        dims = ()
    if not x.ndim:
        x = x.reshape(1)
        dims = (0,)
        keepdim = False
    if x.dtype.name in ("float16", "bfloat16"):  # PyTorch accumulates in float32, rounds once
        return _norm_of(x.float(), float(ord), dims, keepdim).to(x.dtype)
    return _norm_of(x, float(ord), dims, keepdim)


def _norm_of(x: Tensor, o: float, dims: tuple[int, ...], keepdim: bool) -> Tensor:
    a = x.abs()
    if o == 2:
        kshape = tuple(1 if i in dims else s for i, s in enumerate(x._shape))
        return _two_norm_op(x, dims=dims, keepdim=keepdim, kshape=kshape)
    if o == math.inf:
        return a.amax(dims, keepdim)
    if o == -math.inf:
        return a.amin(dims, keepdim)
    if o == 0:
        return (a != 0).to(a.dtype).sum(dims, keepdim)
    if o == 1:
        return a.sum(dims, keepdim)
    total = (a**o).sum(dims, keepdim)
    if o < 0:
        return total ** (1.0 / o)
    zero = total == 0  # PyTorch's norm_backward: a zero norm has gradient 0, not 0 * inf = nan
    return (total.masked_fill(zero, 1.0) ** (1.0 / o)).masked_fill(zero, 0.0)


@autocast_op("linalg.matrix_norm")
def matrix_norm(
    A: Tensor, ord: Any = "fro", dim: Sequence[int] = (-2, -1), keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """Frobenius, nuclear, 1, -1, 2, -2, inf or -inf norm of the matrices in ``dim``.

    float16/bfloat16 as PyTorch: the sums (fro, 1, inf) accumulate in float32; the orders that
    need singular values refuse them.
    """
    if isinstance(A, Tensor) and A.dtype.name in ("float16", "bfloat16") and ord in ("nuc", 2, -2):
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got {pt_name(A.dtype)}")
    check_matrix("matrix_norm", A, square=False, half=True)
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (d % A.ndim for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        out = s.sum(-1) if ord == "nuc" else _max_min(s, -1, False, ord)
        if keepdim:
            out = out.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return out
    if ord in (1, -1, math.inf, -math.inf):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        if not keepdim and inner < outer:  # the sum removes inner first, as PyTorch's
            outer -= 1
        sums = A.abs().sum(inner, keepdim=keepdim)
        return _max_min(sums, outer, keepdim, ord)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


@autocast_op("linalg.norm")
def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """``vector_norm`` or ``matrix_norm`` depending on ``dim``/``ord`` and the rank of ``A``."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if (
        dim is not None
        and len(dim) == 2
        or (dim is None and ord is not None and (A.ndim == 2 or isinstance(ord, str)))
    ):
        return matrix_norm(
            A, "fro" if ord is None else ord, dim if dim is not None else (-2, -1), keepdim, dtype=dtype
        )
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord {ord} needs a 2-D input or a 2-tuple dim")  # noqa: TRY004
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@autocast_op("linalg.pinv")
def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse (singular values below the tolerance dropped)."""
    if isinstance(A, Tensor) and A.ndim < 2:
        raise RuntimeError(
            f"linalg.pinv({pt_name(A.dtype)}{{{list(A._shape)}}}): expected a tensor with 2 or more "
            "dimensions of float, double, cfloat or cdouble types"
        )
    check_matrix("pinv", A, square=False)
    U, S, Vh = svd(A, full_matrices=False)
    tol = _tolerance(A, S, atol, rtol)
    keep = S > tol
    inv_s = where(keep, 1 / where(keep, S, 1.0), 0.0)
    return matmul(Vh.mT.conj_physical() * inv_s.unsqueeze(-2).to(A.dtype), U.mT.conj_physical())


def _tolerance(A: Tensor, S: Tensor, atol: Any, rtol: Any) -> Tensor:
    smax = S.amax(-1, keepdim=True) if S._shape[-1] else S.sum(-1, keepdim=True)
    if rtol is None:
        rtol = (
            0.0
            if atol is not None and (not isinstance(atol, (int, float)) or atol > 0)
            else (_EPS.get(D.to_real(A.dtype).name, 1.2e-7) * max(A._shape[-2:]))
        )
    t = smax * rtol
    if atol is not None:
        from .._ops.pointwise_binary import maximum

        t = maximum(t, atol)
    return t.detach()


@autocast_op("linalg.matrix_rank")
def matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    """The number of singular values above the tolerance."""
    if isinstance(A, Tensor) and A.ndim < 2:
        raise RuntimeError(
            "ember.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        )
    check_matrix("matrix_rank", A, square=False)
    S = svdvals(A.detach())
    return (S > _tolerance(A, S, atol, rtol)).sum(-1)


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A`` multiplied by itself ``n`` times (the inverse's powers for negative n)."""
    if A.ndim < 2 or A._shape[-1] != A._shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, but they are {A._shape[-2] if A.ndim >= 2 else 1} by {A._shape[-1] if A.ndim else 1} matrices"
        )
    if n == 0:
        from .._creation import eye

        return eye(A._shape[-1], dtype=A.dtype, device=A._device).expand(A._shape).clone()
    base = inv(A) if n < 0 else A
    k, out = abs(n), None
    while k:
        if k & 1:
            out = base if out is None else matmul(out, base)
        k >>= 1
        if k:
            base = matmul(base, base)
    return out  # type: ignore[return-value]


@autocast_op("linalg.cond")
def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number ``norm(A, p) * norm(inv(A), p)`` (singular value ratio for p None, 2, -2)."""
    if A.ndim < 2 and not isinstance(p, str):
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p in (None, 2, -2):
        s = svdvals(A)
        return s.amax(-1) / s.amin(-1) if p != -2 else s.amin(-1) / s.amax(-1)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The 3-vector cross product along ``dim``."""
    from .._ops.products import cross as _cross

    return _cross(input, other, dim)


@autocast_op("linalg.vecdot")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """``sum(conj(x) * y, dim)``."""
    if x.ndim == 1 and y.ndim == 1 and x._shape != y._shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor {list(x._shape)} and src {list(y._shape)} to have "
            f"the same number of elements, but got {x._shape[0]} and {y._shape[0]} elements respectively"
        )
    return (x.conj_physical() * y).sum(dim)


@autocast_op("linalg.multi_dot")
def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The chained product of matrices (the first may be a row vector, the last a column)."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        if i in (0, len(ts) - 1) and t.ndim not in (1, 2):
            which = "first" if i == 0 else "last"
            raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.ndim}D")
        if 0 < i < len(ts) - 1 and t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    for i in range(len(ts) - 1):
        a, b = ts[i], ts[i + 1]
        if a._shape[-1] != b._shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(a._shape)} and {list(b._shape)} "
                "cannot be multiplied"
            )
    first, last = ts[0].ndim == 1, ts[-1].ndim == 1
    ts[0] = ts[0].unsqueeze(0) if first else ts[0]
    ts[-1] = ts[-1].unsqueeze(-1) if last else ts[-1]
    out = ts[0]
    for t in ts[1:]:
        out = matmul(out, t)
    if first:
        out = out.squeeze(0)
    if last:
        out = out.squeeze(-1)
    return out


@autocast_op("linalg.lstsq")
def lstsq(A: Tensor, B: Tensor, rcond: Any = None, *, driver: str | None = None) -> Any:
    """Least-squares solution of ``A X = B`` (differentiable for full-rank ``A``).

    As PyTorch on the CPU: ``rank`` for the gelsy (default), gelsd and gelss drivers;
    ``residuals`` and ``singular_values`` for gelsd and gelss (residuals only when m > n and
    ``A`` has full rank); other fields are empty.
    """
    check_matrix("lstsq", A, square=False)
    drv = driver or "gelsy"
    if drv not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(
            f"ember.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), got {drv}"
        )
    vector = B.ndim == A.ndim - 1
    b = B.unsqueeze(-1) if vector else B
    if b._shape[-2] != A._shape[-2]:
        raise RuntimeError(
            f"ember.linalg.lstsq: input.size(-2) should match other.size({-1 if vector else -2})"
        )
    if A.requires_grad or B.requires_grad:
        Ah = A.mT.conj_physical()
        m, n = A._shape[-2:]
        X = solve(Ah @ A, Ah @ b) if m >= n else Ah @ solve(A @ Ah, b)
    else:
        X = _run("lstsq", (A, b), (), A.dtype)

    real = D.to_real(A.dtype)
    empty = zeros(0, dtype=real, device=A._device)
    rank = matrix_rank(A, rtol=rcond) if drv != "gels" else zeros(0, dtype=D.int64, device=A._device)
    residuals, sv = empty, empty
    if drv in ("gelsd", "gelss"):
        sv = svdvals(A.detach())
        m, n = A._shape[-2:]
        if m > n and bool((rank == n).all().item()):
            r = (A @ X - b).abs()
            residuals = (r * r).sum(-2)
    if vector:
        X = X.squeeze(-1)
        residuals = residuals.squeeze(-1) if residuals.numel() else residuals
    return _lstsq_t(X, residuals, rank, sv)


@autocast_op("linalg.tensorinv")
def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse for ``tensordot``: shape ``A.shape[ind:] + A.shape[:ind]``."""
    lead, rest = A._shape[:ind], A._shape[ind:]
    n = math.prod(lead)
    if n != math.prod(rest):
        raise RuntimeError(
            f"Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {math.prod(rest)} != {n}"
        )
    return inv(A.reshape(n, n)).reshape(rest + lead)


@autocast_op("linalg.tensorsolve")
def tensorsolve(A: Tensor, B: Tensor, dims: Any = None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.ndim) == B``."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        order = [d for d in range(A.ndim) if d not in dims] + dims
        A = A.permute(order)
    rest = A._shape[B.ndim :]
    return solve(A.reshape(B.numel(), math.prod(rest)), B.reshape(-1)).reshape(rest)


def vander(x: Tensor, N: int | None = None) -> Tensor:
    """Columns ``x**0, x**1, ..., x**(N-1)`` (increasing powers)."""
    from .._creation import arange

    n = x._shape[-1] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    return x.unsqueeze(-1) ** arange(n, device=x._device).to(x.dtype if x.dtype.category >= 1 else D.int64)
