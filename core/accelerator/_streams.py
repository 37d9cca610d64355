"""``Stream`` and ``Event`` (PyTorch's ``torch.Stream``/``torch.Event``) over a backend's queues.

A backend with queues offers ``new_stream``/``current_stream``/``set_current_stream``/
``new_event`` (optional methods, see ``docs/backend-guide.md``) returning handles shaped as
below. A device without them (``cpu``, the minimal example) gets what PyTorch gives on the
CPU: one stream per device that is always in order, and events that cannot be recorded.
"""

from __future__ import annotations

from typing import Any, Protocol

from ember.backends import device, registry
from ember.backends.registry import LoadedBackend

from ._current import choice, current_index, device_index_of, require, set_index

__all__ = ["Event", "Stream", "current_stream", "set_stream"]

_Device = device  # the properties named ``device`` below shadow the class in their scope


class StreamHandle(Protocol):
    """What a backend's ``new_stream``/``current_stream`` return."""

    id: int
    native: Any

    def query(self) -> bool: ...
    def synchronize(self) -> None: ...
    def wait_event(self, event: Any) -> None: ...


class EventHandle(Protocol):
    """What a backend's ``new_event`` returns."""

    id: int

    def record(self, stream: Any) -> None: ...
    def query(self) -> bool: ...
    def synchronize(self) -> None: ...
    def elapsed_time(self, end: Any) -> float: ...


def _place(dev: Any) -> tuple[str, int, LoadedBackend | None]:
    """(type, index, backend) for a Stream/Event: the accelerator's current device by
    default, else the CPU (PyTorch's index -1 there)."""
    if dev is None:
        found = choice()
        if found is None or not found[1]:
            return "cpu", -1, None
        return found[0], current_index(found[0]), registry.get(found[0])
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cpu":
        return "cpu", -1, None
    lb = registry.get(d.type)
    index = current_index(d.type) if d.index is None else d.index
    count = lb.backend.device_count()
    if index >= count:
        raise RuntimeError(f"device is out of range, device is {index}, total number of device is {count}.")
    return d.type, index, lb


def _no_events(device_type: str) -> RuntimeError:
    return RuntimeError(f"{device_type} backend doesn't support events.")


