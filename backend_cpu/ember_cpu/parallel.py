"""Large elementwise ufunc calls: a cached output buffer and intra-op threads.

NumPy runs one ufunc on one core; PyTorch splits a large elementwise op across its
intra-op thread pool. Ufunc loops release the GIL, so splitting the output into slabs and
running one slab per thread does the same here. Elementwise results do not depend on the
split, so this is deterministic. Small ops never come here (the kernels test the size first):
waking a thread costs up to ~100 µs on a small VM.

Settings: ``set_num_threads`` (``ember.set_num_threads``), default from ``OMP_NUM_THREADS``
or the CPUs this process may run on; ``EMBER_CPU_PARALLEL_MIN`` is the smallest element
count that is split (read at import).
"""

from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from .hostmem import _env_int, cache

__all__ = ["LARGE", "get_num_threads", "run_ufunc", "set_num_threads"]


def _default_threads() -> int:
    omp = os.environ.get("OMP_NUM_THREADS", "").strip()
    if omp.isdigit() and int(omp) > 0:
        return int(omp)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


_PARALLEL_MIN = _env_int("EMBER_CPU_PARALLEL_MIN", 1 << 22)
# Arrays with fewer elements than LARGE take the kernels' plain NumPy path: neither cached
# (16 bytes is the widest element) nor split.
LARGE = max(1, min(_PARALLEL_MIN, cache.min_bytes // 16))
_threads = _default_threads()
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_out_dtypes: dict[tuple[Any, ...], np.dtype] = {}


def set_num_threads(n: int) -> None:
    """Threads used by one large elementwise op (1 turns splitting off)."""
    global _threads, _pool
    with _pool_lock:
        if n != _threads and _pool is not None:
            _pool.shutdown(wait=False)
            _pool = None
        _threads = n


def get_num_threads() -> int:
    return _threads


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_threads - 1, "ember-cpu", _quiet_floating_point)
        return _pool


def _quiet_floating_point() -> None:
    # NumPy's error state is per thread; PyTorch returns inf and nan silently (kernels.py).
    np.seterr(divide="ignore", invalid="ignore", over="ignore", under="ignore")


def _after_fork() -> None:
    # Worker threads do not survive fork; a copied executor would queue work nobody runs.
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _out_dtype(uf: np.ufunc, args: tuple[Any, ...]) -> np.dtype | None:
    key = (uf, *(a.dtype if isinstance(a, np.ndarray) else type(a) for a in args))
    dt = _out_dtypes.get(key)
    if dt is None:
        try:
            dt = uf.resolve_dtypes(key[1:] + (None,))[-1]
        except (TypeError, ValueError):  # a loop NumPy cannot resolve ahead of the call
            return None
        _out_dtypes[key] = dt
    return dt


def _split_axis(shape: tuple[int, ...]) -> int:
    # The first axis longer than one: slabs of the C-contiguous output along it are
    # contiguous (NumPy 2.4's float ``negative`` loop misreads strided input when the
    # output is strided too, and contiguous writes are faster anyway).
    for axis, s in enumerate(shape):
        if s > 1:
            return axis
    return 0


def run_ufunc(
    uf: np.ufunc, args: tuple[Any, ...], shape: tuple[int, ...], n: int, out: np.ndarray | None = None
) -> np.ndarray:
    """``uf(*args)`` for a large result of ``shape`` (``n`` elements), into ``out`` (which
    must then be C-contiguous) or a cached buffer; array arguments have that shape (the
    contract's expanded operands) or are 0-d."""
    if any(isinstance(a, np.ndarray) and a.ndim and a.shape != shape for a in args):
        return uf(*args, out=... if out is None else out)  # operands NumPy must broadcast
    if out is None:
        dt = _out_dtype(uf, args)
        if dt is None:  # a loop NumPy cannot resolve ahead of the call
            return uf(*args, out=...)
        out = cache.empty(shape, dt)
    parts = min(_threads, n // (_PARALLEL_MIN // 2) if _PARALLEL_MIN > 1 else n)
    if parts < 2 or not shape:
        uf(*args, out=out)
        return out
    axis = _split_axis(shape)
    length = shape[axis]
    parts = min(parts, length)
    bounds = [length * i // parts for i in range(parts + 1)]
    lead = (slice(None),) * axis
    slabs = []
    for lo, hi in itertools.pairwise(bounds):
        key = (*lead, slice(lo, hi))
        slab_args = tuple(a[key] if isinstance(a, np.ndarray) and a.ndim else a for a in args)
        slabs.append((slab_args, out[key]))
    pool = _executor()
    futures: list[Future[Any]] = [pool.submit(uf, *a, out=o) for a, o in slabs[1:]]
    try:
        uf(*slabs[0][0], out=slabs[0][1])
    finally:
        for f in futures:  # wait for every slab, also when one of them raised
            f.exception()
    for f in futures:
        f.result()
    return out
