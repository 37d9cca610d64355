"""The profiler's device time from kernel events: OpenCL's profiling counters (each device
kernel inside its launch and before the next synchronising call returns, the table's device
times their sums, the trace's device track their real durations), and the mark-per-call
contract that CUDA's CuPy events follow (through a fake CuPy: no GPU here)."""

from __future__ import annotations

import importlib
import json
import os
from types import SimpleNamespace

import ember
import ember_opencl.events as ocl_events
import pytest
from ember.profiler import ProfilerActivity, profile

_BACKEND_CUDA = os.path.join(os.path.dirname(__file__), "..", "..", "backend_cuda")


@pytest.fixture
def sessions(monkeypatch) -> list[ocl_events.KernelEvents]:
    """Every OpenCL kernel-event session the profiler starts (to read its clock error)."""
    made: list[ocl_events.KernelEvents] = []

    class Recorded(ocl_events.KernelEvents):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(ocl_events, "KernelEvents", Recorded)
    return made


def _workload() -> tuple[ember.Tensor, ember.Tensor]:
    a = ember.arange(4096, dtype=ember.float32, device="opencl").reshape(64, 64)
    b = ember.ones(64, 64, device="opencl")
    (a + b).sum().cpu()  # compile outside the profile
    (a * b).relu().sum(1).cpu()
    return a, b


def test_opencl_kernels_are_timed_by_their_events(sessions) -> None:
    a, b = _workload()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OPENCL]) as prof:
        (a + b).sum().cpu()
        (a * b).relu().sum(1).cpu()
    (session,) = sessions
    err = session.clock_error_ns
    events = prof.events()
    calls = [e for e in events if e.kind == "kernel" and e.backend == "opencl"]
    launching = [
        e for e in calls if e.name in ("opencl::add", "opencl::mul", "opencl::maximum", "opencl::sum")
    ]
    assert [e.name for e in launching] == [
        "opencl::add",
        "opencl::sum",
        "opencl::mul",
        "opencl::maximum",
        "opencl::sum",
    ]
    assert all(e.device_events for e in launching)
    copies = [e for e in calls if e.name == "opencl::to_host"]
    assert len(copies) == 2 and all(e.device_events == [] and e.device_ns == 0 for e in copies)
    kernels = [k for e in calls for k in e.device_events]
    for call in launching:
        sync = next(c for c in copies if c.start_ns > call.end_ns)  # the blocking copy after it
        for _, start, end in call.device_events:
            assert start <= end
            assert start >= call.start_ns - err  # enqueued inside the call
            assert end <= sync.end_ns + err  # done before the copy that waits for it returns
        assert call.device_ns == sum(end - start for _, start, end in call.device_events)
    starts = [k[1] for k in kernels]
    assert starts == sorted(starts)  # one in-order queue

    total_ns = sum(end - start for _, start, end in kernels)
    averages = prof.key_averages()
    assert sum(r.self_device_time_total for r in averages) == pytest.approx(total_ns / 1000.0)
    add_row = next(r for r in averages if r.key == "add")
    add_call = next(e for e in launching if e.name == "opencl::add")
    assert add_row.device_time_total == pytest.approx(
        add_call.device_ns / 1000.0
    )  # an op's total: its kernels'
    assert "Self OPENCL time total" in averages.table()


def test_the_trace_puts_device_kernels_on_the_backend_track(tmp_path) -> None:
    a, b = _workload()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OPENCL]) as prof:
        (a + b).sum().cpu()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    tracks = {e["args"]["name"]: e["tid"] for e in trace if e.get("name") == "thread_name"}
    device = [e for e in trace if e.get("cat") == "kernel" and e["tid"] == tracks["opencl kernels"]]
    recorded = [(e, k) for e in prof.events() if e.device_events for k in e.device_events]
    assert len(device) == len(recorded) >= 2
    for shown, (call, (name, start, end)) in zip(device, recorded):
        assert shown["name"] == call.name
        assert shown["args"]["kernel"] == name
        assert shown["ts"] == start / 1000.0 and shown["dur"] == (end - start) / 1000.0
    launches = [e for e in trace if e.get("name") == "opencl::add" and e.get("cat") == "cpu_op"]
    assert len(launches) == 1 and launches[0]["tid"] != tracks["opencl kernels"]
    flows = [e for e in trace if e.get("cat") == "ac2g"]
    assert sorted(e["ph"] for e in flows) == ["f"] * len(device) + ["s"] * len(device)


