"""A caching allocator for large host arrays, so big elementwise results cost what the
arithmetic costs.

A fresh 64 MB NumPy array is a fresh ``mmap``: every page faults and is zeroed by the kernel
on first write, which is a third of the time of ``a * b + c`` on 16M floats. PyTorch keeps
freed device memory in a cache for the same reason; this does it for the CPU backend.

Large results are views of byte blocks the cache owns. NumPy points every view's ``base``
at the block, so a block whose reference count is back to "only the cache" has no live
array anywhere (no tensor, view, ``.numpy()`` export or DLPack capsule): it is handed out
again. Blocks are matched by exact size, so a tensor's storage never extends past its
elements. Settings (read at import): ``EMBER_CPU_CACHE_MB`` caps the bytes the cache holds
(0 turns it off), ``EMBER_CPU_CACHE_MIN_BYTES`` is the smallest array it serves.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

__all__ = ["HostCache", "cache"]


def _default_limit() -> int:
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        ram = 8 << 30
    return min(1 << 30, ram // 8)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw.strip() else default
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from None


class HostCache:
    """Exact-size reuse of large byte blocks; thread-safe; reset in a forked child."""

    def __init__(self, limit_bytes: int, min_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.min_bytes = min_bytes
        # A free-threaded interpreter defers reference counting: the idle test would lie.
        gil = getattr(sys, "_is_gil_enabled", lambda: True)()
        self.enabled = limit_bytes > 0 and gil
        self._blocks: dict[int, list[np.ndarray]] = {}
        self._held = 0  # bytes in all cached blocks, busy or idle
        self._lock = threading.Lock()
        self._idle_refs = self._calibrate()

    @staticmethod
    def _calibrate() -> int:
        # The reference count of a block nobody uses, seen from the loop in ``_take``.
        blocks = [np.empty(1, np.uint8)]
        for blk in blocks:
            return sys.getrefcount(blk)
        raise AssertionError("unreachable")

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An uninitialised C-contiguous array, from the cache when it is large."""
        n = 1
        for s in shape:
            n *= s
        nbytes = n * dtype.itemsize
        if nbytes < self.min_bytes or not self.enabled:
            return np.empty(shape, dtype)
        with self._lock:
            blk = self._take(nbytes)
            if blk is None:
                return np.empty(shape, dtype)
            return blk.view(dtype).reshape(shape)

    def _take(self, nbytes: int) -> np.ndarray | None:
        for blk in self._blocks.get(nbytes, ()):
            if sys.getrefcount(blk) <= self._idle_refs:
                return blk
        if self._held + nbytes > self.limit_bytes:
            self._release_idle(self._held + nbytes - self.limit_bytes)
            if self._held + nbytes > self.limit_bytes:
                return None  # the cache is full of live arrays: allocate plainly
        blk = np.empty(nbytes, np.uint8)
        # Looked up again: releasing may have dropped this size's (then empty) list.
        self._blocks.setdefault(nbytes, []).append(blk)
        self._held += nbytes
        return blk

    def _release_idle(self, want: int) -> int:
        freed = 0
        for size, blocks in list(self._blocks.items()):
            keep = []
            for blk in blocks:
                if freed < want and sys.getrefcount(blk) <= self._idle_refs:
                    freed += size
                else:
                    keep.append(blk)
            if keep:
                self._blocks[size] = keep
            else:
                del self._blocks[size]
        self._held -= freed
        return freed

    def empty_cache(self) -> int:
        """Give every idle block back to the system; returns the bytes released."""
        with self._lock:
            return self._release_idle(self._held)

    def held_bytes(self) -> int:
        """Bytes in cached blocks, in use or idle."""
        return self._held

    def _after_fork(self) -> None:
        # The parent's lock may have been held by another thread at fork time.
        self._lock = threading.Lock()


cache = HostCache(
    _env_int("EMBER_CPU_CACHE_MB", _default_limit() >> 20) << 20,
    _env_int("EMBER_CPU_CACHE_MIN_BYTES", 1 << 20),
)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=cache._after_fork)
