"""ember.profiler: PyTorch's ``torch.profiler`` over ember's dispatcher.

Rows are the public ops a user called (``nn.functional.linear``, ``add``) and, under them, the
backend kernels they ran (``cpu::matmul``), with the backend, self and total time, input
shapes, bytes allocated and bytes copied by CPU fallbacks (where a backend lacks a kernel).
Nothing is hooked while no profile records. See docs/profiler.md.
"""

from __future__ import annotations

from ._events import EventList, FunctionEvent, FunctionEventAvg
from ._profile import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)
from ._record import record_function

__all__ = [
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]
