"""Diagonals and triangles: ``diagonal`` (a view with its own node), ``diag_embed``, ``diag``,
``tril``/``triu`` and their index grids, diagonal scatters and block matrices."""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from .._creation import arange, ones_like, tensor, zeros
from .._dispatch import call
from .._public import op, public
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from ._common import norm_dim
from .join import cat
from .select import where
from .views import make_view

PUBLIC = public(
    __name__,
    {
        "block_diag": op(),
        "diag": op(method=True),
        "diag_embed": op(method=True),
        "diagflat": op(method=True),
        "diagonal": op(method=True),
        "diagonal_scatter": op(method=True),
        "tril": op(method=True, inplace=True),
        "tril_indices": op(),
        "triu": op(method=True, inplace=True),
        "triu_indices": op(),
    },
)
__all__ = [*PUBLIC]


# -- diagonals -----------------------------------------------------------------------------
def _diag_geometry(shape: tuple[int, ...], offset: int, d1: int, d2: int) -> tuple[tuple[int, ...], int]:
    n = (
        max(min(shape[d1], shape[d2] - offset), 0)
        if offset >= 0
        else max(min(shape[d1] + offset, shape[d2]), 0)
    )
    rest = tuple(s for i, s in enumerate(shape) if i not in (d1, d2))
    return rest + (n,), n


def _diag_dims(ndim: int, dim1: int, dim2: int) -> tuple[int, int]:
    d1, d2 = norm_dim(dim1, ndim), norm_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _diagonal_rule(n: Any, g: Tensor) -> tuple:
    shape, offset, d1, d2 = n.ctx
    return (_diagonal_backward(g, shape, offset, d1, d2),)


def _diagonal_backward(g: Tensor, shape: tuple[int, ...], offset: int, d1: int, d2: int) -> Tensor:
    """Zeros of ``shape`` with ``g`` on the diagonal; its own rule takes the diagonal again."""

    out = zeros(shape, dtype=g.dtype, device=g._device)
    view = diagonal(out, offset, d1, d2)
    call(out._be, "assign", view._data, g.contiguous()._data)
    if _grad.enabled and g.requires_grad:
        record("DiagonalBackwardBackward0", _rediag_rule, out, (g,), (), (offset, d1, d2))
    return out


def _rediag_rule(n: Any, g: Tensor) -> tuple:
    offset, d1, d2 = n.ctx
    return (diagonal(g, offset, d1, d2),)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal at ``offset`` of the planes ``(dim1, dim2)``, as a view (last dim).

    Writing into it writes into ``input``. Example: ``x.diagonal(1)`` is the first superdiagonal.
    """
    d1, d2 = _diag_dims(input.ndim, dim1, dim2)  # IndexError for fewer than 2 dims, as PyTorch
    shape, n = _diag_geometry(input._shape, offset, d1, d2)
    strides = input.stride()
    start = input.storage_offset()
    if n > 0:
        start += offset * strides[d2] if offset >= 0 else -offset * strides[d1]
    rest = tuple(s for i, s in enumerate(strides) if i not in (d1, d2))
    data = call(input._be, "as_strided", input._data, shape, rest + (strides[d1] + strides[d2],), start)
    return make_view(input, data, shape, "DiagonalBackward0", _diagonal_rule, (input._shape, offset, d1, d2))


_diagonal_view = diagonal


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose ``offset`` diagonals (in dims ``dim1``, ``dim2``) hold the last dim of ``input``."""
    nd = input.ndim + 1
    d1, d2 = _diag_dims(nd, dim1, dim2)
    m = input._shape[-1] + abs(offset) if input.ndim else 1 + abs(offset)
    x = input if input.ndim else input.reshape(1)
    rest = list(x._shape[:-1])
    shape = []
    for i in range(nd):
        shape.append(m if i in (d1, d2) else rest.pop(0))
    if d1 > d2:
        d1, d2, offset = d2, d1, -offset
    return _diagonal_backward(x, tuple(shape), offset, d1, d2)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """1-D input: a matrix with it on diagonal ``diagonal``; 2-D input: that diagonal (a copy)."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return _diagonal_view(input, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def _tri_mask(input: Tensor, diagonal: int, upper: bool) -> Tensor:
    r, c = input._shape[-2], input._shape[-1]
    rows = arange(r, device=input._device).reshape(r, 1)
    cols = arange(c, device=input._device).reshape(1, c)
    return (cols - rows >= diagonal) if upper else (cols - rows <= diagonal)


def _tri(input: Tensor, diagonal: int, upper: bool, name: str) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return where(_tri_mask(input, diagonal, upper), input, 0).to(input.dtype)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (elements with ``col - row <= diagonal``); others zero."""
    return _tri(input, diagonal, False, "tril")


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (elements with ``col - row >= diagonal``); others zero."""
    return _tri(input, diagonal, True, "triu")


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written on its ``offset`` diagonal of ``(dim1, dim2)``."""

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

    ts = [t.reshape(1, 1) if t.ndim == 0 else (t.reshape(1, -1) if t.ndim == 1 else t) for t in tensors]
    for i, t in enumerate(ts):
        if t.ndim != 2:
            raise RuntimeError(
                f"ember.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.ndim} dimensions"
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


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A matrix with the flattened ``input`` on diagonal ``offset``."""
    return diag(input.reshape(-1), offset)
