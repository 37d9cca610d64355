"""What a profile recorded: one ``FunctionEvent`` per public op, kernel call and labelled
range, and their averages per name (``key_averages``), printed by ``table``.

Times are kept in integer nanoseconds and read in microseconds (floats), as PyTorch's
``cpu_time_total`` and friends are; memory and copied bytes are integers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg"]


class FunctionEvent:
    """One recorded range: a public op (``kind="op"``), a kernel (``"kernel"``: named
    ``backend::op``) or a ``record_function`` label (``"user"``)."""

    __slots__ = (
        "backend",
        "cpu_children",
        "cpu_parent",
        "device_events",
        "device_ns",
        "end_ns",
        "fallback_bytes_self",
        "id",
        "input_shapes",
        "kind",
        "name",
        "self_memory",
        "stack",
        "start_ns",
        "thread",
        "trace_name",
    )

    def __init__(self, id: int, name: str, kind: str, backend: str, thread: int, start_ns: int) -> None:
        self.id = id
        self.name = name
        self.kind = kind
        self.backend = backend
        self.thread = thread
        self.start_ns = start_ns
        self.end_ns = start_ns
        self.device_ns = 0
        # A kernel call on a backend timed by kernel events: (kernel name, start_ns, end_ns) of
        # each device kernel it launched, on the host clock; None where not timed that way.
        self.device_events: list[tuple[str, int, int]] | None = None
        self.self_memory = 0
        self.fallback_bytes_self = 0
        self.input_shapes: list[Any] = []
        self.stack: list[str] = []
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] = []
        # ``ProfilerStep#N`` ranges average as one row, ``ProfilerStep*``, as PyTorch's; the
        # trace keeps each step's own name.
        self.trace_name = name
        if kind == "user" and name.startswith("ProfilerStep#"):
            self.name = "ProfilerStep*"

    key = property(lambda self: self.name)
    is_user_annotation = property(lambda self: self.kind == "user")

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1000.0

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self) -> float:
        return self.device_ns / 1000.0 + sum(c.device_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:
        return self.device_ns / 1000.0

    @property
    def cpu_memory_usage(self) -> int:
        return self.self_memory + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.self_memory

    @property
    def fallback_bytes(self) -> int:
        """Bytes copied between the device and the CPU by CPU fallbacks in this range."""
        return self.fallback_bytes_self + sum(c.fallback_bytes for c in self.cpu_children)

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} backend={self.backend} "
            f"cpu_time={self.cpu_time_total:.3f}us input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg:
    """The events of one key (name, backend and, when asked, input shapes or stack) summed."""

    def __init__(self, key: str, backend: str) -> None:
        self.key = key
        self.backend = backend
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.fallback_bytes = 0
        self.input_shapes: list[Any] | str | None = None
        self.stack: list[str] = []
        self.is_user_annotation = False
        self.top_level = True

    def add(self, ev: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        if isinstance(ev, FunctionEvent):
            self.count += 1
            if self.input_shapes is None:
                self.input_shapes, self.stack = ev.input_shapes, ev.stack
            self.is_user_annotation = ev.is_user_annotation
            self.top_level = self.top_level and ev.cpu_parent is None
        else:
            self.count += ev.count
            self.top_level = self.top_level and ev.top_level
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.device_time_total += ev.device_time_total
        self.self_device_time_total += ev.self_device_time_total
        self.cpu_memory_usage += ev.cpu_memory_usage
        self.self_cpu_memory_usage += ev.self_cpu_memory_usage
        self.fallback_bytes += ev.fallback_bytes
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / max(self.count, 1)

    @property
    def device_time(self) -> float:
        return self.device_time_total / max(self.count, 1)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} backend={self.backend} count={self.count} "
            f"self_cpu_time={self.self_cpu_time_total:.3f}us cpu_time={self.cpu_time:.3f}us "
            f"input_shapes={self.input_shapes}>"
        )


class EventList(list):
    """A list of events (or averages) that can average and print itself."""

    def __init__(
        self, events: Iterable[Any] = (), device_label: str | None = None, profile_memory: bool = False
    ):
        super().__init__(events)
        self.device_label = device_label
        self.profile_memory = profile_memory
        self._with_shapes = False
        self._stack_n = 0

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        """One ``FunctionEventAvg`` per name and backend (and input shapes, and the first
        ``group_by_stack_n`` stack frames, when asked), in order of first appearance."""
        groups: dict[tuple, FunctionEventAvg] = {}
        for ev in self:
            key: tuple = (ev.name, ev.backend)
            if group_by_input_shape:
                key += (repr(ev.input_shapes),)
            if group_by_stack_n > 0:
                key += (tuple(ev.stack[:group_by_stack_n]),)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(ev.name, ev.backend)
            avg.add(ev)
        if not group_by_input_shape:  # as PyTorch: shapes belong to a shape-grouped row only
            for avg in groups.values():
                avg.input_shapes = ""
        out = EventList(groups.values(), self.device_label, self.profile_memory)
        out._with_shapes = group_by_input_shape and any(ev.input_shapes for ev in self)
        out._stack_n = group_by_stack_n
        return out

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total", "")
        for ev in self:
            total.add(ev)
        total.key = "Total"
        return total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        """The events as a text table, PyTorch's columns plus Backend and Fallback copied."""
        from ._table import format_table

        return format_table(
            self,
            sort_by=sort_by,
            row_limit=row_limit,
            widths=(max_name_column_width, max_shapes_column_width, max_src_column_width),
            header=header,
            top_level_events_only=top_level_events_only,
        )

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (Trace Event Format JSON)."""
        from ._trace import write_trace

        write_trace(self, path, {})

    def supported_export_stacks_metrics(self) -> list[str]:
        return [
            "self_cpu_time_total",
            "self_cuda_time_total",
            "self_xpu_time_total",
            "self_privateuse1_time_total",
        ]

    def export_stacks(self, path: str, metric: str) -> None:
        """Write ``frame;frame;... value`` lines (outermost frame first, value in whole
        microseconds), the folded format flame graph tools read, for events with a stack."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: " + str(self.supported_export_stacks_metrics()))
        attr = "self_cpu_time_total" if metric == "self_cpu_time_total" else "self_device_time_total"
        blank = str.maketrans(" ;\t\n", "____")
        with open(path, "w", encoding="utf-8") as f:
            for ev in self:
                value = int(getattr(ev, attr))
                if ev.stack and value > 0:
                    f.write(";".join(frame.translate(blank) for frame in reversed(ev.stack)) + f" {value}\n")

    def __str__(self) -> str:
        return self.table()
