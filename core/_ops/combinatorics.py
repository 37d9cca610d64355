"""Matrices built from vectors: ``cartesian_prod``, ``combinations`` and ``vander``."""

from __future__ import annotations

import itertools

from ember.backends import dtypes as D

from .._creation import arange, zeros
from .._public import op, public
from .._tensor import Tensor
from .indexing_scatter import _index_vector
from .join import stack
from .shape import meshgrid

PUBLIC = public(
    __name__,
    {
        "cartesian_prod": op(),
        "combinations": op(),
        "vander": op(),
    },
)
__all__ = [*PUBLIC]


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
        return (
            zeros(0, dtype=input.dtype, device=input._device)
            if r == 0
            else zeros(0, r, dtype=input.dtype, device=input._device)
        )
    idx = _index_vector(input, [i for c in combos for i in c])
    return input.index_select(0, idx).reshape(len(combos), r)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """Powers of the 1-D ``x`` as columns (decreasing unless ``increasing``)."""

    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    p = arange(n, device=x._device)
    if not increasing:
        p = n - 1 - p
    base = x if x.dtype.category >= 2 else x.to(D.int64)
    return base.unsqueeze(-1) ** p.to(base.dtype)
