"""``torch.norm`` and matrix norms, distances, differences (``diff``, ``gradient``), ``renorm``
and the trace, composed from ember ops."""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._public import op, public
from .._tensor import Tensor
from ._common import norm_dim
from ._composite import composed, not_implemented_for
from .diagonal import diagonal, triu_indices
from .join import cat
from .select import where

PUBLIC = public(
    __name__,
    {
        "cdist": op(),
        "diff": op(method=True),
        "dist": op(method=True),
        "frobenius_norm": op(),
        "gradient": op(),
        "norm": op(method=True),
        "nuclear_norm": op(),
        "pdist": op(),
        "renorm": op(method=True, inplace=True),
        "trace": op(method=True),
    },
)
__all__ = [*PUBLIC]


@autocast_op("norm")
def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """The p-norm over ``dim`` (all elements when None); ``'fro'`` and ``'nuc'`` for matrices."""
    from ..linalg import matrix_norm, vector_norm  # cycle: ember.linalg

    if isinstance(dim, int):
        dim = (dim,)
    if p == "nuc":
        return matrix_norm(input, "nuc", dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    if p == "fro" or p is None:
        return vector_norm(input, 2, dim, keepdim, dtype=dtype)
    if isinstance(p, str):
        raise RuntimeError(f"norm(): unsupported p '{p}'")  # noqa: TRY004
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


@autocast_op("dist")
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """``norm(input - other, p)``."""
    from ..linalg import vector_norm  # cycle: ember.linalg

    return vector_norm(input - other, p)


@autocast_op("cdist")
def cdist(
    x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
) -> Tensor:
    """Pairwise p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M)."""
    from ..linalg import vector_norm  # cycle: ember.linalg

    if x1.dtype.is_complex or x1.dtype.category < 2:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype.name}")
    not_implemented_for("cdist", x1, "half")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1._shape[-1]} X2: {x2._shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    big = x1._shape[-2] > 25 or x2._shape[-2] > 25
    if p == 2 and (compute_mode == modes[1] or (compute_mode == modes[0] and big)):
        return _euclid_mm(x1, x2)
    diff_ = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return vector_norm(diff_, p, -1)


def _safe_sqrt_rule(n: Any, g: Tensor) -> tuple:
    _, out, _ = n.ctx
    return (where(out == 0, 0.0, g / (2 * where(out == 0, 1.0, out))),)


def _sqrt(x: Tensor) -> Tensor:
    return x.sqrt()


def _euclid_mm(x1: Tensor, x2: Tensor) -> Tensor:
    """Euclidean distances as PyTorch computes them for many points: one matmul,
    ``sqrt(clamp(|a|^2 + |b|^2 - 2 a.b, 0))``, with a zero gradient at zero distance."""

    a2 = (x1 * x1).sum(-1, keepdim=True)
    b2 = (x2 * x2).sum(-1, keepdim=True)
    d2 = (a2 - 2 * (x1 @ x2.mT) + b2.mT).clamp(min=0)
    return composed(_sqrt, "SqrtBackward0", _safe_sqrt_rule)(d2)


def diff(
    input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None
) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``!=`` for bool)."""

    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = norm_dim(dim, input.ndim)
    x = input
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        x = cat(parts, d)
    for _ in range(n):
        size = x._shape[d]
        if size == 0:
            break
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = hi ^ lo if x.dtype is D.bool_ else hi - lo
    return x


@autocast_op("trace")
def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a 2-D tensor."""

    not_implemented_for("trace", input, "bool")
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return diagonal(input).sum()


