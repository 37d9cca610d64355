"""Kernel times from CUDA events, for ember's profiler: what the backend's optional
``kernel_events()`` hook returns (docs/profiler.md, "Device time").

CuPy launches its kernels itself, so there is no launch door to log: each mark records an
event on the current device's current stream, and the device time of one kernel call is the
time between the events recorded before and after it (its kernels, and any gap the device
waited for the host between them). Nothing waits during the profile. Events give elapsed
times, not clock readings: they are placed on ``time.perf_counter_ns``'s clock from a
reference event that the host waits for when the session's first mark is made.
"""

from __future__ import annotations

import time
from typing import Any

from . import runtime

__all__ = ["KernelEvents"]

Record = tuple[str, int, int]  # (kernel name, start_ns, end_ns) on perf_counter_ns's clock


class KernelEvents:
    """One profile's CUDA events, on the devices current when each mark is made."""

    def __init__(self, cupy: Any = None) -> None:
        self.cupy = cupy if cupy is not None else runtime.cupy_or_none()
        self.marks: list[Any] = []
        self.times: list[int] = []
        self._ref: Any = None
        self._ref_ns = 0

    def start(self) -> None:
        self.marks, self.times, self._ref = [], [], None

    def mark(self) -> int:
        """Record an event on the current stream; returns its index."""
        ev = self.cupy.cuda.Event()
        ev.record()
        if self._ref is None:  # the clock reference: the host waits for it once
            ev.synchronize()
            self._ref, self._ref_ns = ev, time.perf_counter_ns()
        self.marks.append(ev)
        return len(self.marks) - 1

    def stop(self) -> None:
        """Wait for the last event, then read every event's time from the reference."""
        if not self.marks:
            return
        self.marks[-1].synchronize()
        elapsed_ms = self.cupy.cuda.get_elapsed_time
        self.times = [self._ref_ns + round(elapsed_ms(self._ref, ev) * 1e6) for ev in self.marks]

    def between(self, a: int, b: int) -> list[Record]:
        """The device time between marks ``a`` and ``b`` as one record (named by the caller)."""
        if b >= len(self.times):
            return []
        return [("", self.times[a], self.times[b])]
