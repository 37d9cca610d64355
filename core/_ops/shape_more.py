"""More shape and data-layout helpers: atleast_nd, splits, scatters into slices and
diagonals, index grids, block matrices, membership, histograms, covariance and trapezoids.
All compose differentiable ember ops."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ember.backends import dtypes as D

from .._tensor import Tensor
from ._common import norm_dim
from .join import cat, stack, vstack
from .select import where
from .shape_extra import _diagonal_backward, diagonal, meshgrid, tensor_split

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "cartesian_prod",
    "combinations",
    "diagonal_scatter",
    "dsplit",
    "hsplit",
    "isin",
    "isreal",
    "narrow_copy",
    "ravel",
    "renorm",
    "row_stack",
    "select_scatter",
    "slice_scatter",
    "tril_indices",
    "triu_indices",
    "vander",
    "vsplit",
]

row_stack = vstack


def _each(tensors: tuple, fn: Any) -> Any:
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(fn(t) for t in ts)
    return out[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else out


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dimension."""
    return _each(tensors, lambda t: t.reshape(1) if t.ndim == 0 else t)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dimensions (1-D ones become rows)."""
    return _each(tensors, lambda t: t.reshape(1, -1) if t.ndim < 2 else t)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dimensions (as ``numpy.atleast_3d``)."""

    def up(t: Tensor) -> Tensor:
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.reshape(1, -1, 1)
        return t.unsqueeze(-1) if t.ndim == 2 else t  # type: ignore[attr-defined]

    return _each(tensors, up)


