"""The OpenCL Backend object: device discovery, allocation, host transfer, layouts.

Cheap to construct (the ``ember_backend`` hook must not touch hardware): the platform is
queried on the first call that needs it, and the declared dtypes follow the first device's
extensions (float64 with cl_khr_fp64; the half types need none, see dtypes.py).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from ember.backends import CONTRACT_VERSION, DType, UnsupportedDTypeError

from . import runtime
from .clarray import CLArray, empty
from .dtypes import BASE_DTYPES, FP64, from_np, to_np

__all__ = ["OpenCLBackend", "check_dtype", "declared_dtypes"]


@lru_cache(maxsize=1)
def declared_dtypes() -> frozenset[DType]:
    devs = runtime.devices()
    fp64 = bool(devs) and "cl_khr_fp64" in devs[0].extensions.split()
    return frozenset(BASE_DTYPES) | frozenset(FP64 if fp64 else ())


def check_dtype(dtype: DType | None, what: str = "") -> DType:
    """Raise UnsupportedDTypeError unless the backend declares ``dtype``."""
    if dtype is None or dtype not in declared_dtypes():
        name = getattr(dtype, "name", what or str(dtype))
        supported = ", ".join(sorted(d.name for d in declared_dtypes()))
        raise UnsupportedDTypeError(
            f"opencl: backend 'opencl' has no {name} support (supported: {supported}); use .to('cpu')"
        )
    return dtype


class OpenCLBackend:
    """PyOpenCL-backed devices ``opencl:0``, ``opencl:1``, ... (one per OpenCL device)."""

    name = "opencl"
    version = "0.1.0"
    contract_version = CONTRACT_VERSION
    contiguous_only = False
    nondeterministic: frozenset[str] = frozenset()
    array_type = CLArray

    @property
    def dtypes(self) -> frozenset[DType]:
        return declared_dtypes()

    def unavailable_reason(self) -> str | None:
        return runtime.unavailable_reason()

    def device_count(self) -> int:
        return len(runtime.devices())

    def device_name(self, index: int) -> str:
        d = runtime.devices()[index]
        return f"{d.name.strip()} ({d.platform.name.strip()})"

    def synchronize(self, index: int) -> None:
        runtime.device(index).queue.finish()  # device() refuses in a forked child

    def empty(self, shape: tuple[int, ...], dtype: DType, index: int) -> CLArray:
        check_dtype(dtype)
        return empty(runtime.device(index), tuple(shape), dtype)

    def from_numpy(self, array: np.ndarray, index: int) -> CLArray:
        import pyopencl as cl

        dtype = check_dtype(from_np(array.dtype), what=str(array.dtype))
        # (np.ascontiguousarray would turn a 0-d array into 1-d)
        host = array if array.flags.c_contiguous else np.ascontiguousarray(array)
        out = empty(runtime.device(index), tuple(array.shape), dtype)
        if host.size:
            cl.enqueue_copy(out.dev.queue, out.buf, host, is_blocking=True)
        return out

    def to_numpy(self, x: CLArray) -> np.ndarray:
        import pyopencl as cl

        from .elementwise import clone

        runtime.check_fork()
        out = np.empty(x.shape, to_np(x.dtype))
        if out.size == 0:
            return out
        if not x.is_contiguous():
            x = clone(x)
        cl.enqueue_copy(x.dev.queue, out, x.buf, src_offset=x.offset * x.dtype.itemsize, is_blocking=True)
        return out

    def layout(self, x: CLArray) -> tuple[tuple[int, ...], int]:
        return x.strides, x.offset

    def index_of(self, x: CLArray) -> int:
        return x.dev.index

    def storage_id(self, x: CLArray) -> int:
        return id(x.buf)
