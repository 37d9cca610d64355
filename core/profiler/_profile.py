"""``ember.profiler.profile``: PyTorch's profiler (activities, ``schedule``, ``step``,
``on_trace_ready``) over ember's recorder, with PyTorch's step state machine, so a
training loop written for ``torch.profiler`` records the same steps."""

from __future__ import annotations

import enum
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from importlib import metadata
from typing import Any

from ember.backends import registry

from ._events import EventList
from ._record import Recorder, record_function
from ._trace import write_trace

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


def _activity_names() -> dict[str, str]:
    """PyTorch's activity names, then one per installed ember backend (``OPENCL``)."""
    names = {
        "CPU": "cpu",
        "XPU": "xpu",
        "MTIA": "mtia",
        "CUDA": "cuda",
        "HPU": "hpu",
        "PrivateUse1": "privateuse1",
    }
    names["OPENCL"] = "opencl"
    for ep in metadata.entry_points(group=registry.ENTRY_POINT_GROUP):
        if ep.name.isidentifier():
            names.setdefault(ep.name.upper(), ep.name)
    return names


ProfilerActivity = enum.Enum("ProfilerActivity", _activity_names(), module=__name__)  # type: ignore[misc]
ProfilerActivity.__doc__ = (
    "What a profile records: CPU (ops, labels, kernel calls) or one backend's device time."
)


class ProfilerAction(enum.Enum):
    """What the profiler does during a step (a ``schedule``'s answer)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(
    *, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0, skip_first_wait: int = 0
) -> Callable[[int], ProfilerAction]:
    """PyTorch's schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle, ``warmup``
    and ``active`` recorded steps (the last one saves), ``repeat`` times (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def supported_activities() -> set[Any]:
    """CPU and the activity of every installed backend (device time on that backend)."""
    installed = {ep.name for ep in metadata.entry_points(group=registry.ENTRY_POINT_GROUP)}
    return {a for a in ProfilerActivity if a.value == "cpu" or a.value in installed}


def _backend_name(activity: Any) -> str:
    if isinstance(activity, ProfilerActivity):
        return activity.value
    if isinstance(activity, str):  # an ember extension: a backend registered in-process
        return activity
    raise TypeError(
        f"activities must be ProfilerActivity values or backend names, got {type(activity).__name__}"
    )


def tensorboard_trace_handler(
    dir_name: str, worker_name: str | None = None, use_gzip: bool = False
) -> Callable[[Any], None]:
    """An ``on_trace_ready`` that writes ``{worker}.{time_ns}.pt.trace.json[.gz]`` under
    ``dir_name``, the layout TensorBoard's profiler plugin reads (worker: ``host_pid``)."""

    def handler(prof: Any) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler


_A = ProfilerAction


class profile:
    """Records ops, kernels and labelled ranges while entered (``with``) or between
    ``start()`` and ``stop()``; ``step()`` advances ``schedule``."""

    def __init__(
        self,
        *,
        activities: Iterable[Any] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[..., Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Any = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback: Callable[[], str] | None = None,
        post_processing_timeout_s: float | None = None,
    ) -> None:
        acts = set(activities) if activities else supported_activities()
        if use_cuda is not None:
            warnings.warn(
                "`use_cuda` is deprecated, use `activities` argument instead", FutureWarning, stacklevel=2
            )
            if use_cuda:
                acts.add(ProfilerActivity["CUDA"])
        self.activities = acts
        names = {_backend_name(a) for a in acts}
        self._cpu = "cpu" in names
        self._devices = frozenset(names - {"cpu"})
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.on_trace_ready = on_trace_ready
        self.record_steps = schedule is not None
        self.schedule = schedule or _always_record
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._recorder: Recorder | None = None
        self._events: EventList | None = None
        self._step_rec: record_function | None = None

    # -- PyTorch's state machine: (previous action, next action) -> what happens --------------
    def _prepare(self) -> None:
        if self._recorder is None or not self.acc_events:
            self._recorder = Recorder(
                self._cpu, self._devices, self.record_shapes, self.profile_memory, self.with_stack
            )
            self._events = None

    def _start(self) -> None:
        assert self._recorder is not None
        self._recorder.start()

    def _stop(self) -> None:
        if self._recorder is not None:
            self._recorder.stop()
            self._events = self._event_list()

    def _ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit(self, prev: ProfilerAction, cur: ProfilerAction | None) -> None:
        if prev == _A.NONE:
            if cur in (_A.WARMUP, _A.RECORD, _A.RECORD_AND_SAVE):
                self._prepare()
            if cur in (_A.RECORD, _A.RECORD_AND_SAVE):
                self._start()
        elif prev == _A.WARMUP:
            if cur == _A.NONE:
                warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
            if cur in (_A.RECORD, _A.RECORD_AND_SAVE, _A.NONE, None):
                self._start()
            if cur in (_A.NONE, None):
                self._stop()
        elif prev == _A.RECORD:
            if cur in (_A.NONE, _A.WARMUP):
                warnings.warn(f"Incorrect schedule: RECORD followed by {cur.name}", stacklevel=3)
                self._stop()
            elif cur is None:
                self._stop()
                self._ready()
        elif prev == _A.RECORD_AND_SAVE:
            self._stop()
            self._ready()
            if cur in (_A.WARMUP, _A.RECORD, _A.RECORD_AND_SAVE):
                self._prepare()
            if cur in (_A.RECORD, _A.RECORD_AND_SAVE):
                self._start()

    def start(self) -> None:
        self._transit(_A.NONE, self.current_action)
        if self.record_steps:
            self._step_rec = record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec.__enter__()

    def stop(self) -> None:
        if self._step_rec is not None:
            self._step_rec.__exit__(None, None, None)
            self._step_rec = None
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Signals the profiler that the next profiling step has started."""
        if self._step_rec is not None:
            self._step_rec.__exit__(None, None, None)
            self._step_rec = None
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        if self.record_steps:
            self._step_rec = record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec.__enter__()

    def __enter__(self) -> profile:  # noqa: PYI034 - typing.Self needs Python 3.11
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- results -------------------------------------------------------------------------------
    def _event_list(self) -> EventList:
        assert self._recorder is not None
        events = self._recorder.events
        timed = sorted({e.backend for e in events if e.device_ns})
        label = (timed[0].upper() if len(timed) == 1 else "Device") if timed else None
        return EventList(events, label, self.profile_memory)

    def events(self) -> EventList:
        """Every recorded event (the last saved cycle), parents before their children."""
        assert self._recorder is not None, "Profiler must be initialized before getting events"
        return self._events if self._events is not None else self._event_list()

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """The events averaged per name and backend (and input shapes, stack frames)."""
        assert self._recorder is not None, "Profiler must be initialized before getting key averages"
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """Write the recorded events as a Chrome trace (``.gz``: compressed)."""
        assert self._recorder is not None, "Profiler must be initialized before exporting chrome trace"
        write_trace(
            self.events(), path, {"record_shapes": self.record_shapes, "profile_memory": self.profile_memory}
        )

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Save the recorded stacks (``with_stack=True``) in the folded flame graph format."""
        if self._recorder is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        self.events().export_stacks(path, metric)
