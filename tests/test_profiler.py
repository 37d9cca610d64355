"""ember.profiler: rows (public ops and the kernels under them), shapes, memory, fallback
copies, record_function, schedules and steps, the table, and the legacy autograd API."""

from __future__ import annotations

import re
import sys
import warnings

import ember
import ember.nn.functional as F
import pytest
from ember._dispatch import active_modes
from ember.autograd import profiler as legacy
from ember.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
)
from ember.profiler._table import format_memory, format_time

CPU = [ProfilerActivity.CPU]


def _k(op: str) -> str:
    """The kernel row of ``op`` on the default device's backend (the suite also runs on the
    capability-limited fixture backends)."""
    return f"{_dev()}::{op}"


def _dev() -> str:
    return ember.empty(0).device.type


def _by_name(prof: profile) -> dict[str, object]:
    return {e.key: e for e in prof.key_averages()}


def test_public_op_rows_hold_the_kernels_they_ran() -> None:
    x, w = ember.ones(4, 8), ember.ones(3, 8)
    with profile(activities=CPU) as prof:
        F.linear(x, w)
    linear = [e for e in prof.events() if e.name == "nn.functional.linear"]
    assert len(linear) == 1 and linear[0].cpu_parent is None
    kernels = [c.name for c in linear[0].cpu_children]
    assert _k("matmul") in kernels
    assert all(c.kind == "kernel" and c.backend == _dev() for c in linear[0].cpu_children)
    assert linear[0].backend == _dev()


def test_counts_and_self_time_add_up() -> None:
    x = ember.ones(3)
    with profile(activities=CPU) as prof:
        for _ in range(3):
            ember.add(x, x)
    rows = _by_name(prof)
    assert rows["add"].count == 3 and rows[_k("add")].count == 3
    events = prof.events()
    for ev in events:
        assert ev.self_cpu_time_total == pytest.approx(
            ev.cpu_time_total - sum(c.cpu_time_total for c in ev.cpu_children)
        )
    top = sum(e.cpu_time_total for e in events if e.cpu_parent is None)
    assert events.self_cpu_time_total == pytest.approx(top)


def test_record_shapes_and_grouping_by_shape() -> None:
    with profile(activities=CPU, record_shapes=True) as prof:
        F.linear(ember.ones(4, 8), ember.ones(3, 8))
        ember.add(ember.ones(2), ember.ones(2))
        ember.add(ember.ones(5, 1), ember.ones(5, 1))
    linear = next(e for e in prof.events() if e.name == "nn.functional.linear")
    assert linear.input_shapes == [[4, 8], [3, 8], []]
    adds = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "add"]
    assert sorted(str(a.input_shapes[:2]) for a in adds) == ["[[2], [2]]", "[[5, 1], [5, 1]]"]
    assert [a.key for a in prof.key_averages() if a.key == "add"] == ["add"]


def test_without_record_shapes_no_shapes() -> None:
    with profile(activities=CPU) as prof:
        ember.add(ember.ones(2), ember.ones(2))
    assert all(e.input_shapes == [] for e in prof.events())
    assert "Input Shapes" not in prof.key_averages(group_by_input_shape=True).table()


def test_profile_memory_counts_fresh_results_not_views() -> None:
    x = ember.ones(4, 3)
    with profile(activities=CPU, profile_memory=True) as prof:
        x.relu()
        x.t()
    rows = _by_name(prof)
    assert rows["relu"].cpu_memory_usage == 48 and rows["relu"].self_cpu_memory_usage == 0
    kernel = next(e for e in prof.events() if e.cpu_parent is not None and e.cpu_parent.name == "relu")
    assert kernel.self_cpu_memory_usage == 48
    assert rows[_k("permute")].cpu_memory_usage == 0
    assert "CPU Mem" in prof.key_averages().table() and "Self CPU Mem" in prof.key_averages().table()


def test_fallback_bytes_show_where_a_kernel_is_missing(backend_without, fallback_policy) -> None:
    fallback_policy("silent")
    dev = backend_without("mul")
    a, b = ember.ones(4, 8, device=dev), ember.ones(4, 8, device=dev)
    with profile(activities=CPU) as prof:
        a * b
        a + b
    rows = _by_name(prof)
    assert rows[f"{dev}::mul"].fallback_bytes == 3 * 4 * 8 * 4  # two inputs down, one result up
    assert rows["mul"].fallback_bytes == 384 and rows["mul"].backend == dev
    assert rows[f"{dev}::add"].fallback_bytes == 0
    assert "384 B" in prof.key_averages().table()


def test_record_function_ranges_nest_and_decorate() -> None:
    @record_function("decorated")
    def f(x):
        return ember.matmul(x, x)

    with profile(activities=CPU) as prof, record_function("outer"):
        with record_function("inner"):
            ember.neg(ember.ones(2))
        f(ember.ones(2))
    ev = {e.name: e for e in prof.events()}
    assert ev["outer"].cpu_parent is None and ev["outer"].is_user_annotation
    assert ev["inner"].cpu_parent is ev["outer"] and ev["decorated"].cpu_parent is ev["outer"]
    assert ev["neg"].cpu_parent is ev["inner"] and ev["matmul"].cpu_parent is ev["decorated"]
    assert ev["outer"].backend == ""


