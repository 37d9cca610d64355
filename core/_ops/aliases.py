"""PyTorch's alternative spellings and small compositions: comparison aliases, ``fix``,
``rsub``, ``put``, ``pdist``, ``gradient``, ``unravel_index``, the ``*_copy`` family and the
conjugation/negation-bit queries (always false: ember materialises conjugates)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember.backends import dtypes as D

from .._tensor import Tensor
from . import shape_extra as SX
from . import views as V
from .binary import ge, gt, le, lt, ne, sub
from .unary import trunc

__all__ = [
    "adjoint",
    "alias_copy",
    "as_strided_copy",
    "detach_copy",
    "diagflat",
    "diagonal_copy",
    "expand_copy",
    "fix",
    "frobenius_norm",
    "gradient",
    "greater",
    "greater_equal",
    "is_conj",
    "is_neg",
    "is_nonzero",
    "is_same_size",
    "less",
    "less_equal",
    "nonzero_static",
    "not_equal",
    "nuclear_norm",
    "pdist",
    "permute_copy",
    "put",
    "resolve_conj",
    "resolve_neg",
    "rsub",
    "select_copy",
    "split_copy",
    "squeeze_copy",
    "sum_to_size",
    "t_copy",
    "transpose_copy",
    "unbind_copy",
    "unfold_copy",
    "unravel_index",
    "unsqueeze_copy",
    "view_copy",
]

greater, greater_equal, less, less_equal, not_equal, fix = gt, ge, lt, le, ne, trunc


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions."""
    from .complex import conj_physical

    return conj_physical(input.transpose(-2, -1))  # type: ignore[attr-defined]


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A matrix with the flattened ``input`` on diagonal ``offset``."""
    return SX.diag(input.reshape(-1), offset)


def frobenius_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    """The square root of the sum of squared magnitudes over ``dim``."""
    from ..linalg import vector_norm

    return vector_norm(input, 2, dim, keepdim)


def nuclear_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    """The sum of singular values of the matrices in ``dim``."""
    from ..linalg import matrix_norm

    if isinstance(dim, bool):
        dim, keepdim = (-2, -1), dim
    return matrix_norm(input, "nuc", dim, keepdim)


def is_nonzero(input: Tensor) -> bool:
    """The truth value of a one-element tensor."""
    if input.numel() != 1:
        raise RuntimeError(
            "Boolean value of Tensor with no values is ambiguous"
            if input.numel() == 0
            else "Boolean value of Tensor with more than one value is ambiguous"
        )
    return bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape."""
    return input._shape == other._shape


def is_conj(input: Tensor) -> bool:
    """Always False: ember's conjugates are materialised, never lazy."""
    return False


def is_neg(input: Tensor) -> bool:
    """Always False: ember has no lazy negation bit."""
    return False


def resolve_conj(input: Tensor) -> Tensor:
    """``input`` itself (nothing lazy to resolve)."""
    return input


resolve_neg = resolve_conj


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``."""
    return sub(other, input, alpha=alpha)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source`` written (or added) at flat positions ``index``."""
    from .index_extra import flat_index
    from .indexing import index_put

    flat = input.reshape(-1)
    idx = flat_index("put_", flat, index.reshape(-1) if isinstance(index, Tensor) else index)
    return index_put(flat, idx, source.reshape(-1).to(input.dtype), accumulate).reshape(input._shape)


def unravel_index(indices: Any, shape: Sequence[int] | int) -> tuple[Tensor, ...]:
    """Coordinates in ``shape`` of flat ``indices`` (one tensor per dimension)."""
    from .._creation import tensor

    dims = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    idx = indices if isinstance(indices, Tensor) else tensor(indices)
    if idx.dtype.category != 1 or idx.dtype is D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {idx.dtype.name}")
    total = 1
    for s in dims:
        total *= s
    rest = idx.to(D.int64) % max(total, 1)
    out = []
    for s in reversed(dims):
        out.append(rest % s)
        rest = rest // s
    return tuple(reversed(out))


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """Distances between all pairs of rows (the upper triangle of ``cdist``), row-major."""
    from ..linalg import vector_norm
    from .shape_more import triu_indices

    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    n = input._shape[0]
    i, j = triu_indices(n, n, 1, device=input._device)
    return vector_norm(input[i] - input[j], p, -1)  # type: ignore[index]


def _grad_1d(y: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    """np.gradient along one dim with uniform spacing ``h`` or coordinates ``h`` (1-D tensor)."""
    from .join import cat

    n = y._shape[d]
    if n < edge_order + 1:
        raise RuntimeError(
            f"torch.gradient expected each dimension size to be at least edge_order+1, got {n} at dim {d}"
        )

    def sl(a: int, b: int) -> Tensor:
        return y.narrow(d, a, b - a)  # type: ignore[attr-defined]

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
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    dims = list(range(input.ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    dims = [d % input.ndim for d in dims]
    sp = spacing if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(sp) != len(dims):
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have the same length, but got a spacing argument of length {len(sp)} and a dim argument of length {len(dims)}."
        )
    y = input if input.dtype.category >= 2 else input.to(D.float32)
    out = []
    for d, h in zip(dims, sp):
        if isinstance(h, Tensor) and h.ndim == 0:
            h = h.item()
        out.append(_grad_1d(y, d, h, edge_order))
    return tuple(out)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero(input)`` cut or padded (with ``fill_value`` rows) to exactly ``size`` rows."""
    from .._creation import full
    from .indexing import nonzero
    from .join import cat

    nz = nonzero(input)
    if nz._shape[0] >= size:
        return nz[:size]
    pad = full((size - nz._shape[0], nz._shape[1]), fill_value, dtype=D.int64, device=input._device)
    return cat([nz, pad], 0)


def sum_to_size(input: Tensor, *size: Any) -> Tensor:
    """Sum broadcast dimensions away so the result has shape ``size``."""
    from ._common import broadcast_shape, sum_to

    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    try:
        ok = broadcast_shape(shape, input._shape) == input._shape
    except RuntimeError:
        ok = False
    if not ok:
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(input._shape)}}}.")

    return sum_to(input, shape)


def _alias(input: Tensor) -> Tensor:
    return V.view(input, input._shape)


def _copy_of(view: Any) -> Any:
    def op(*args: Any, **kwargs: Any) -> Any:
        out = view(*args, **kwargs)
        if isinstance(out, tuple):
            return tuple(t.clone() for t in out)
        return out.clone()

    op.__name__ = view.__name__ + "_copy"
    return op


# ``torch.X_copy``: the view op X, as a new tensor.
alias_copy = _copy_of(_alias)
as_strided_copy = _copy_of(V.as_strided)
detach_copy = _copy_of(V.detach)
diagonal_copy = _copy_of(SX.diagonal)
expand_copy = _copy_of(V.expand)
permute_copy = _copy_of(V.permute)
select_copy = _copy_of(V.select)
split_copy = _copy_of(V.split)
squeeze_copy = _copy_of(V.squeeze)
t_copy = _copy_of(V.t)
transpose_copy = _copy_of(V.transpose)
unbind_copy = _copy_of(V.unbind)
unfold_copy = _copy_of(SX.unfold)
unsqueeze_copy = _copy_of(V.unsqueeze)
view_copy = _copy_of(V.view)