class Stream:
    """A queue of work on one device; ``with stream:`` makes it current (and its device)."""

    __slots__ = ("_handle", "_lb", "_saved", "device_index", "device_type")

    def __init__(self, device: Any = None, *, priority: int = 0) -> None:
        self.device_type, self.device_index, self._lb = _place(device)
        make = getattr(self._lb.backend, "new_stream", None) if self._lb else None
        self._handle: StreamHandle | None = make(self.device_index, priority) if make else None
        self._saved: list[tuple[int, Stream]] = []

    @classmethod
    def _wrap(cls, device_type: str, index: int, lb: LoadedBackend | None, handle: Any) -> Stream:
        s = cls.__new__(cls)
        s.device_type, s.device_index, s._lb, s._handle, s._saved = device_type, index, lb, handle, []
        return s

    @property
    def stream_id(self) -> int:
        return 0 if self._handle is None else int(self._handle.id)

    @property
    def device(self) -> _Device:
        return device("cpu") if self.device_type == "cpu" else device(self.device_type, self.device_index)

    @property
    def native_handle(self) -> Any:
        if self._handle is None:
            raise RuntimeError("Backend doesn't support getting stream native handle.")
        return self._handle.native

    def query(self) -> bool:
        """True when all work queued here has finished (a device without queues: after
        waiting for it, since it cannot tell without)."""
        if self._handle is not None:
            return bool(self._handle.query())
        self.synchronize()
        return True

    def synchronize(self) -> None:
        if self._handle is not None:
            self._handle.synchronize()
        elif self._lb is not None:
            self._lb.backend.synchronize(self.device_index)

    def wait_event(self, event: Event) -> None:
        """Later work queued here waits for ``event`` (the host does not wait, unless this
        stream's device has no queues to chain it to)."""
        if event._handle is None:
            return  # an event that cannot be recorded has nothing to wait for (PyTorch's cpu)
        if self._handle is None:
            event.synchronize()
        else:
            self._handle.wait_event(event._handle)

    def wait_stream(self, stream: Stream) -> None:
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def is_capturing(self) -> bool:
        return False  # ember has no graph capture

    def __enter__(self) -> Stream:  # noqa: PYI034 - typing.Self needs Python 3.11
        if self._lb is not None:
            self._saved.append((current_index(self.device_type), current_stream(self.device_index)))
            set_stream(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lb is not None and self._saved:
            index, previous = self._saved.pop()
            set_stream(previous)
            set_index(self.device_type, self._lb, index)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stream):
            return NotImplemented
        return (self.device_type, self.device_index, self.stream_id) == (
            other.device_type,
            other.device_index,
            other.stream_id,
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return (
            f"ember.Stream device_type={self.device_type}, device_index={self.device_index}, "
            f"stream_id={self.stream_id}"
        )


class Event:
    """A marker in a stream: wait for it, ask whether it passed, time between two."""

    __slots__ = ("_handle", "_lb", "_recorded", "device_index", "device_type", "enable_timing")

    def __init__(
        self,
        device: Any = None,
        *,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
    ) -> None:
        # blocking and interprocess are accepted and ignored, as in PyTorch's torch.Event.
        self.device_type, self.device_index, self._lb = _place(device)
        self.enable_timing = bool(enable_timing)
        self._recorded = False
        make = getattr(self._lb.backend, "new_event", None) if self._lb else None
        self._handle: EventHandle | None = make(self.device_index, self.enable_timing) if make else None

    @property
    def device(self) -> _Device:
        return device("cpu") if self.device_type == "cpu" else device(self.device_type, self.device_index)

    @property
    def event_id(self) -> int:
        return 0 if self._handle is None else int(self._handle.id)

    def record(self, stream: Stream | None = None) -> None:
        if self._handle is None:
            raise _no_events(self.device_type)
        if stream is None:
            stream = current_stream(self.device_index)
        if (stream.device_type, stream.device_index) != (self.device_type, self.device_index):
            raise RuntimeError(
                f"Event device {self.device} does not match recording stream's device {stream.device}."
            )
        self._handle.record(stream._handle)
        self._recorded = True

    def query(self) -> bool:
        return True if self._handle is None else bool(self._handle.query())

    def synchronize(self) -> None:
        if self._handle is not None:
            self._handle.synchronize()

    def wait(self, stream: Stream | None = None) -> None:
        """Work queued on ``stream`` (default: the current one) after this waits for the event."""
        if self._handle is None:
            return
        (current_stream(self.device_index) if stream is None else stream).wait_event(self)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event`` (both recorded and finished)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded) or self._handle is None or end_event._handle is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return float(self._handle.elapsed_time(end_event._handle))

    def __repr__(self) -> str:
        return (
            f"ember.Event device_type={self.device_type}, device_index={self.device_index}, "
            f"event_flag={int(self.enable_timing)}, event_id={self.event_id}"
        )


def current_stream(device: Any = None, /) -> Stream:
    """The stream work on ``device`` (default: the current one) is queued to now."""
    index = device_index_of(device, optional=True)
    name, lb = require()
    get = getattr(lb.backend, "current_stream", None)
    return Stream._wrap(name, index, lb, get(index) if get else None)


def set_stream(stream: Stream) -> None:
    """Queue later work on ``stream``'s device to it; its device becomes current."""
    name, lb = require()
    if stream.device_type != name:
        raise RuntimeError(f"{stream.device_type} doesn't match the current accelerator {name}.")
    set_index(name, lb, stream.device_index)
    put = getattr(lb.backend, "set_current_stream", None)
    if put is not None and stream._handle is not None:
        put(stream.device_index, stream._handle)