def test_ops_made_by_one_factory_keep_their_names() -> None:
    with profile(activities=CPU) as prof:
        ember.exp(ember.ones(2))
        ember.tanh(ember.ones(2))
    assert [e.name for e in prof.events() if e.kind == "op"] == ["ones", "exp", "ones", "tanh"]


def test_record_function_outside_a_profile_records_nothing() -> None:
    with record_function("alone") as rf:
        ember.neg(ember.ones(2))
    assert rf.name == "alone"
    assert active_modes() == ()


def test_nothing_is_hooked_once_the_profile_exits() -> None:
    before = sys.getprofile()
    with profile(activities=CPU):
        assert active_modes() != ()
        assert sys.getprofile() is not before
    assert active_modes() == () and sys.getprofile() is before
    cpu = ember.backends.get("cpu")
    assert cpu.k["add"] is cpu.native["add"]  # the bare kernel again: no cost left behind


def test_an_op_that_raises_leaves_the_nesting_intact() -> None:
    with profile(activities=CPU) as prof:
        with pytest.raises(RuntimeError):
            ember.add(ember.ones(2), ember.ones(3))
        ember.neg(ember.ones(2))
    neg = next(e for e in prof.events() if e.name == "neg")
    assert neg.cpu_parent is None


def test_with_stack_points_at_the_caller() -> None:
    with profile(activities=CPU, with_stack=True) as prof:
        ember.neg(ember.ones(2))
    neg = next(e for e in prof.events() if e.name == "neg")
    assert neg.stack[0].startswith(__file__) and "test_with_stack_points_at_the_caller" in neg.stack[0]
    assert "Source Location" in prof.key_averages(group_by_stack_n=1).table()


def test_export_stacks_folds_call_sites(tmp_path) -> None:
    def caller():
        return ember.neg(ember.ones(2))

    with profile(activities=CPU, with_stack=True) as prof:
        caller()
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines and all(re.fullmatch(r"[^ ]+ \d+", line) for line in lines)
    assert all(line.split(";")[-1].split(" ")[0].endswith("_caller") for line in lines)
    with pytest.raises(ValueError, match="metric should be one of: "):
        prof.export_stacks(str(path), "cpu_time_total")


def test_schedule_actions() -> None:
    s = schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    N, W, R, S = (
        ProfilerAction.NONE,
        ProfilerAction.WARMUP,
        ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE,
    )
    assert [s(i) for i in range(8)] == [N, N, W, R, S, N, N, N]
    forever = schedule(wait=0, warmup=1, active=1)
    assert [forever(i) for i in range(5)] == [W, S, W, S, W]
    with pytest.raises(
        AssertionError, match=r"Invalid profiler schedule arguments. Got wait=0 \(need >= 0\), warmup=0"
    ):
        schedule(wait=0, warmup=0, active=0)
    with pytest.raises(AssertionError, match="Step must be non-negative. Got -1."):
        s(-1)
    with pytest.warns(UserWarning, match="Profiler won't be using warmup"):
        schedule(wait=0, warmup=0, active=1)


def test_steps_record_only_active_steps_and_call_on_trace_ready() -> None:
    seen: list[list[str]] = []

    def ready(prof: profile) -> None:
        seen.append([e.trace_name for e in prof.events() if e.name == "ProfilerStep*"])

    x = ember.ones(2)
    with profile(
        activities=CPU, schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=ready
    ) as prof:
        for step in range(10):
            with record_function(f"work{step}"):
                ember.neg(x)
            prof.step()
    assert seen == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]
    assert prof.step_num == 10
    names = {e.name for e in prof.events()}
    assert {"work6", "work7"} <= names and "work5" not in names


