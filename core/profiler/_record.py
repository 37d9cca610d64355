"""The recorder behind ``profile``: a dispatch mode (every kernel call, with its backend) and
an op observer (the public op a user called) writing one ``FunctionEvent`` per range, nested
by time on a per-thread stack; and ``record_function``, a labelled range.

Both hooks are entered only while a profile records, so with no profiler active ember pays
nothing (the dispatcher's tables hold the bare kernels and ``sys.setprofile`` is unset).

Device time, for a backend whose activity is profiled: where the backend has the optional
``kernel_events()`` hook (OpenCL's profiling counters, CUDA events), each kernel call is
bracketed by two marks of that session and, once the profile stops, gets the device kernels
launched between them (``FunctionEvent.device_events``) and their summed time; nothing waits
meanwhile. Elsewhere a kernel call is followed by the backend's ``synchronize`` and its device
time is the wall time from launch to the end of the sync.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import traceback
import warnings
from typing import Any

from ember import _op_trace
from ember._dispatch import DispatchMode
from ember._op_trace import OpObserver, public_ops
from ember.backends import registry
from ember.backends.ops import ALL_OPS

from ._events import FunctionEvent

__all__ = ["Recorder", "active_recorder", "record_function"]

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_active: list[Recorder] = []


def active_recorder() -> Recorder | None:
    """The recorder collecting events now (the innermost profile), or None."""
    return _active[-1] if _active else None


def _shape_of(value: Any) -> list[Any]:
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, (int, float, complex)):
        try:
            return [int(d) for d in shape]
        except TypeError:
            return []
    if isinstance(value, (list, tuple)) and value and all(hasattr(v, "shape") for v in value):
        return [_shape_of(v) for v in value]
    return []


class _Kernels(DispatchMode):
    def __init__(self, rec: Recorder) -> None:
        self.rec = rec

    def __ember_dispatch__(self, op: str, backend: str, run: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        # A kernel runs no public op, so the op observer's hook is lifted while it runs: its
        # Python calls (and this method's) would each cost a call of the hook.
        hook = sys.getprofile()
        if hook is not _op_trace._hook:
            return self._record(op, backend, run, args, kwargs)
        sys.setprofile(None)
        try:
            return self._record(op, backend, run, args, kwargs)
        finally:
            sys.setprofile(hook)

    def _record(self, op: str, backend: str, run: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        rec = self.rec
        kind = rec.kernel_kind(backend, op)
        device = backend in rec.device_backends
        session = rec.session(backend) if device else None
        ev = rec.open(kind[0], "kernel", backend)
        if session is not None:
            mark = session.mark()
            try:
                out = run(*args, **kwargs)
            finally:
                rec.close(ev)
                rec.pending.append((ev, session, mark, session.mark()))
        else:
            try:
                out = run(*args, **kwargs)
                if device:
                    rec.synchronize(backend, args, out)
            finally:
                rec.close(ev)
            if device:
                ev.device_ns = ev.end_ns - ev.start_ns
        parent = ev.cpu_parent
        if parent is not None and parent.kind == "op":
            if not parent.backend:
                parent.backend = backend
            ev.stack = parent.stack  # the kernel's time belongs to its op's call site
        if rec.record_shapes:
            ev.input_shapes = [_shape_of(a) for a in args]
        if rec.profile_memory and kind[1] and "out" not in kwargs:
            ev.self_memory = rec.nbytes(backend, out)
        if kind[2]:
            ev.fallback_bytes_self = rec.nbytes(backend, args) + rec.nbytes(backend, out)
        return out


class _Ops(OpObserver):
    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.open: list[FunctionEvent] = []

    def op_enter(self, name: str, arguments: dict[str, Any]) -> None:
        rec = self.rec
        ev = rec.open(name, "op", "")
        for v in arguments.values():
            if hasattr(v, "_be") and hasattr(v, "device"):  # a Tensor (not imported: import order)
                ev.backend = v.device.type
                break
        if rec.record_shapes:
            ev.input_shapes = [_shape_of(v) for v in arguments.values()]
        if rec.with_stack:
            ev.stack = _user_stack()
        self.open.append(ev)

    def op_exit(self, name: str, result: Any) -> None:
        if self.open:
            ev = self.open.pop()
            self.rec.close(ev)
            kind = getattr(getattr(result, "device", None), "type", None)
            if kind:
                ev.backend = kind


def _user_stack() -> list[str]:
    """The calling frames outside ember, innermost first (``with_stack``)."""
    frames = traceback.extract_stack()[:-1]
    return [
        f"{f.filename}({f.lineno}): {f.name}"
        for f in reversed(frames)
        if not f.filename.startswith(_EMBER_DIR)
    ]


class Recorder:
    """Collects events while started; ``events`` holds them once stopped, parents first."""

    def __init__(
        self,
        cpu: bool = True,
        device_backends: frozenset[str] = frozenset(),
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
    ) -> None:
        self.cpu = cpu
        self.device_backends = device_backends
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.events: list[FunctionEvent] = []
        self._tls = threading.local()
        self._backends: dict[str, registry.LoadedBackend] = {}
        self._kinds: dict[tuple[str, str], tuple[str, bool, bool]] = {}
        self._hooks: list[Any] = []
        # Device-time sessions per backend (None: the backend has no kernel_events hook), and
        # the kernel calls waiting for their device kernels: (event, session, mark, mark).
        self._sessions: dict[str, Any] = {}
        self.pending: list[tuple[FunctionEvent, Any, Any, Any]] = []
        self.started = False

    def open(self, name: str, kind: str, backend: str) -> FunctionEvent:
        stack = getattr(self._tls, "stack", None)
        if stack is None:
            stack = self._tls.stack = []
        ev = FunctionEvent(len(self.events), name, kind, backend, threading.get_ident(), 0)
        if stack:
            ev.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(ev)
        self.events.append(ev)
        stack.append(ev)
        ev.start_ns = ev.end_ns = time.perf_counter_ns()
        return ev

    def close(self, ev: FunctionEvent) -> None:
        ev.end_ns = time.perf_counter_ns()
        stack = self._tls.stack
        while stack:  # an exception may have skipped inner closes
            if stack.pop() is ev:
                break

    def kernel_kind(self, backend: str, op: str) -> tuple[str, bool, bool]:
        """(event name, allocates its result, runs through the CPU fallback), cached."""
        key = (backend, op)
        kind = self._kinds.get(key)
        if kind is None:
            info = ALL_OPS.get(op)
            allocates = info is not None and info.kind != "view"
            fallback = info is not None and backend != "cpu" and op not in self.backend(backend).native
            kind = self._kinds[key] = (f"{backend}::{op}", allocates, fallback)
        return kind

    def backend(self, name: str) -> registry.LoadedBackend:
        lb = self._backends.get(name)
        if lb is None:
            lb = self._backends[name] = registry.get(name)
        return lb

    def nbytes(self, backend: str, value: Any) -> int:
        array_type = self.backend(backend).backend.array_type
        if isinstance(value, array_type):
            return int(getattr(value, "nbytes", 0))
        if isinstance(value, (list, tuple)):
            return sum(self.nbytes(backend, v) for v in value)
        return 0

    def session(self, backend: str) -> Any:
        """The backend's kernel-event session, started on its first kernel; None without one."""
        try:
            return self._sessions[backend]
        except KeyError:
            hook = getattr(self.backend(backend).backend, "kernel_events", None)
            session = hook() if callable(hook) else None
            if session is not None:
                session.start()
            self._sessions[backend] = session
            return session

    def _collect_device_events(self) -> None:
        """Stop the sessions and give each kernel call its device kernels and their time."""
        failed = set()
        for backend, session in self._sessions.items():
            if session is None:
                continue
            try:
                session.stop()
            except Exception as e:  # noqa: BLE001 - a device error must not lose the CPU events
                warnings.warn(
                    f"profiler: no device times for {backend}: {type(e).__name__}: {e}", stacklevel=3
                )
                failed.add(id(session))
        for ev, session, a, b in self.pending:
            if id(session) in failed:
                continue
            records = session.between(a, b)
            ev.device_events = [(name or ev.name, start, end) for name, start, end in records]
            ev.device_ns = sum(end - start for _, start, end in records)
        self._sessions, self.pending = {}, []

    def synchronize(self, backend: str, args: tuple, out: Any) -> None:
        lb = self.backend(backend)
        for v in (out, *args):
            v = v[0] if isinstance(v, (list, tuple)) and v else v
            if isinstance(v, lb.backend.array_type):
                lb.backend.synchronize(lb.backend.index_of(v))
                return

    def start(self) -> None:
        """Begin recording (kernel calls always; public ops and labels with CPU activity)."""
        if self.started:
            return
        self.started = True
        _active.append(self)
        if self.cpu or self.device_backends:
            self._hooks.append(_Kernels(self).__enter__())
        if self.cpu:
            public_ops()  # built once, now, so the first op's time does not include it
            self._hooks.append(_Ops(self).__enter__())

    def stop(self) -> None:
        """Stop recording; events left open (a profile stopped inside a range) are closed now."""
        if not self.started:
            return
        self.started = False
        while self._hooks:
            self._hooks.pop().__exit__(None, None, None)
        with contextlib.suppress(ValueError):
            _active.remove(self)
        now = time.perf_counter_ns()
        for ev in getattr(self._tls, "stack", ()):
            ev.end_ns = now
        self._tls.stack = []
        self._collect_device_events()
        if not self.cpu:  # device activity only: keep the kernels of those backends
            self.events = [e for e in self.events if e.backend in self.device_backends]


class record_function(contextlib.ContextDecorator):
    """A labelled range in the profile (context manager or decorator); costs one list read
    when no profile is recording."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._rec: Recorder | None = None
        self._ev: FunctionEvent | None = None

    def __enter__(self) -> record_function:  # noqa: PYI034 - typing.Self needs Python 3.11
        rec = active_recorder()
        if rec is not None and rec.cpu:
            self._rec, self._ev = rec, rec.open(self.name, "user", "")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._rec is not None and self._ev is not None:
            self._rec.close(self._ev)
        self._rec = self._ev = None
