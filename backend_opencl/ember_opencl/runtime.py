"""Devices, contexts, queues and the per-process cache of compiled kernels.

Nothing here touches OpenCL at import: the platform is queried on first use, so importing
the plugin works on machines without any OpenCL driver (DESIGN.md: unavailable, not a
crash). Kernels are generated per signature (op, dtypes, rank, ...) and compiled once per
process and device; the cache is a plain dict keyed by that signature, and the compiled
programs are kept on disk across processes (``progcache.py``).

Every kernel launch goes through ``launch`` or ``launch_nd``: while ember's profiler records
(``events.py``) they log each launch's OpenCL event, whose profiling counters time it.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import progcache

__all__ = [
    "Device",
    "KernelSpec",
    "check_flag",
    "check_fork",
    "device",
    "devices",
    "kernel",
    "launch",
    "launch_nd",
    "reset_flag",
    "unavailable_reason",
]

# (source, kernel name, scalar argument dtypes: None for buffers)
KernelSpec = tuple[str, str, list[Any]]

# Exactly rounded division and sqrt, so float32 results match NumPy's bit for bit.
_BUILD_OPTIONS = ["-cl-fp32-correctly-rounded-divide-sqrt"]
# Work-group size used for 1-D launches; the global size is rounded up to a multiple.
LOCAL_SIZE = 128
# Elements per work item in elementwise kernels: a short contiguous loop per work item is
# what CPU devices vectorise best (measured on PoCL: about twice one element per item).
CHUNK = 64

_devices: list[Any] | None = None
_reason: str | None = None
_states: dict[int, Device] = {}
_forked = False
# (device, kernel, event) of each launch while a profiler records kernel events, else None.
kernel_log: list[tuple[Device, Any, Any]] | None = None


def _after_fork_in_child() -> None:
    # An OpenCL runtime's worker threads do not survive fork(): the first call in the
    # child would wait for them forever (PoCL), so a forked child must not touch it.
    global _forked
    if _states:
        _forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def check_fork() -> None:
    """Raise instead of hanging when OpenCL is used in a child forked after it started."""
    if _forked:
        raise RuntimeError(
            "opencl: cannot use OpenCL in a forked subprocess (the OpenCL runtime does not survive "
            "fork); to use the 'opencl' device with multiprocessing, use the 'spawn' start method, "
            "e.g. DataLoader(..., multiprocessing_context='spawn')"
        )


def devices() -> list[Any]:
    """All OpenCL devices of all platforms, in platform order (empty when none)."""
    global _devices, _reason
    if _devices is None:
        try:
            import pyopencl as cl
        except ImportError as e:
            _devices, _reason = [], f"pyopencl cannot be imported ({type(e).__name__}: {e})"
            return _devices
        try:
            found = [d for p in cl.get_platforms() for d in p.get_devices()]
            _reason = None if found else "no OpenCL device found on any platform"
        except Exception as e:  # noqa: BLE001 - any driver failure (LogicError, ...) = unavailable
            found = []
            _reason = f"no OpenCL platform found ({type(e).__name__}: {e})"
        _devices = found
    return _devices


def unavailable_reason() -> str | None:
    devices()
    return _reason


class Device:
    """One OpenCL device with its own context, in-order queue and kernel cache."""

    def __init__(self, index: int, dev: Any) -> None:
        import pyopencl as cl

        self.index = index
        self.dev = dev
        self.ctx = cl.Context([dev])
        # Profiling on always: it costs nothing measurable per launch on PoCL, and the
        # profiler's device times (events.py) read its counters.
        self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        exts = dev.extensions.split()
        self.fp64 = "cl_khr_fp64" in exts
        self.fp16 = "cl_khr_fp16" in exts
        self.is_cpu = bool(dev.type & cl.device_type.CPU)
        self.local_mem = int(dev.local_mem_size)
        # float lanes of the widest native vector (16 on AVX-512 CPUs): the matmul's block
        self.vector_width = int(getattr(dev, "native_vector_width_float", 0) or 0)
        self.kernels: dict[tuple[Any, ...], Any] = {}
        root = progcache.cache_root()
        self.programs = progcache.ProgramCache(root, dev) if root is not None else None
        # Buffers are recycled: a fresh allocation costs page faults on first touch (on a
        # CPU device more than the kernel itself), so freed buffers go back to the pool.
        from pyopencl.tools import ImmediateAllocator, MemoryPool

        self.pool = MemoryPool(ImmediateAllocator(self.queue))
        # One int: kernels that detect bad input (an index out of range) set it.
        self.flag = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, 4)

    def alloc(self, nbytes: int) -> Any:
        if _forked:
            check_fork()
        pool = self.pool
        buf = pool.allocate(max(nbytes, 1))
        # ember.accelerator's max_memory_allocated (the pool counts the current bytes itself;
        # the reserved bytes only fall in empty_cache, which keeps their peak).
        used = pool.active_bytes
        if used > getattr(self, "peak_allocated", 0):
            self.peak_allocated = used
        return buf


def device(index: int) -> Device:
    check_fork()
    state = _states.get(index)
    if state is None:
        devs = devices()
        if not 0 <= index < len(devs):
            raise RuntimeError(f"opencl: device index {index} out of range ({len(devs)} devices)")
        state = _states[index] = Device(index, devs[index])
    return state


def _preamble(src: str) -> str:
    # No silent a*b+c -> fma contraction: results must round like NumPy's; kernels that
    # want fused multiply-add (matmul) call fma() explicitly.
    lines = ["#pragma OPENCL FP_CONTRACT OFF", f"#define EMBER_CHUNK {CHUNK}"]
    if "double" in src:
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    # float16 is storage only (ushort bits, dtypes.F16_SRC): no cl_khr_fp16 pragma.
    return "\n".join(lines + [src])


def kernel(dev: Device, key: tuple[Any, ...], make: Callable[[], KernelSpec]) -> Any:
    """The compiled kernel for signature ``key``, building it with ``make()`` on a miss."""
    if _forked:
        check_fork()
    knl = dev.kernels.get(key)
    if knl is None:
        src, name, arg_dtypes = make()
        knl = getattr(build(dev, _preamble(src), _BUILD_OPTIONS), name)
        knl.set_scalar_arg_dtypes(arg_dtypes)
        dev.kernels[key] = knl
    elif progcache.progress.bar is not None:
        progcache.progress.idle()
    return knl


def build(dev: Device, source: str, options: list[str]) -> Any:
    """The built program: from ember's disk cache when there, else compiled from source
    (with the progress line); the second process to compile it stores its binary for the
    next ones (progcache.py says why not the first)."""
    import pyopencl as cl

    cache = dev.programs
    with warnings.catch_warnings():  # PoCL's harmless ABI notes about 8-wide vectors
        warnings.simplefilter("ignore", cl.CompilerWarning)
        binary = cache.load(source, options) if cache is not None else None
        if binary is not None:
            # A binary the driver refuses (any error): compile the source instead.
            with contextlib.suppress(Exception):
                return cl.Program(dev.ctx, [dev.dev], [binary]).build(options=options)
        progress = progcache.progress
        progress.cached = cache is not None
        progress.begin()
        try:
            prg = cl.Program(dev.ctx, source).build(options=options)
            if cache is not None:  # inside the progress: reading the binary compiles too
                if cache.seen(source, options):
                    cache.store(source, options, prg.get_info(cl.program_info.BINARIES)[0])
                else:
                    cache.mark_seen(source, options)
        finally:
            progress.end()
    return prg


def launch(dev: Device, knl: Any, n: int, args: list[Any], local: int = LOCAL_SIZE) -> None:
    """Run a 1-D kernel over ``n`` work items (rounded up; kernels check ``gid < n``)."""
    if n <= 0:
        return
    size = (n + local - 1) // local * local
    ev = knl(dev.queue, (size,), (local,), *args)
    if kernel_log is not None:
        kernel_log.append((dev, knl, ev))


def launch_nd(
    dev: Device, knl: Any, global_size: tuple[int, ...], local: tuple[int, ...] | None, args: list[Any]
) -> None:
    """Run a kernel over an N-D range as given (the caller rounds ``global_size``)."""
    ev = knl(dev.queue, global_size, local, *args)
    if kernel_log is not None:
        kernel_log.append((dev, knl, ev))


def reset_flag(dev: Device) -> None:
    import pyopencl as cl

    cl.enqueue_fill_buffer(dev.queue, dev.flag, np.zeros(1, np.int32), 0, 4)


def check_flag(dev: Device) -> int:
    """Read (and wait for) the error flag that the last flagged kernel may have set."""
    import pyopencl as cl

    out = np.zeros(1, np.int32)
    cl.enqueue_copy(dev.queue, out, dev.flag)
    return int(out[0])
