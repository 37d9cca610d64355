"""``ember.accelerator`` on OpenCL: chosen over the minimal example, its memory statistics
(pyopencl's pool counts the bytes), and its one in-order queue as Stream and Event."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import ember
import ember.accelerator as acc
import pytest
from ember_opencl import runtime

MINIMAL = Path(__file__).resolve().parents[2] / "examples" / "minimal_backend"


@pytest.fixture
def opencl(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("EMBER_ACCELERATOR", "opencl")
    yield


def test_opencl_wins_over_the_minimal_example() -> None:
    """The issue's case: with the example backend installed too, the accelerator is OpenCL."""
    code = f"""
import sys
sys.path.insert(0, {str(MINIMAL)!r})
from importlib.metadata import entry_points
import ember, ember.accelerator as acc
if not any(ep.name == "minimal" for ep in entry_points(group="ember.backends")):
    import ember_minimal.plugin
    ember.backends.register("minimal", ember_minimal.plugin)
print(sorted(ember.backends.available()), acc.current_accelerator(), acc.device_count())
"""
    env = {k: v for k, v in os.environ.items() if k != "EMBER_ACCELERATOR"}
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    names, chosen, count = out.stdout.rsplit(" ", 2)
    assert "'minimal'" in names and "'opencl'" in names
    assert (chosen, int(count)) == ("opencl", len(runtime.devices()))


@pytest.mark.usefixtures("opencl")
def test_memory_statistics_follow_the_tensors() -> None:
    gc.collect()
    base = acc.memory_allocated()
    a = ember.ones(1000, device="opencl")  # 4000 bytes
    b = ember.ones(500, dtype=ember.float64, device="opencl")  # 4000 bytes
    assert acc.memory_allocated() == base + 8000
    assert acc.memory_allocated("opencl:0") == acc.memory_stats(0)["allocated_bytes.all.current"]
    c = a + a
    assert acc.memory_allocated() == base + 12000
    assert acc.max_memory_allocated() >= base + 12000
    del a, b, c
    gc.collect()
    assert acc.memory_allocated() == base  # freed with the tensors
    peak = acc.max_memory_allocated()
    assert peak >= base + 12000
    acc.reset_peak_memory_stats()
    assert acc.max_memory_allocated() == base
    held = acc.memory_reserved()
    assert held >= base + 12000  # the pool keeps the freed buffers for reuse
    acc.empty_cache()
    assert acc.memory_reserved() <= held - 12000
    assert acc.max_memory_reserved() >= held  # the peak survives empty_cache
    acc.reset_peak_memory_stats()
    assert acc.max_memory_reserved() == acc.memory_reserved()


@pytest.mark.usefixtures("opencl")
def test_the_queue_as_stream_and_events() -> None:
    dev = runtime.device(0)
    s = acc.Stream()
    assert s == acc.current_stream() == acc.Stream(priority=-1) and s.stream_id == 0  # one queue
    assert s.native_handle is dev.queue
    with s:
        x = ember.arange(6.0, device="opencl") * 2
    start, end = acc.Event(enable_timing=True), acc.Event(enable_timing=True)
    start.record()
    y = x.sum()
    end.record(s)
    end.synchronize()
    assert end.query() and start.query() and s.query()
    assert y.item() == 30.0
    import pyopencl as cl

    if dev.queue.properties & cl.command_queue_properties.PROFILING_ENABLE:
        assert start.elapsed_time(end) >= 0.0
    else:
        with pytest.raises(RuntimeError, match="created with profiling enabled"):
            start.elapsed_time(end)
    e = s.record_event()
    acc.Stream().wait_event(e)  # the same in-order queue: nothing to add
    e.wait()
    acc.synchronize()
    assert acc.current_stream().query()
