"""Autograd for in-place writes: ``x[key] = v``, ``fill_``, and in-place ops on views.

PyTorch records such writes as ``CopySlices`` nodes: the written tensor's new graph takes
the untouched part of the gradient from its old graph and the written part from the value.
When the written tensor is a view, its base gets the same treatment, so a later backward
through the base sees the write (``b = a.clone(); b[1:].mul_(2)`` differentiates as PyTorch).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ember.backends import dtypes as D

from .._creation import ones, tensor
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import meta, record
from ._common import sum_to
from ._composite import NoRecord

__all__ = [
    "check_view_of_leaf",
    "is_detached",
    "mark_detached",
    "rebase_view",
    "record_fill",
    "record_setitem",
]


def mark_detached(t: Tensor) -> Tensor:
    """Flag a ``detach()`` result: writes through it never reach its base's graph."""
    meta(t)["detached"] = True
    return t


def is_detached(t: Tensor) -> bool:
    return bool(t._meta and t._meta.get("detached"))


def check_view_of_leaf(t: Tensor) -> None:
    base = t._base
    if (
        _grad.enabled
        and base is not None
        and base.requires_grad
        and base.grad_fn is None
        and not is_detached(t)
    ):
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


# -- x[key] = value --------------------------------------------------------------------------
def _setitem_rule(n: Any, g: Tensor) -> tuple:
    from .indexing import getitem  # cycle: ember._ops.indexing

    key, mask, vshape, vdtype = n.ctx
    need = n.needs_input_grad
    gx = g * mask if need[0] else None
    gv = None
    if need[1]:
        gv = getitem(g, key)
        gv = gv.reshape(vshape) if len(vshape) > gv.ndim else sum_to(gv, vshape)
        gv = gv.to(vdtype) if gv.dtype is not vdtype else gv
    return gx, gv


def _key_mask(x: Tensor, key: Any) -> Tensor:
    from .indexing import setitem  # cycle: ember._ops.indexing

    with NoRecord():
        mask = ones(x._shape, dtype=x.dtype, device=x._device)
        setitem(mask, key, 0)
    return mask


def record_setitem(x: Tensor, key: Any, value: Any) -> None:
    """After ``x[key] = value`` was written: give ``x`` (and its base) a ``CopySlices`` node."""
    if not (x.requires_grad or getattr(value, "requires_grad", False)):
        return
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        return
    vt = value if isinstance(value, Tensor) else None
    ctx = (key, _key_mask(x, key), vt._shape if vt is not None else (), vt.dtype if vt is not None else None)
    record("CopySlices", _setitem_rule, x, (x, vt), (), ctx)
    rebase_view(x)


# -- fill_ / zero_ ---------------------------------------------------------------------------
def _fill_rule(n: Any, g: Tensor) -> tuple:
    return (g * 0,)


def record_fill(t: Tensor) -> None:
    """A filled tensor no longer depends on its old values: its gradient is zero."""
    if t.requires_grad and t.grad_fn is not None:
        record("FillBackward0", _fill_rule, t, (t,), (), None)
        rebase_view(t)


# -- in-place ops on views --------------------------------------------------------------------
def _copy_slices_rule(n: Any, g: Tensor) -> tuple:
    index, mask = n.ctx
    need = n.needs_input_grad
    gb = g * mask if need[0] else None
    gv = g.reshape(-1)[index] if need[1] else None
    return gb, gv


def _logical_positions(base: Tensor, view: Tensor) -> np.ndarray:
    """For each element of ``view``, the flat (row-major) index of the same element in ``base``."""
    layout = base._be.backend.layout
    (bs, bo), (vs, vo) = layout(base._data), layout(view._data)
    base_off = (
        bo + sum(np.indices(base._shape, dtype=np.int64)[i] * s for i, s in enumerate(bs))
        if base._shape
        else np.array(bo)
    )
    view_off = (
        vo + sum(np.indices(view._shape, dtype=np.int64)[i] * s for i, s in enumerate(vs))
        if view._shape
        else np.array(vo)
    )
    flat = np.asarray(base_off, dtype=np.int64).reshape(-1)
    order = np.argsort(flat, kind="stable")
    pos = np.searchsorted(flat[order], np.asarray(view_off, dtype=np.int64).reshape(-1))
    return order[pos].reshape(view._shape)


def rebase_view(v: Tensor) -> None:
    """After an in-place op recorded a node on view ``v``, route the base's graph through it."""
    base = v._base
    if base is None or is_detached(v) or not v.requires_grad or not _grad.enabled:
        return

    index = tensor(_logical_positions(base, v), dtype=D.int64, device=base._device)
    with NoRecord():
        mask = ones(base._shape, dtype=base.dtype, device=base._device).reshape(-1)
        mask[index.reshape(-1)] = 0
        mask = mask.reshape(base._shape)
    record("CopySlices", _copy_slices_rule, base, (base, v), (), (index, mask))