def test_record_followed_by_warmup_warns_and_stops() -> None:
    actions = [ProfilerAction.RECORD, ProfilerAction.WARMUP, ProfilerAction.RECORD_AND_SAVE]
    saved: list[int] = []
    x = ember.ones(2)
    prof = profile(
        activities=CPU, schedule=lambda s: actions[s % 3], on_trace_ready=lambda p: saved.append(p.step_num)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with prof:
            for _ in range(3):
                ember.neg(x)
                prof.step()
    assert [str(w.message) for w in caught] == ["Incorrect schedule: RECORD followed by WARMUP"]
    assert saved == [3, 3]  # at the step after RECORD_AND_SAVE, and at exit (RECORD)
    assert [e.trace_name for e in prof.events() if e.name == "ProfilerStep*"] == ["ProfilerStep#3"]


def test_without_schedule_everything_is_recorded_once() -> None:
    calls: list[int] = []
    with profile(activities=CPU, on_trace_ready=lambda p: calls.append(p.step_num)) as prof:
        ember.neg(ember.ones(2))
        prof.step()
        ember.matmul(ember.ones(2), ember.ones(2))
    assert calls == [1]
    names = {e.name for e in prof.events()}
    assert {"neg", "matmul"} <= names and "ProfilerStep*" not in names


def test_acc_events_keeps_every_cycle() -> None:
    x = ember.ones(2)
    with profile(
        activities=CPU, schedule=schedule(wait=0, warmup=1, active=1, repeat=2), acc_events=True
    ) as prof:
        for _ in range(4):
            ember.neg(x)
            prof.step()
    assert _by_name(prof)["neg"].count == 2


def test_device_activity_only_keeps_that_backends_kernels(cpu_prims) -> None:
    x = ember.ones(3, device=cpu_prims)
    with profile(activities=[cpu_prims]) as prof:
        ember.neg(x)
        ember.neg(ember.ones(3))
    events = prof.events()
    assert [e.name for e in events] == [f"{cpu_prims}::neg"]
    assert events[0].device_ns > 0 and events[0].self_device_time_total == events[0].cpu_time_total
    table = prof.key_averages().table()
    label = cpu_prims.upper()
    assert f"Self {label}" in table and f"Self {label} time total:" in table


def test_device_activity_synchronizes_after_each_kernel(cpu_prims, monkeypatch) -> None:
    backend = ember.backends.get(cpu_prims).backend
    synced: list[int] = []
    monkeypatch.setattr(backend, "synchronize", synced.append)
    x = ember.ones(3, device=cpu_prims)
    with profile(activities=[ProfilerActivity.CPU, cpu_prims]) as prof:
        ember.neg(ember.exp(x))
        ember.neg(ember.ones(3, device="cpu"))  # another backend's kernel: not synchronised
    kernels = [e for e in prof.events() if e.backend == cpu_prims and e.kind == "kernel"]
    assert synced == [0] * len(kernels) and len(kernels) >= 2
    assert all(e.device_ns > 0 for e in kernels)
    assert all(e.device_ns == 0 for e in prof.events() if e.backend == "cpu")


def test_activities_and_their_errors() -> None:
    names = {a.name for a in ProfilerActivity}
    assert {"CPU", "CUDA", "OPENCL", "XPU", "MTIA", "HPU", "PrivateUse1"} <= names
    assert ProfilerActivity.CPU in supported_activities()
    with pytest.raises(TypeError, match="activities must be ProfilerActivity"):
        profile(activities=[3])


def test_results_before_any_recording_are_an_error() -> None:
    prof = profile(activities=CPU, schedule=schedule(wait=2, warmup=1, active=1))
    with pytest.raises(AssertionError, match="Profiler must be initialized before getting key averages"):
        prof.key_averages()


def test_table_columns_sorting_and_limits() -> None:
    x = ember.ones(2)
    with profile(activities=CPU) as prof:
        ember.neg(x)
        for _ in range(3):
            ember.add(x, x)
    table = prof.key_averages().table(sort_by="count", row_limit=2)
    lines = table.splitlines()
    head = lines[1].split()
    assert (
        " ".join(head)
        == "Name Backend Self CPU % Self CPU CPU total % CPU total CPU time avg Fallback copied # of Calls"
    )
    rows = lines[3:5]
    assert len(lines) == 7 and all(r.split()[-1] == "3" for r in rows)
    assert lines[-1].startswith("Self CPU time total: ")
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="bogus")


def test_units_are_printed_as_pytorch_does() -> None:
    assert [format_time(x) for x in (1.5, 1234.5, 2.5e6)] == ["1.500us", "1.234ms", "2.500s"]
    assert [format_memory(x) for x in (0, 1023, 1024, 1536, 3 << 20, 2 << 30, -96)] == [
        "0 B",
        "1023 B",
        "1.00 KB",
        "1.50 KB",
        "3.00 MB",
        "2.00 GB",
        "-96 B",
    ]


def test_legacy_autograd_profiler() -> None:
    assert legacy.record_function is record_function
    prof = legacy.profile(record_shapes=True)
    assert prof.table() == "" and prof.self_cpu_time_total == 0
    x = ember.ones(2)
    with prof:
        ember.neg(x)
    assert {e.name for e in prof.function_events} == {"neg", _k("neg")}
    assert prof.key_averages(group_by_input_shape=True)[0].input_shapes == [[2]]
    assert "Self CPU time total" in str(prof)
    with pytest.raises(RuntimeError, match="Profiler context manager is not reentrant"), prof:
        pass
    with pytest.raises(AssertionError, match="Device-only events supported only with Kineto"):
        legacy.profile(use_cpu=False)
    with legacy.profile(enabled=False) as off:
        ember.neg(ember.ones(2))
    assert off.function_events is None
    with legacy.emit_nvtx(), legacy.emit_itt():
        pass


def test_legacy_use_cuda_warns_as_pytorch() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        legacy.profile(use_cuda=True)
    assert [w.category for w in caught] == [FutureWarning]
    assert "use_device = 'cuda'" in str(caught[0].message)
