"""The OpenCL Backend object: device discovery, allocation, host transfer, layouts.

Cheap to construct (the ``ember_backend`` hook must not touch hardware): the platform is
queried on the first call that needs it, and the declared dtypes follow the first device's
extensions (float64 with cl_khr_fp64; the half types need none, see dtypes.py).
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Any

import numpy as np
from ember.backends import CONTRACT_VERSION, DType, UnsupportedDTypeError

from . import runtime
from .clarray import CLArray, empty
from .dtypes import BASE_DTYPES, FP64, from_np, to_np

__all__ = ["OpenCLBackend", "check_dtype", "declared_dtypes"]

# Per device: the reserved bytes' peak as of the last empty_cache or reset (see memory_stats).
_peak_reserved: dict[int, int] = {}


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
    # Optional attributes (docs/backend-guide.md): a real device, so it wins over example
    # backends as ``ember.accelerator``; CUDA (priority 20) wins over it where both run.
    is_accelerator = True
    accelerator_priority = 10

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

    def kernel_events(self) -> Any:
        """Optional (ember.profiler's device time): kernels timed by OpenCL's profiling counters."""
        from .events import KernelEvents

        return KernelEvents()

    def compile_graph(self, graph: Any) -> Any:
        """Optional (ember.compile, ember.backends.graph): each elementwise chain as one kernel."""
        from .fuse import compile_graph

        return compile_graph(graph)

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

    # Optional: memory statistics for ember.accelerator.memory, from the device's buffer pool.
    # pyopencl's pool counts the bytes of live buffers itself (a buffer gives its bytes back
    # when its array is freed); runtime.Device.alloc keeps the allocated peak, empty_cache the
    # reserved one (the pool's reserved bytes fall only when it frees what it holds: there, or
    # in pyopencl's own retry after an out-of-memory error, which that peak may miss).

    def memory_stats(self, index: int) -> dict[str, int]:
        dev = runtime._states.get(index)  # never creates the device: empty before first use
        if dev is None:
            return {}
        pool = dev.pool
        allocated, reserved = pool.active_bytes, pool.managed_bytes
        return {
            "allocated_bytes.all.current": allocated,
            "allocated_bytes.all.peak": max(allocated, getattr(dev, "peak_allocated", 0)),
            "reserved_bytes.all.current": reserved,
            "reserved_bytes.all.peak": max(reserved, _peak_reserved.get(index, 0)),
            "active.all.current": pool.active_blocks,
            "segment.all.current": pool.active_blocks + pool.held_blocks,
        }

    def reset_peak_memory_stats(self, index: int) -> None:
        dev = runtime._states.get(index)
        if dev is not None:
            dev.peak_allocated, _peak_reserved[index] = dev.pool.active_bytes, dev.pool.managed_bytes

    def empty_cache(self, index: int) -> None:
        dev = runtime._states.get(index)
        if dev is not None:
            # The reserved bytes grow only in alloc and fall only here: their peak is kept now.
            _peak_reserved[index] = max(_peak_reserved.get(index, 0), dev.pool.managed_bytes)
            dev.pool.free_held()

    # Optional: streams and events. Each device has ONE in-order command queue, so every Stream
    # on an OpenCL device is that queue (stream_id 0): work on two streams is ordered, never
    # concurrent. Events are markers enqueued on it.

    def new_stream(self, index: int, priority: int = 0) -> QueueStream:
        return QueueStream(runtime.device(index))

    def current_stream(self, index: int) -> QueueStream:
        return QueueStream(runtime.device(index))

    def set_current_stream(self, index: int, stream: QueueStream) -> None:
        return None  # there is only the one queue

    def new_event(self, index: int, enable_timing: bool) -> MarkerEvent:
        return MarkerEvent(runtime.device(index))


def _done(ev: Any, queue: Any) -> bool:
    import pyopencl as cl

    queue.flush()  # a marker not yet submitted would never complete
    return bool(ev.command_execution_status == cl.command_execution_status.COMPLETE)


class QueueStream:
    """The device's in-order queue as an ``ember.accelerator.Stream``."""

    id = 0

    def __init__(self, dev: runtime.Device) -> None:
        self.dev = dev
        self.native = dev.queue

    def query(self) -> bool:
        """OpenCL cannot tell an idle queue without a marker that must itself run (a fresh
        one reads "not done" for a moment even on an idle queue): this waits for the queue,
        then says True. Events' ``query`` does not wait."""
        self.dev.queue.finish()
        return True

    def synchronize(self) -> None:
        self.dev.queue.finish()

    def wait_event(self, event: MarkerEvent) -> None:
        if event.marker is None or event.dev is self.dev:
            return  # later work on the same in-order queue runs after the marker anyway
        event.marker.wait()  # another device's context: OpenCL cannot chain them; the host waits


_event_ids = itertools.count(1)


class MarkerEvent:
    """A marker on the device's queue; timing reads the markers' profiling counters, which
    exist only when the queue was created with profiling enabled."""

    def __init__(self, dev: runtime.Device) -> None:
        self.dev = dev
        self.marker: Any = None
        self.id = next(_event_ids)

    def record(self, stream: QueueStream) -> None:
        import pyopencl as cl

        self.marker = cl.enqueue_marker(stream.dev.queue)

    def query(self) -> bool:
        return True if self.marker is None else _done(self.marker, self.dev.queue)

    def synchronize(self) -> None:
        if self.marker is not None:
            self.marker.wait()

    def elapsed_time(self, end: MarkerEvent) -> float:
        import pyopencl as cl

        if self.marker is None or end.marker is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not self.dev.queue.properties & cl.command_queue_properties.PROFILING_ENABLE:
            raise RuntimeError(
                "opencl: Event.elapsed_time needs a command queue created with profiling enabled; "
                "this device's queue was created without it"
            )
        end.marker.wait()
        return (end.marker.profile.end - self.marker.profile.end) / 1e6
