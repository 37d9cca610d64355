"""Chrome traces: the events as Trace Event Format JSON (what Perfetto, chrome://tracing and
TensorBoard's profiler plugin read), laid out as PyTorch's: one process, a track per Python
thread for public ops (``cpu_op``) and ``record_function`` ranges (``user_annotation``), and
one track per backend for its kernels (``kernel``). Where a backend times its kernels with
events (``kernel_events``), that track holds the device kernels at their device times, and the
kernel calls that launched them (CPU work) sit on the calling thread's track, joined to their
kernels by flow arrows (``ac2g``, as PyTorch joins a launch to its GPU kernel)."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import socket
import time
import uuid
from typing import Any

__all__ = ["trace_dict", "write_trace"]

_CATEGORY = {"op": "cpu_op", "user": "user_annotation", "kernel": "kernel"}
# Kernel tracks get thread ids from here up (Python threads are numbered from 1).
_BACKEND_TID = 1000
_flow_ids = itertools.count(1)


def trace_dict(events: Any, meta: dict[str, Any]) -> dict[str, Any]:
    """The trace as a JSON-ready dict (``export_chrome_trace`` writes it)."""
    pid = os.getpid()
    threads: dict[int, int] = {}
    backends: dict[str, int] = {}
    body = []
    for ev in events:
        launches = ev.kind == "kernel" and ev.device_events is not None
        if ev.kind == "kernel" and not launches:
            tid = backends.setdefault(ev.backend, _BACKEND_TID + len(backends))
        else:
            tid = threads.setdefault(ev.thread, 1 + len(threads))
        args: dict[str, Any] = {"External id": ev.id + 1, "Ev Idx": ev.id}
        if ev.backend:
            args["Backend"] = ev.backend
        if ev.input_shapes:
            args["Input Dims"] = ev.input_shapes
        if ev.self_memory:
            args["Bytes allocated"] = ev.self_memory
        if ev.fallback_bytes_self:
            args["Fallback bytes copied"] = ev.fallback_bytes_self
        if ev.device_ns:
            args["Device time (us)"] = ev.device_ns / 1000.0
        if ev.stack:
            args["Call stack"] = ";".join(ev.stack)
        body.append(
            {
                "ph": "X",
                "cat": "cpu_op" if launches else _CATEGORY[ev.kind],
                "name": ev.trace_name,
                "pid": pid,
                "tid": tid,
                "ts": ev.start_ns / 1000.0,
                "dur": (ev.end_ns - ev.start_ns) / 1000.0,
                "args": args,
            }
        )
        if launches:
            body.extend(
                _device_kernels(ev, pid, tid, backends.setdefault(ev.backend, _BACKEND_TID + len(backends)))
            )
    head: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
    ]
    for ident, tid in threads.items():
        head.append(
            {
                "ph": "M",
                "name": "thread_name",
                "pid": pid,
                "tid": tid,
                "args": {"name": f"thread {ident} (python)"},
            }
        )
        head.append(
            {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}}
        )
    for backend, tid in backends.items():
        head.append(
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"{backend} kernels"}}
        )
        head.append(
            {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}}
        )
    return {
        "schemaVersion": 1,
        "deviceProperties": [],
        "trace_id": uuid.uuid4().hex.upper(),
        **{k: 1 for k in ("profile_memory", "record_shapes") if meta.get(k)},  # as PyTorch: only when on
        "host_name": socket.gethostname(),
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": time.time_ns() - time.perf_counter_ns(),
        "traceEvents": head + body,
        "traceName": meta.get("trace_name", ""),
    }


def _device_kernels(ev: Any, pid: int, launch_tid: int, tid: int) -> list[dict[str, Any]]:
    """The device kernels ``ev`` launched, on the backend's track, each with a flow arrow from
    the launch."""
    out: list[dict[str, Any]] = []
    for name, start, end in ev.device_events:
        flow = next(_flow_ids)
        kernel_args = {"External id": ev.id + 1, "Backend": ev.backend, "kernel": name}
        out += [
            {
                "ph": "X",
                "cat": "kernel",
                "name": ev.trace_name,
                "pid": pid,
                "tid": tid,
                "ts": start / 1000.0,
                "dur": (end - start) / 1000.0,
                "args": kernel_args,
            },
            {
                "ph": "s",
                "id": flow,
                "pid": pid,
                "tid": launch_tid,
                "ts": ev.start_ns / 1000.0,
                "cat": "ac2g",
                "name": "ac2g",
            },
            {
                "ph": "f",
                "id": flow,
                "pid": pid,
                "tid": tid,
                "ts": start / 1000.0,
                "cat": "ac2g",
                "name": "ac2g",
                "bp": "e",
            },
        ]
    return out


def write_trace(events: Any, path: str | os.PathLike[str], meta: dict[str, Any]) -> None:
    """Write ``events`` to ``path`` (gzip-compressed when it ends in ``.gz``, as PyTorch)."""
    path = os.fspath(path)
    text = json.dumps(trace_dict(events, {**meta, "trace_name": path}))
    if path.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
