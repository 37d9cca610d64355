"""Tensors as engine buffers: a flat array the engine reads or writes, and the copy back.

A tensor on a backend the engine reads natively (CPU for MPI, CUDA for NCCL) is handed over
as its own contiguous array, so an in-place collective writes the tensor itself; any other
tensor is staged through host memory and counted (``host_staging_counts``). Data movement
works on bytes (any dtype moves); reductions upcast half types to float32 and bool to uint8,
which every engine can add.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dispatch import from_host, to_host
from .._tensor import wrap
from . import _pg

__all__ = ["Buf"]

_UPCAST = {"float16": np.float32, "bfloat16": np.float32, "bool": np.uint8}


class Buf:
    """``t`` as a flat engine array: bytes (``reduce=False``) or values (``reduce=True``)."""

    __slots__ = ("a", "aliased", "native", "np_dtype", "reduce", "t")

    def __init__(self, t: Any, engine: Any, reduce: bool = False) -> None:
        from .. import no_grad

        be = t._be
        with no_grad():
            c = t.contiguous()
        self.t, self.reduce = t, reduce
        self.native = engine.native(be.name)
        if self.native:
            a = c._data
        else:
            a = np.ascontiguousarray(to_host(be, c._data))
            _pg._staged[be.name] += 1
        self.aliased = self.native and c is t
        if not a.flags.c_contiguous:  # a contiguous tensor over strided memory (size-1 dims)
            a, self.aliased = a.copy(), False  # reshape(-1) would copy silently: write back instead
        self.np_dtype = a.dtype
        a = a.reshape(-1)
        if reduce:
            up = _UPCAST.get(str(a.dtype))
            if up is not None:
                a, self.aliased = a.astype(up), False
        else:
            a = a.view(np.uint8)
        self.a = a

    def commit(self) -> None:
        """Make the tensor hold what the engine wrote into ``a``."""
        t = self.t
        if self.aliased:
            t._vc[0] += 1
            return
        from .. import no_grad

        a = self.a
        if not self.reduce:
            a = a.view(self.np_dtype)
        elif a.dtype != self.np_dtype:
            a = (a != 0) if self.np_dtype == np.bool_ else a.astype(self.np_dtype)
        a = a.reshape(t.shape)
        data = a if self.native else from_host(t._be, a, t.device.index or 0)
        with no_grad():
            t.copy_(wrap(data, t._be, t.device, t.dtype, tuple(t.shape)))
