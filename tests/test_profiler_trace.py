"""Chrome traces and TensorBoard files: valid Trace Event Format JSON, nesting of ranges,
one kernel track per backend, and the file layout TensorBoard's profiler plugin reads."""

from __future__ import annotations

import gzip
import json
import os
import re
import socket

import ember
import pytest
from ember.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler

CPU = [ProfilerActivity.CPU]


def _load(path: str) -> dict:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def _check_structure(trace: dict) -> list[dict]:
    """Every event has what the Trace Event Format requires for its phase; returns the X events."""
    assert trace["displayTimeUnit"] == "ms" and trace["schemaVersion"] == 1
    events = trace["traceEvents"]
    for ev in events:
        assert ev["ph"] in ("X", "M")
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int) and isinstance(ev["name"], str)
        if ev["ph"] == "X":
            assert (
                isinstance(ev["ts"], float)
                and ev["dur"] >= 0
                and ev["cat"] in ("cpu_op", "user_annotation", "kernel")
            )
        else:
            assert ev["name"] in ("process_name", "process_labels", "thread_name", "thread_sort_index")
    return [e for e in events if e["ph"] == "X"]


def _within(inner: dict, outer: dict) -> bool:
    return outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-3


def test_chrome_trace_structure_and_nesting(tmp_path, cpu_prims) -> None:
    x, y = ember.ones(4, 4, device="cpu"), ember.ones(4, 4, device=cpu_prims)
    with profile(activities=CPU, record_shapes=True) as prof, record_function("block"):
        ember.add(x, x)
        ember.neg(y)
    path = str(tmp_path / "trace.json")
    prof.export_chrome_trace(path)
    trace = _load(path)
    spans = _check_structure(trace)
    by_name = {e["name"]: e for e in spans}
    block, add, neg = by_name["block"], by_name["add"], by_name["neg"]
    assert block["cat"] == "user_annotation" and add["cat"] == "cpu_op"
    assert add["tid"] == block["tid"] and _within(add, block) and _within(neg, block)
    assert add["args"]["Input Dims"] == [[4, 4], [4, 4], []] and add["args"]["Backend"] == "cpu"
    # one kernel track per backend, named for it, the kernels inside their op's time
    tracks = {
        e["args"]["name"]: e["tid"]
        for e in trace["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }
    cpu_k, prims_k = by_name["cpu::add"], by_name[f"{cpu_prims}::neg"]
    assert cpu_k["tid"] == tracks["cpu kernels"] and prims_k["tid"] == tracks[f"{cpu_prims} kernels"]
    assert cpu_k["tid"] != prims_k["tid"] != block["tid"]
    assert cpu_k["cat"] == "kernel" and _within(cpu_k, add) and _within(prims_k, neg)


def test_chrome_trace_gz(tmp_path) -> None:
    with profile(activities=CPU) as prof:
        ember.neg(ember.ones(2, device="cpu"))
    path = str(tmp_path / "trace.json.gz")
    prof.export_chrome_trace(path)
    names = {e["name"] for e in _check_structure(_load(path))}
    assert {"neg", "cpu::neg"} <= names


def test_fallback_bytes_in_the_trace(tmp_path, backend_without, fallback_policy) -> None:
    fallback_policy("silent")
    dev = backend_without("mul")
    a = ember.ones(2, 2, device=dev)
    with profile(activities=CPU) as prof:
        a * a
    path = str(tmp_path / "t.json")
    prof.export_chrome_trace(path)
    kernel = next(e for e in _check_structure(_load(path)) if e["name"] == f"{dev}::mul")
    assert kernel["args"]["Fallback bytes copied"] == 48


def test_tensorboard_trace_handler_writes_one_file_per_cycle(tmp_path) -> None:
    logdir = str(tmp_path / "run1")
    x = ember.ones(2)
    with profile(
        activities=CPU,
        schedule=schedule(wait=1, warmup=1, active=1, repeat=2),
        on_trace_ready=tensorboard_trace_handler(logdir),
    ) as prof:
        for _ in range(8):
            ember.neg(x)
            prof.step()
    files = sorted(os.listdir(logdir))
    worker = re.escape(f"{socket.gethostname()}_{os.getpid()}")
    assert len(files) == 2 and all(re.fullmatch(worker + r"\.\d+\.pt\.trace\.json", f) for f in files)
    steps = [
        {
            e["name"]
            for e in _check_structure(_load(os.path.join(logdir, f)))
            if e["name"].startswith("ProfilerStep#")
        }
        for f in files
    ]
    assert sorted(steps, key=sorted) == [{"ProfilerStep#2"}, {"ProfilerStep#5"}]


def test_tensorboard_trace_handler_worker_name_and_gzip(tmp_path) -> None:
    handler = tensorboard_trace_handler(str(tmp_path), worker_name="w0", use_gzip=True)
    with profile(activities=CPU, on_trace_ready=handler):
        ember.neg(ember.ones(2))
    (name,) = os.listdir(tmp_path)
    assert re.fullmatch(r"w0\.\d+\.pt\.trace\.json\.gz", name)
    assert {"neg"} <= {e["name"] for e in _check_structure(_load(str(tmp_path / name)))}


def test_tensorboard_handler_cannot_create_its_directory(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    handler = tensorboard_trace_handler(str(blocker / "sub"))
    with (
        pytest.raises(RuntimeError, match="Can't create directory: "),
        profile(activities=CPU, on_trace_ready=handler),
    ):
        pass
