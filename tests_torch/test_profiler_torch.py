"""ember.profiler against torch.profiler: the same schedule answers and errors, the same step
state machine (which steps are recorded, when ``on_trace_ready`` runs, which warnings), the
table's PyTorch columns in PyTorch's order, the input shapes and bytes of a public op, and the
TensorBoard file names."""

from __future__ import annotations

import itertools
import json
import os
import re
import warnings
from collections.abc import Callable
from typing import Any

import ember
import ember.nn.functional as EF
import pytest
from ember import profiler as eprof
from ember.autograd import profiler as elegacy

torch = pytest.importorskip("torch")
tprof = torch.profiler


def _outcome(fn: Callable[[], Any]) -> Any:
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize(
    ("wait", "warmup", "active", "repeat", "skip_first", "skip_first_wait"),
    list(itertools.product((0, 2), (0, 1), (1, 3), (0, 2), (0, 3), (0, 1))),
)
def test_schedule_answers(wait, warmup, active, repeat, skip_first, skip_first_wait) -> None:
    kw = {
        "wait": wait,
        "warmup": warmup,
        "active": active,
        "repeat": repeat,
        "skip_first": skip_first,
        "skip_first_wait": skip_first_wait,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = eprof.schedule(**kw), tprof.schedule(**kw)
    assert [ours(i).name for i in range(30)] == [theirs(i).name for i in range(30)]
    assert _outcome(lambda: ours(-1)) == _outcome(lambda: theirs(-1))


@pytest.mark.parametrize(
    "kw",
    [
        {"wait": -1, "warmup": 0, "active": 1},
        {"wait": 0, "warmup": 0, "active": 0},
        {"wait": 0, "warmup": 1, "active": 1, "repeat": -1},
        {"wait": 0, "warmup": 1, "active": 1, "skip_first": -2},
    ],
)
def test_schedule_errors(kw) -> None:
    assert _outcome(lambda: eprof.schedule(**kw)) == _outcome(lambda: tprof.schedule(**kw))


def _run_steps(
    lib: Any, sched: Callable[[int], Any] | None, steps: int, record: Callable[[], None], acc: bool = False
) -> tuple:
    """Which steps each saved trace holds, when on_trace_ready ran, and the warnings."""
    saved: list[tuple[int, list[str]]] = []

    def ready(prof: Any) -> None:
        names = sorted(e.trace_name for e in prof.events() if e.name == "ProfilerStep*")
        saved.append((prof.step_num, names))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kw: dict[str, Any] = {
            "activities": [lib.ProfilerActivity.CPU],
            "on_trace_ready": ready,
            "acc_events": acc,
        }
        if sched is not None:
            kw["schedule"] = sched
        with lib.profile(**kw) as prof:
            for _ in range(steps):
                record()
                prof.step()
    messages = sorted(str(w.message) for w in caught if "schedule" in str(w.message))
    return saved, messages, prof.step_num


def _custom(actions: list[str], lib: Any) -> Callable[[int], Any]:
    return lambda step: getattr(lib.ProfilerAction, actions[step % len(actions)])


SCHEDULES = [
    {"wait": 1, "warmup": 1, "active": 2, "repeat": 1},
    {"wait": 0, "warmup": 1, "active": 1, "repeat": 3},
    {"wait": 2, "warmup": 1, "active": 3, "repeat": 0, "skip_first": 1},
    {"wait": 1, "warmup": 2, "active": 1, "repeat": 2, "skip_first": 2, "skip_first_wait": 1},
]


@pytest.mark.parametrize("kw", SCHEDULES)
@pytest.mark.parametrize("steps", [3, 7, 11])
def test_step_state_machine(kw, steps) -> None:
    x, tx = ember.ones(2), torch.ones(2)
    ours = _run_steps(eprof, eprof.schedule(**kw), steps, lambda: ember.neg(x))
    theirs = _run_steps(tprof, tprof.schedule(**kw), steps, lambda: torch.neg(tx))
    assert ours == theirs


@pytest.mark.parametrize(
    "actions",
    # RECORD followed by WARMUP crashes PyTorch 2.13 (a segfault in stop_trace): tested in
    # tests/test_profiler.py against the warning PyTorch's source gives instead.
    [["RECORD", "NONE"], ["WARMUP", "NONE"], ["RECORD_AND_SAVE"], ["WARMUP", "WARMUP", "RECORD_AND_SAVE"]],
)
def test_custom_schedules_and_their_warnings(actions) -> None:
    x, tx = ember.ones(2), torch.ones(2)
    ours = _run_steps(eprof, _custom(actions, eprof), 5, lambda: ember.neg(x))
    theirs = _run_steps(tprof, _custom(actions, tprof), 5, lambda: torch.neg(tx))
    assert ours == theirs


def test_no_schedule_saves_once_at_exit() -> None:
    x, tx = ember.ones(2), torch.ones(2)
    assert _run_steps(eprof, None, 4, lambda: ember.neg(x)) == _run_steps(
        tprof, None, 4, lambda: torch.neg(tx)
    )


def _header(table: str) -> list[str]:
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


@pytest.mark.parametrize("memory", [False, True])
@pytest.mark.parametrize("shapes", [False, True])
def test_table_has_pytorchs_columns_in_order(memory, shapes) -> None:
    x, w, tx, tw = ember.ones(4, 8), ember.ones(3, 8), torch.ones(4, 8), torch.ones(3, 8)
    with eprof.profile(
        activities=[eprof.ProfilerActivity.CPU], record_shapes=shapes, profile_memory=memory
    ) as ours:
        EF.linear(x, w)
    with tprof.profile(
        activities=[tprof.ProfilerActivity.CPU], record_shapes=shapes, profile_memory=memory
    ) as theirs:
        torch.nn.functional.linear(tx, tw)
    our_table = ours.key_averages(group_by_input_shape=shapes).table(sort_by="cpu_time_total")
    their_table = theirs.key_averages(group_by_input_shape=shapes).table(sort_by="cpu_time_total")
    ours_cols, their_cols = _header(our_table), _header(their_table)
    assert [c for c in ours_cols if c in their_cols] == their_cols
    assert [c for c in ours_cols if c not in their_cols] == ["Backend", "Fallback copied"]
    assert our_table.splitlines()[-1].split(":")[0] == their_table.strip().splitlines()[-1].split(":")[0]


def test_input_shapes_and_bytes_of_an_op() -> None:
    x, w, tx, tw = ember.ones(4, 8), ember.ones(3, 8), torch.ones(4, 8), torch.ones(3, 8)
    with eprof.profile(
        activities=[eprof.ProfilerActivity.CPU], record_shapes=True, profile_memory=True
    ) as ours:
        EF.linear(x, w)
        x.relu()
    with tprof.profile(
        activities=[tprof.ProfilerActivity.CPU], record_shapes=True, profile_memory=True
    ) as theirs:
        torch.nn.functional.linear(tx, tw)
        tx.relu()
    o = {e.key: e for e in ours.key_averages(group_by_input_shape=True)}
    t = {e.key: e for e in theirs.key_averages(group_by_input_shape=True)}
    assert (
        [e.input_shapes for e in ours.key_averages()][:1]
        == [e.input_shapes for e in theirs.key_averages()][:1]
        == [""]
    )
    assert o["nn.functional.linear"].input_shapes == t["aten::linear"].input_shapes
    assert o["nn.functional.linear"].cpu_memory_usage == t["aten::linear"].cpu_memory_usage
    assert o["relu"].input_shapes == t["aten::relu"].input_shapes
    assert o["relu"].cpu_memory_usage == t["aten::relu"].cpu_memory_usage
    assert o["relu"].count == t["aten::relu"].count == 1


def test_record_function_rows() -> None:
    x, tx = ember.ones(2), torch.ones(2)
    with eprof.profile(activities=[eprof.ProfilerActivity.CPU]) as ours:
        for _ in range(2):
            with eprof.record_function("label"):
                ember.neg(x)
    with tprof.profile(activities=[tprof.ProfilerActivity.CPU]) as theirs:
        for _ in range(2):
            with tprof.record_function("label"):
                torch.neg(tx)
    o = next(e for e in ours.key_averages() if e.key == "label")
    t = next(e for e in theirs.key_averages() if e.key == "label")
    assert (o.count, o.is_user_annotation) == (t.count, t.is_user_annotation) == (2, True)


def test_tensorboard_file_names(tmp_path) -> None:
    names = {}
    for lib, mk in ((eprof, lambda: ember.neg(ember.ones(2))), (tprof, lambda: torch.neg(torch.ones(2)))):
        d = tmp_path / lib.__name__
        with lib.profile(
            activities=[lib.ProfilerActivity.CPU], on_trace_ready=lib.tensorboard_trace_handler(str(d))
        ):
            mk()
        names[lib] = os.listdir(d)
    pattern = re.compile(r"(.+)_(\d+)\.(\d+)\.pt\.trace\.json")
    o, t = pattern.fullmatch(names[eprof][0]), pattern.fullmatch(names[tprof][0])
    assert o and t and o.group(1) == t.group(1) and o.group(2) == t.group(2)


def test_chrome_trace_layout(tmp_path) -> None:
    traces = {}
    for lib, mk in ((eprof, lambda: ember.neg(ember.ones(2))), (tprof, lambda: torch.neg(torch.ones(2)))):
        with (
            lib.profile(activities=[lib.ProfilerActivity.CPU], record_shapes=True) as prof,
            lib.record_function("label"),
        ):
            mk()
        path = str(tmp_path / f"{lib.__name__}.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            traces[lib] = json.load(f)
    ours, theirs = traces[eprof], traces[tprof]
    assert set(ours) == set(theirs)
    for key in ("schemaVersion", "displayTimeUnit", "deviceProperties", "record_shapes"):
        assert ours[key] == theirs[key], key
    assert re.fullmatch(r"[0-9A-F]{32}", ours["trace_id"]) and re.fullmatch(
        r"[0-9A-F]{32}", theirs["trace_id"]
    )

    def label(trace: dict) -> dict:
        return next(e for e in trace["traceEvents"] if e.get("name") == "label")

    o, t = label(ours), label(theirs)
    assert (
        set(t) - {"s"} <= set(o) and o["cat"] == t["cat"] == "user_annotation" and o["ph"] == t["ph"] == "X"
    )
    assert {"External id", "Ev Idx"} <= set(o["args"]) & set(t["args"])
    assert {e["name"] for e in ours["traceEvents"] if e["ph"] == "M"} <= {
        e["name"] for e in theirs["traceEvents"] if e["ph"] == "M"
    }


def test_export_stacks_errors(tmp_path) -> None:
    outcomes = []
    for lib, mk in ((eprof, lambda: ember.neg(ember.ones(2))), (tprof, lambda: torch.neg(torch.ones(2)))):
        with lib.profile(activities=[lib.ProfilerActivity.CPU], with_stack=True) as prof:
            mk()
        path = str(tmp_path / "stacks.txt")
        outcomes.append(_outcome(lambda prof=prof, path=path: prof.export_stacks(path, "cpu_time_total")))
        outcomes.append(_outcome(lambda lib=lib: lib.profile().export_stacks(str(tmp_path / "x.txt"))))
    assert outcomes[:2] == outcomes[2:]


def test_legacy_profiler_errors() -> None:
    def reenter(lib: Any) -> Any:
        p = lib.profile()
        with p:
            pass
        return _outcome(lambda: p.__enter__())

    assert reenter(elegacy) == reenter(torch.autograd.profiler)
    assert _outcome(lambda: elegacy.profile(use_cpu=False)) == _outcome(
        lambda: torch.autograd.profiler.profile(use_cpu=False)
    )
    fresh = (elegacy.profile(), torch.autograd.profiler.profile())
    assert [p.table() for p in fresh] == ["", ""] and [len(p.key_averages()) for p in fresh] == [0, 0]
