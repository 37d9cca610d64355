"""``torch.norm``, distances, differences and the trace, composed from ember ops."""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from .._tensor import Tensor
from ._common import norm_dim

__all__ = ["cdist", "diff", "dist", "norm", "trace"]


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """The p-norm over ``dim`` (all elements when None); ``'fro'`` and ``'nuc'`` for matrices."""
    from ..linalg import matrix_norm, vector_norm

    if isinstance(dim, int):
        dim = (dim,)
    if p == "nuc":
        return matrix_norm(input, "nuc", dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    if p == "fro" or p is None:
        return vector_norm(input, 2, dim, keepdim, dtype=dtype)
    if isinstance(p, str):
        raise RuntimeError(f"norm(): unsupported p '{p}'")  # noqa: TRY004
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """``norm(input - other, p)``."""
    from ..linalg import vector_norm

    return vector_norm(input - other, p)


def cdist(
    x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
) -> Tensor:
    """Pairwise p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M)."""
    from ..linalg import vector_norm
    from ._composite import not_implemented_for

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
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    big = x1._shape[-2] > 25 or x2._shape[-2] > 25
    if p == 2 and (compute_mode == modes[1] or (compute_mode == modes[0] and big)):
        return _euclid_mm(x1, x2)
    diff_ = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # type: ignore[attr-defined]
    return vector_norm(diff_, p, -1)


def _safe_sqrt_rule(n: Any, g: Tensor) -> tuple:
    from .select import where

    _, out, _ = n.ctx
    return (where(out == 0, 0.0, g / (2 * where(out == 0, 1.0, out))),)


def _sqrt(x: Tensor) -> Tensor:
    return x.sqrt()  # type: ignore[attr-defined]


def _euclid_mm(x1: Tensor, x2: Tensor) -> Tensor:
    """Euclidean distances as PyTorch computes them for many points: one matmul,
    ``sqrt(clamp(|a|^2 + |b|^2 - 2 a.b, 0))``, with a zero gradient at zero distance."""
    from ._composite import composed

    a2 = (x1 * x1).sum(-1, keepdim=True)  # type: ignore[attr-defined]
    b2 = (x2 * x2).sum(-1, keepdim=True)  # type: ignore[attr-defined]
    d2 = (a2 - 2 * (x1 @ x2.mT) + b2.mT).clamp(min=0)  # type: ignore[attr-defined]
    return composed(_sqrt, "SqrtBackward0", _safe_sqrt_rule)(d2)


def diff(
    input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None
) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``!=`` for bool)."""
    from .join import cat

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
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)  # type: ignore[attr-defined]
        x = hi ^ lo if x.dtype is D.bool_ else hi - lo
    return x


def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a 2-D tensor."""
    from ._composite import not_implemented_for
    from .shape_extra import diagonal

    not_implemented_for("trace", input, "bool")
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return diagonal(input).sum()  # type: ignore[attr-defined]