@autocast_op("renorm")
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` rescaled so its ``p``-norm is at most ``maxnorm``."""
    from ..linalg import vector_norm  # cycle: ember.linalg

    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    d = norm_dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    nrm = vector_norm(input, p, others, keepdim=True)
    scale = where(nrm > maxnorm, maxnorm / (nrm + 1e-7), 1.0)
    return input * scale.to(input.dtype)


@autocast_op("frobenius_norm")
def frobenius_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    """The square root of the sum of squared magnitudes over ``dim``."""
    from ..linalg import vector_norm  # cycle: ember.linalg

    return vector_norm(input, 2, dim, keepdim)


@autocast_op("nuclear_norm")
def nuclear_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    """The sum of singular values of the matrices in ``dim``."""
    from ..linalg import matrix_norm  # cycle: ember.linalg

    if isinstance(dim, bool):
        dim, keepdim = (-2, -1), dim
    return matrix_norm(input, "nuc", dim, keepdim)


@autocast_op("pdist")
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """Distances between all pairs of rows (the upper triangle of ``cdist``), row-major."""
    from ..linalg import vector_norm  # cycle: ember.linalg

    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    n = input._shape[0]
    i, j = triu_indices(n, n, 1, device=input._device)
    return vector_norm(input[i] - input[j], p, -1)


def _grad_1d(y: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    """np.gradient along one dim with uniform spacing ``h`` or coordinates ``h`` (1-D tensor)."""

    n = y._shape[d]
    if n < edge_order + 1:
        raise RuntimeError(
            f"ember.gradient expected each dimension size to be at least edge_order+1, got {n} at dim {d}"
        )

    def sl(a: int, b: int) -> Tensor:
        return y.narrow(d, a, b - a)

    shape = [1] * y.ndim
    if isinstance(h, Tensor):
        x = h.to(y.dtype) if y.dtype.category >= 2 else h
        shape[d] = n - 2
        dx = x[1:] - x[:-1]
        h1, h2 = dx[:-1].reshape(shape), dx[1:].reshape(shape)
        mid = (h1 * h1 * sl(2, n) + (h2 * h2 - h1 * h1) * sl(1, n - 1) - h2 * h2 * sl(0, n - 2)) / (
            h1 * h2 * (h1 + h2)
        )
        e0, e1 = dx[0], dx[-1]
    else:
        mid = (sl(2, n) - sl(0, n - 2)) / (2 * h)
        e0 = e1 = h
    if edge_order == 1:
        first = (sl(1, 2) - sl(0, 1)) / e0
        last = (sl(n - 1, n) - sl(n - 2, n - 1)) / e1
    elif isinstance(h, Tensor):  # second-order one-sided differences on uneven coordinates
        a1, a2, b1, b2 = dx[0], dx[1], dx[-2], dx[-1]
        first = (
            -(2 * a1 + a2) / (a1 * (a1 + a2)) * sl(0, 1)
            + (a1 + a2) / (a1 * a2) * sl(1, 2)
            - a1 / (a2 * (a1 + a2)) * sl(2, 3)
        )
        last = (
            b2 / (b1 * (b1 + b2)) * sl(n - 3, n - 2)
            - (b1 + b2) / (b1 * b2) * sl(n - 2, n - 1)
            + (2 * b2 + b1) / (b2 * (b1 + b2)) * sl(n - 1, n)
        )
    else:
        first = (-1.5 * sl(0, 1) + 2 * sl(1, 2) - 0.5 * sl(2, 3)) / e0
        last = (0.5 * sl(n - 3, n - 2) - 2 * sl(n - 2, n - 1) + 1.5 * sl(n - 1, n)) / e1
    return cat([first, mid, last], d)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """Central-difference estimates of the derivative along each of ``dim`` (as ``numpy.gradient``)."""
    if edge_order not in (1, 2):
        raise RuntimeError(f"ember.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    dims = list(range(input.ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    dims = [d % input.ndim for d in dims]
    sp = spacing if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(sp) != len(dims):
        raise RuntimeError(
            f"ember.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have the same length, but got a spacing argument of length {len(sp)} and a dim argument of length {len(dims)}."
        )
    y = input if input.dtype.category >= 2 else input.to(D.float32)
    out = []
    for d, h in zip(dims, sp):
        if isinstance(h, Tensor) and h.ndim == 0:
            h = h.item()
        out.append(_grad_1d(y, d, h, edge_order))
    return tuple(out)
