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
    # Optional attributes (docs/backend-guide.md): the preferred accelerator where it runs.
    is_accelerator = True
    accelerator_priority = 20

    def __init__(self) -> None:
        # CuPy keeps no peaks: count them from here on (no GPU call; see _PeakTracker).
        if cupy is not None:
            _PeakTracker.install()

    def unavailable_reason(self) -> str | None:
        return runtime.unavailable_reason()

    def device_count(self) -> int:
        return runtime.device_count()

    def device_name(self, index: int) -> str:
        return runtime.device_name(index)

    def synchronize(self, index: int) -> None:
        cupy.cuda.Device(index).synchronize()

    def kernel_events(self) -> Any:
        """Optional (ember.profiler's device time): kernel calls timed by CUDA events."""
        from .events import KernelEvents

        return KernelEvents()

    def compile_graph(self, graph: Any) -> Any:
        """Optional (ember.compile, ember.backends.graph): each elementwise chain as one kernel."""
        from .fuse import compile_graph

        return compile_graph(graph)

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

    # Optional: memory statistics for ember.accelerator.memory, from CuPy's default memory
    # pool (every CuPy array of the process, ember's and any other), with its peaks.

    def memory_stats(self, index: int) -> dict[str, int]:
        pool = cupy.get_default_memory_pool()
        with cupy.cuda.Device(index):
            used, total = int(pool.used_bytes()), int(pool.total_bytes())
        tracker = _PeakTracker.active
        peak_used = tracker.peak_used.get(index, 0) if tracker else 0
        peak_total = tracker.peak_total.get(index, 0) if tracker else 0
        return {
            "allocated_bytes.all.current": used,
            "allocated_bytes.all.peak": max(used, peak_used),
            "reserved_bytes.all.current": total,
            "reserved_bytes.all.peak": max(total, peak_total),
        }

    def reset_peak_memory_stats(self, index: int) -> None:
        tracker = _PeakTracker.active
        if tracker is not None:
            pool = cupy.get_default_memory_pool()
            with cupy.cuda.Device(index):
                tracker.peak_used[index], tracker.peak_total[index] = pool.used_bytes(), pool.total_bytes()

    def empty_cache(self, index: int) -> None:
        tracker = _PeakTracker.active
        pool = cupy.get_default_memory_pool()
        with cupy.cuda.Device(index):
            if tracker is not None:  # reserved bytes fall only here: keep their peak first
                tracker.peak_total[index] = max(tracker.peak_total.get(index, 0), pool.total_bytes())
            pool.free_all_blocks()

    def memory_info(self, index: int) -> tuple[int, int]:
        with cupy.cuda.Device(index):
            free, total = cupy.cuda.runtime.memGetInfo()
        return int(free), int(total)

    # Optional: CUDA streams and events (CuPy's), for ember.accelerator.Stream/Event. ember's
    # kernels launch on CuPy's current stream, which set_current_stream changes.

    def new_stream(self, index: int, priority: int = 0) -> CupyStream:
        with cupy.cuda.Device(index):
            if priority:
                try:  # a scheduling hint; CuPy versions without the argument ignore it
                    return CupyStream(cupy.cuda.Stream(priority=priority))
                except TypeError:
                    pass
            return CupyStream(cupy.cuda.Stream())

    def current_stream(self, index: int) -> CupyStream:
        with cupy.cuda.Device(index):
            return CupyStream(cupy.cuda.get_current_stream())

    def set_current_stream(self, index: int, stream: CupyStream) -> None:
        with cupy.cuda.Device(index):
            stream.native.use()

    def new_event(self, index: int, enable_timing: bool) -> CupyEvent:
        with cupy.cuda.Device(index):
            return CupyEvent(cupy.cuda.Event(disable_timing=not enable_timing))


class CupyStream:
    """A CuPy stream as an ``ember.accelerator.Stream`` handle (id: its pointer; 0 = default)."""

    def __init__(self, native: Any) -> None:
        self.native = native
        self.id = int(native.ptr)

    def query(self) -> bool:
        return bool(self.native.done)

    def synchronize(self) -> None:
        self.native.synchronize()

    def wait_event(self, event: CupyEvent) -> None:
        self.native.wait_event(event.native)


class CupyEvent:
    """A CuPy event as an ``ember.accelerator.Event`` handle."""

    def __init__(self, native: Any) -> None:
        self.native = native
        self.id = int(native.ptr)

    def record(self, stream: CupyStream) -> None:
        self.native.record(stream.native)

    def query(self) -> bool:
        return bool(self.native.done)

    def synchronize(self) -> None:
        self.native.synchronize()

    def elapsed_time(self, end: CupyEvent) -> float:
        return float(cupy.cuda.get_elapsed_time(self.native, end.native))


class _PeakTracker:
    """CuPy's allocator, wrapped to record per-device peaks of its default pool after each
    allocation (one Python call per allocation: far below a kernel launch). Installed once,
    around whatever allocator is current; a later ``cupy.cuda.set_allocator`` replaces it and
    the peaks stop moving (the current values stay right)."""

    active: _PeakTracker | None = None

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.pool = cupy.get_default_memory_pool()
        self.peak_used: dict[int, int] = {}
        self.peak_total: dict[int, int] = {}

    @classmethod
    def install(cls) -> None:
        if cls.active is None:
            tracker = cls(cupy.cuda.get_allocator())
            try:
                cupy.cuda.set_allocator(tracker)
            except ValueError:  # inside cupy.cuda.using_allocator: leave it be, no peaks
                return
            cls.active = tracker

    def __call__(self, nbytes: int) -> Any:
        mem = self.inner(nbytes)
        index = int(mem.device_id)  # the current device, whose pool the next reads are
        used, total = self.pool.used_bytes(), self.pool.total_bytes()
        if used > self.peak_used.get(index, 0):
            self.peak_used[index] = used
        if total > self.peak_total.get(index, 0):
            self.peak_total[index] = total
        return mem


def check_np(d: np.dtype) -> None:
    """UnsupportedDTypeError for a host array whose dtype the backend does not declare."""
    from .dtypes import from_np

    check(from_np(d))
