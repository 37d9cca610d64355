"""ember.autograd.profiler: PyTorch's older profiler API (``torch.autograd.profiler``), the
same recorder as ``ember.profiler`` behind the legacy signatures, so code written for it runs
unchanged. ``emit_nvtx`` and ``emit_itt`` annotate for vendor tools ember has none of: they
are accepted and do nothing."""

from __future__ import annotations

import warnings
from typing import Any

from ember.profiler import EventList, FunctionEvent, FunctionEventAvg, ProfilerActivity, record_function
from ember.profiler import profile as _profile

__all__ = [
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "emit_itt",
    "emit_nvtx",
    "profile",
    "record_function",
]


class profile:
    """Records while entered (``with``); ``function_events`` and the tables once exited."""

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config: Any = None,
        acc_events: bool = False,
        custom_trace_id_callback: Any = None,
        post_processing_timeout_s: float | None = None,
    ) -> None:
        self.enabled = enabled
        if not use_cpu and not use_kineto:
            raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
        if use_cuda:
            warnings.warn(
                "The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` instead.",
                FutureWarning,
                stacklevel=2,
            )
            use_device = "cuda"
        activities: list[Any] = [ProfilerActivity["CPU"]] if use_cpu else []
        if use_device:
            activities.append(use_device.split(":")[0])
        self._inner = _profile(
            activities=activities or [ProfilerActivity["CPU"]],
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
            with_modules=with_modules,
        )
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.entered = False
        self.function_events: EventList | None = EventList() if enabled else None

    def __enter__(self) -> profile:  # noqa: PYI034 - typing.Self needs Python 3.11
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._inner.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        self._inner.stop()
        self.function_events = self._inner.events()

    def _events(self) -> EventList:
        if self.function_events is None:
            raise AttributeError("'NoneType' object has no attribute 'key_averages'")
        return self.function_events

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

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
        events = self._events()
        if not events:
            return ""
        return events.table(
            sort_by,
            row_limit,
            max_src_column_width,
            max_name_column_width,
            max_shapes_column_width,
            header,
            top_level_events_only,
        )

    def export_chrome_trace(self, path: str) -> None:
        self._inner.export_chrome_trace(path)

    def total_average(self) -> FunctionEventAvg:
        return self._events().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total

    def __str__(self) -> str:
        return self.table()


class emit_nvtx:
    """Accepted for PyTorch compatibility: ember has no NVTX ranges to emit."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False

    def __enter__(self) -> emit_nvtx:  # noqa: PYI034 - typing.Self needs Python 3.11
        if self.enabled and self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.entered = False


class emit_itt(emit_nvtx):
    """Accepted for PyTorch compatibility: ember has no ITT ranges to emit."""

    def __enter__(self) -> emit_itt:  # noqa: PYI034
        if self.enabled and self.entered:
            raise RuntimeError("ITT annotation context manager is not reentrant")
        self.entered = True
        return self
