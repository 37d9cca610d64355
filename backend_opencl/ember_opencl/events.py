"""Kernel times from OpenCL's profiling counters, for ember's profiler: what the backend's
optional ``kernel_events()`` hook returns (docs/profiler.md, "Device time").

While a session records, ``runtime.launch``/``launch_nd`` log every launch's event (the queues
are created with profiling enabled). Nothing waits during the profile: ``stop`` finishes the
queues, then reads each event's start and end. Those are on the device's clock (PoCL's is
CLOCK_MONOTONIC_RAW, about 0.1 s from ``time.perf_counter_ns`` here), so they are moved onto
the host's by markers: a marker's QUEUED time is taken while ``enqueue_marker`` runs, between
two host clock reads, which bounds the offset (the narrowest of a few tries; at the session's
start and stop, interpolated between them to follow drift).
"""

from __future__ import annotations

import time

from . import runtime

__all__ = ["KernelEvents"]

Record = tuple[str, int, int]  # (kernel name, start_ns, end_ns) on perf_counter_ns's clock

_sessions: list[KernelEvents] = []


def _calibrate(dev: runtime.Device, tries: int = 8) -> tuple[int, int, int]:
    """(device time, host minus device offset, uncertainty) from the narrowest of ``tries`` markers."""
    import pyopencl as cl

    marks = []
    for _ in range(tries):
        h0 = time.perf_counter_ns()
        ev = cl.enqueue_marker(dev.queue)
        marks.append((h0, time.perf_counter_ns(), ev))
    dev.queue.finish()  # profiling counters are readable once a command completed
    best = (0, 0, 1 << 62)
    for h0, h1, ev in marks:
        queued = int(ev.profile.queued)
        half = (h1 - h0 + 1) // 2
        if half < best[2]:
            best = (queued, h0 + half - queued, half)
    return best


class KernelEvents:
    """One profile's record of the OpenCL kernels launched on any device of this process."""

    def __init__(self) -> None:
        self.base = 0
        self.records: list[Record | None] = []
        # The clock alignment's uncertainty (ns): how far a converted time may be off.
        self.clock_error_ns = 0
        self._before: dict[runtime.Device, tuple[int, int, int]] = {}

    def start(self) -> None:
        if runtime.kernel_log is None:
            runtime.kernel_log = []
        _sessions.append(self)
        self.base = len(runtime.kernel_log)
        self.records = []
        # Devices created later are aligned at stop only.
        self._before = {dev: _calibrate(dev) for dev in list(runtime._states.values())}

    def mark(self) -> int:
        """A position in the launch log: the launches between two marks are one call's."""
        log = runtime.kernel_log
        return len(log) if log is not None else self.base + len(self.records)

    def stop(self) -> None:
        """Wait for the logged kernels and read their times (one read per launch)."""
        if self not in _sessions:
            return
        log = runtime.kernel_log or []
        entries = log[self.base :]
        _sessions.remove(self)
        if not _sessions:
            runtime.kernel_log = None
        devs = list(dict.fromkeys(dev for dev, _, _ in entries))
        align = {}
        for dev in devs:
            dev.queue.finish()
            after = _calibrate(dev)
            align[dev] = (self._before.get(dev), after)
            self.clock_error_ns = max(self.clock_error_ns, after[2], self._before.get(dev, after)[2])
        names: dict[int, str] = {}
        records: list[Record | None] = []
        for dev, knl, ev in entries:
            try:
                prof = ev.profile
                start, end = int(prof.start), int(prof.end)
            except Exception:  # noqa: BLE001 - a failed command has no times: no record
                records.append(None)
                continue
            name = names.get(id(knl))
            if name is None:
                name = names[id(knl)] = str(knl.function_name)
            before, after = align[dev]
            records.append((name, start + _offset(before, after, start), end + _offset(before, after, end)))
        self.records = records

    def between(self, a: int, b: int) -> list[Record]:
        """The kernels launched between marks ``a`` and ``b``, after ``stop``."""
        return [r for r in self.records[a - self.base : b - self.base] if r is not None]


def _offset(before: tuple[int, int, int] | None, after: tuple[int, int, int], t: int) -> int:
    if before is None or after[0] <= before[0]:
        return after[1]
    frac = min(max((t - before[0]) / (after[0] - before[0]), 0.0), 1.0)
    return round(before[1] + frac * (after[1] - before[1]))
