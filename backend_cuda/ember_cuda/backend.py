"""The CUDA Backend object: CuPy arrays on ``cuda:N``, host transfer, layouts.

Cheap to construct and never touches the GPU (the ``ember_backend`` hook must not):
availability is asked through ``unavailable_reason``, which reports the driver's error on
machines without a GPU. Layouts are in elements relative to the start of the allocation
(``x.data.mem``), which is what ``as_strided`` and the frontend's aliasing checks key on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ember.backends import CONTRACT_VERSION, DType

from . import runtime
from .dtypes import DECLARED, check, to_np

__all__ = ["CUDABackend", "storage_offset"]

cupy = runtime.cupy_or_none()


def storage_offset(x: Any) -> int:
    """Offset of ``x``'s first element from the start of its allocation, in elements."""
    return (x.data.ptr - x.data.mem.ptr) // x.itemsize if x.itemsize else 0


class CUDABackend:
    """CuPy-backed devices ``cuda:0``, ``cuda:1``, ... (one per visible GPU)."""

    name = "cuda"
    version = "0.1.0"
    contract_version = CONTRACT_VERSION
    dtypes = DECLARED
    contiguous_only = False
    # scatter picks a deterministic kernel itself under use_deterministic_algorithms
    # (see indexing.py), so no op is declared nondeterministic: declaring it would make
    # the registry raise instead of running that deterministic path.
    nondeterministic: frozenset[str] = frozenset()
    array_type: type = cupy.ndarray if cupy is not None else type(None)

    def unavailable_reason(self) -> str | None:
        return runtime.unavailable_reason()

    def device_count(self) -> int:
        return runtime.device_count()

    def device_name(self, index: int) -> str:
        return runtime.device_name(index)

    def synchronize(self, index: int) -> None:
        cupy.cuda.Device(index).synchronize()

    def empty(self, shape: tuple[int, ...], dtype: DType, index: int) -> Any:
        nd = to_np(dtype)
        with cupy.cuda.Device(index):
            return cupy.empty(tuple(shape), nd)

    def from_numpy(self, array: np.ndarray, index: int) -> Any:
        check_np(array.dtype)
        with cupy.cuda.Device(index):
            return cupy.array(array, copy=True)

    def to_numpy(self, x: Any) -> np.ndarray:
        # cupy.asnumpy copies on the current stream and synchronises.
        with x.device:
            return cupy.asnumpy(x)

    def layout(self, x: Any) -> tuple[tuple[int, ...], int]:
        size = x.itemsize
        return tuple(s // size for s in x.strides), storage_offset(x)

    def index_of(self, x: Any) -> int:
        return int(x.device.id)

    def storage_id(self, x: Any) -> int:
        return id(x.data.mem)


def check_np(d: np.dtype) -> None:
    """UnsupportedDTypeError for a host array whose dtype the backend does not declare."""
    from .dtypes import from_np

    check(from_np(d))