def test_without_the_device_activity_nothing_is_logged() -> None:
    a, b = _workload()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        (a + b).cpu()
        from ember_opencl import runtime

        assert runtime.kernel_log is None
    assert all(e.device_events is None and e.device_ns == 0 for e in prof.events())


class _FakeCupy:
    """CuPy's event API over a fake GPU clock (ns): each recorded event takes the time now."""

    def __init__(self) -> None:
        self.gpu_ns = 5_000
        fake = self

        class Event:
            def record(self) -> None:
                self.t = fake.gpu_ns

            def synchronize(self) -> None:
                pass

        def get_elapsed_time(a: Event, b: Event) -> float:
            return (b.t - a.t) / 1e6  # milliseconds, as CuPy

        self.cuda = SimpleNamespace(Event=Event, get_elapsed_time=get_elapsed_time)


@pytest.fixture
def cuda_events(monkeypatch):
    """ember_cuda's events module (imports without CuPy: the backend is then unavailable)."""
    monkeypatch.syspath_prepend(os.path.abspath(_BACKEND_CUDA))
    return importlib.import_module("ember_cuda.events")


def test_cuda_events_give_one_record_per_call(cuda_events, monkeypatch) -> None:
    cupy = _FakeCupy()
    monkeypatch.setattr(cuda_events.time, "perf_counter_ns", lambda: 1_000_000)
    session = cuda_events.KernelEvents(cupy)
    session.start()
    m0 = session.mark()  # the reference: host 1_000_000 ns is gpu 5_000 ns
    cupy.gpu_ns += 2_500
    m1 = session.mark()
    cupy.gpu_ns += 400
    m2 = session.mark()
    session.stop()
    assert session.between(m0, m1) == [("", 1_000_000, 1_002_500)]
    assert session.between(m1, m2) == [("", 1_002_500, 1_002_900)]


def test_the_profiler_reads_a_mark_per_call_session(cuda_events, monkeypatch) -> None:
    """A backend whose session gives one unnamed record per call (CUDA's kind): the record is
    named after the call and its time is the call's device time."""
    a, b = _workload()
    cupy = _FakeCupy()
    session = cuda_events.KernelEvents(cupy)
    real_mark = session.mark

    def mark() -> int:
        cupy.gpu_ns += 1_000  # each kernel call takes 1 us on the fake device
        return real_mark()

    session.mark = mark
    backend = ember.backends.get("opencl").backend
    monkeypatch.setattr(backend, "kernel_events", lambda: session, raising=False)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OPENCL]) as prof:
        (a + b).sum()
    calls = [e for e in prof.events() if e.kind == "kernel" and e.backend == "opencl"]
    assert [e.name for e in calls] == ["opencl::add", "opencl::sum"]
    for e in calls:
        assert e.device_ns == 1_000 and [k[0] for k in e.device_events] == [e.name]


def test_a_session_that_fails_to_stop_keeps_the_cpu_events(monkeypatch) -> None:
    a, b = _workload()

    class Broken(ocl_events.KernelEvents):
        def stop(self) -> None:
            super().stop()
            raise RuntimeError("device lost")

    monkeypatch.setattr(ocl_events, "KernelEvents", Broken)
    with (
        pytest.warns(UserWarning, match="profiler: no device times for opencl: RuntimeError: device lost"),
        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OPENCL]) as prof,
    ):
        (a + b).sum()
    calls = [e.name for e in prof.events() if e.kind == "kernel"]
    assert calls == ["opencl::add", "opencl::sum"]
    assert all(e.device_ns == 0 for e in prof.events())