def ravel(input: Tensor) -> Tensor:
    """The flattened tensor (a view when possible)."""
    return input.reshape(-1)


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` as a new tensor."""
    return input.narrow(dim, start, length).clone()  # type: ignore[attr-defined]


def _split_even(name: str, input: Tensor, ios: Any, dim: int, need: int) -> tuple[Tensor, ...]:
    if input.ndim < need:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with {input.ndim} dimensions!"
        )
    if isinstance(ios, int) and input._shape[dim] % ios:
        raise RuntimeError(
            f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
            f"{input._shape[dim]} is not divisible by the split_size {ios}!"
        )
    return tensor_split(input, ios, dim)


def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dimension 1 (0 for 1-D tensors)."""
    return _split_even("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dimension 0 (needs at least 2 dimensions)."""
    return _split_even("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dimension 2 (needs at least 3 dimensions)."""
    return _split_even("dsplit", input, indices_or_sections, 2, 3)


def _index_vector(like: Tensor, values: Sequence[int]) -> Tensor:
    from .._creation import tensor

    return tensor(list(values), dtype=D.int64, device=like._device)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``index`` of dimension ``dim``."""
    from .index_extra import index_copy

    d = norm_dim(dim, input.ndim)
    size = input._shape[d]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    i = index % size
    return index_copy(input, d, _index_vector(input, [i]), src.unsqueeze(d).to(input.dtype))  # type: ignore[attr-defined]


def slice_scatter(
    input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``start:end:step`` of dimension ``dim``."""
    from .index_extra import index_copy

    d = norm_dim(dim, input.ndim)
    rows = range(*slice(start, end, step).indices(input._shape[d]))
    return index_copy(input, d, _index_vector(input, rows), src.to(input.dtype))


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written on its ``offset`` diagonal of ``(dim1, dim2)``."""
    from .._creation import ones_like

    d1, d2 = norm_dim(dim1, input.ndim), norm_dim(dim2, input.ndim)
    view = diagonal(input, offset, d1, d2)
    if view._shape != src._shape:
        raise RuntimeError(
            f"diagonal_scatter: expected src to have a size equal to the slice of self. src size = "
            f"{list(src._shape)}, slice size = {list(view._shape)}"
        )
    lo, hi, off = (d1, d2, offset) if d1 < d2 else (d2, d1, -offset)
    placed = _diagonal_backward(src.to(input.dtype), input._shape, off, lo, hi)
    mask = _diagonal_backward(ones_like(src, dtype=D.float32), input._shape, off, lo, hi) != 0
    return where(mask, placed, input)


def _indices(row: int, col: int, offset: int, upper: bool, dtype: Any, device: Any) -> Tensor:
    from .._creation import tensor

    pairs = [
        (r, c) for r in range(row) for c in range(col) if (c - r >= offset if upper else c - r <= offset)
    ]
    rows = [p[0] for p in pairs]
    cols = [p[1] for p in pairs]
    return tensor([rows, cols], dtype=dtype or D.int64, device=device)


def tril_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None, **_: Any
) -> Tensor:
    """The ``2 x N`` coordinates of the lower triangle (``col - row <= offset``), row-major."""
    return _indices(row, col, offset, False, dtype, device)


def triu_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None, **_: Any
) -> Tensor:
    """The ``2 x N`` coordinates of the upper triangle (``col - row >= offset``), row-major."""
    return _indices(row, col, offset, True, dtype, device)


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the given 0-, 1- or 2-D tensors."""
    from .._creation import zeros

    ts = [t.reshape(1, 1) if t.ndim == 0 else (t.reshape(1, -1) if t.ndim == 1 else t) for t in tensors]
    for i, t in enumerate(ts):
        if t.ndim != 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.ndim} dimensions"
            )
    if not ts:
        return zeros(1, 0)
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = D.promote_types(dt, t.dtype)
    total = sum(t._shape[1] for t in ts)
    rows, start = [], 0
    for t in ts:
        r, c = t._shape
        left = zeros(r, start, dtype=dt, device=t._device)
        right = zeros(r, total - start - c, dtype=dt, device=t._device)
        rows.append(cat([left, t.to(dt), right], 1))
        start += c
    return cat(rows, 0)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """All combinations of elements of 1-D tensors, as rows (``itertools.product`` order)."""
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Length-``r`` combinations of the elements of a 1-D tensor, as rows."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    make = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    combos = list(make(range(input._shape[0]), r))
    if r == 0 or not combos:
        from .._creation import zeros

        return (
            zeros(0, dtype=input.dtype, device=input._device)
            if r == 0
            else zeros(0, r, dtype=input.dtype, device=input._device)
        )
    idx = _index_vector(input, [i for c in combos for i in c])
    return input.index_select(0, idx).reshape(len(combos), r)  # type: ignore[attr-defined]


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` occurs in ``test_elements``."""
    from .._creation import tensor
    from .search import searchsorted

    like = elements if isinstance(elements, Tensor) else test_elements
    e = elements if isinstance(elements, Tensor) else tensor(elements, device=like._device)
    t = test_elements if isinstance(test_elements, Tensor) else tensor(test_elements, device=like._device)
    t = t.reshape(-1)
    if t.numel() == 0:
        from .._creation import zeros

        found = zeros(e._shape, dtype=D.bool_, device=e._device)
    else:
        s = t.sort().values  # type: ignore[attr-defined]
        pos = searchsorted(s, e).clamp(max=s.numel() - 1)  # type: ignore[attr-defined]
        found = s.gather(0, pos.reshape(-1)).reshape(e._shape) == e  # type: ignore[attr-defined]
    return ~found if invert else found  # type: ignore[operator]


def isreal(input: Tensor) -> Tensor:
    """True where the imaginary part is zero (everywhere for real dtypes)."""
    if input.dtype.is_complex:
        return input.imag == 0  # type: ignore[attr-defined]
    from .._creation import ones

    return ones(input._shape, dtype=D.bool_, device=input._device)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """Powers of the 1-D ``x`` as columns (decreasing unless ``increasing``)."""
    from .._creation import arange

    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    p = arange(n, device=x._device)
    if not increasing:
        p = n - 1 - p
    base = x if x.dtype.category >= 2 else x.to(D.int64)
    return base.unsqueeze(-1) ** p.to(base.dtype)  # type: ignore[attr-defined]


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` rescaled so its ``p``-norm is at most ``maxnorm``."""
    from ..linalg import vector_norm

    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    d = norm_dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    nrm = vector_norm(input, p, others, keepdim=True)
    scale = where(nrm > maxnorm, maxnorm / (nrm + 1e-7), 1.0)
    return input * scale.to(input.dtype)  # type: ignore[attr-defined]
