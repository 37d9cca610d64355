"""The one door between ember's frontend and a backend's kernels.

Every kernel the frontend runs (ops, nn functional, optimizers, copies between devices) is
called here, by op name on a Tensor's ``LoadedBackend``::

    data = call(x._be, "exp", x._data)

What ``op`` means on a backend is resolved once, when the backend loads, into its table
``LoadedBackend.k`` (``ember/backends/registry.py``): the native kernel (its deterministic
variant under ``use_deterministic_algorithms``; inputs made contiguous on a
``contiguous_only`` backend), else ``None`` for a composite the frontend decomposes
(``run_composite``), else the CPU fallback under the user's policy, else a clear error.

Modes. A ``DispatchMode`` is an interposed layer that sees every kernel call: its one
method ``__ember_dispatch__(op, backend, run, args, kwargs)`` gets the op name, the backend
name and the native inputs, calls ``run(*args, **kwargs)`` (the next mode down, then the
kernel) and returns the outputs, which it may inspect or replace. Modes stack: the one
entered last sees a call first. While a mode's method runs, the ops it runs itself pass only
through the modes below it (as PyTorch's ``TorchDispatchMode``). With no mode active, the
tables hold the bare kernels and a call costs one function frame and one dict lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.backends import registry
from ember.backends.ops import WRITES_OUT
from ember.backends.registry import LoadedBackend

__all__ = [
    "DispatchMode",
    "active_modes",
    "call",
    "call_out",
    "from_host",
    "has_kernel",
    "host_test",
    "kernel_writes_out",
    "to_host",
]


def call(be: LoadedBackend, op: str, *args: Any) -> Any:
    """Run ``op``'s kernel on ``be`` with native arrays and parameters (the hot path: no
    keyword arguments, which cost a dict per call)."""
    return be.k[op](*args)  # type: ignore[misc]


def call_out(be: LoadedBackend, op: str, *args: Any, out: Any) -> Any:
    """Run a ``writes_out`` kernel writing its result into ``out`` (``kernel_writes_out``)."""
    return be.k[op](*args, out=out)  # type: ignore[misc]


def has_kernel(be: LoadedBackend, op: str) -> bool:
    """Whether ``op`` runs as one kernel call on ``be`` (False: a composite the frontend
    decomposes into primitives)."""
    return be.k[op] is not None


def kernel_writes_out(be: LoadedBackend, op: str) -> bool:
    """Whether ``op``'s kernel on ``be`` accepts ``out=`` (``ember.backends.writes_out``)."""
    return bool(getattr(be.k[op], WRITES_OUT, False))


def to_host(be: LoadedBackend, data: Any) -> Any:
    """A NumPy array with ``data``'s values (may alias ``data`` on a host backend)."""
    if _modes:
        return _through_modes("to_host", be.name, be.backend.to_numpy, (data,), {})
    return be.backend.to_numpy(data)


def host_test(be: LoadedBackend, data: Any, test: Callable[[Any], Any], structural: bool = False) -> Any:
    """``test(host copy of data)``, for a check whose only use of the values is ``test``'s small
    result (are the targets in range?): ``ember.compile`` then guards on that result instead of
    on the whole array. ``structural``: the result depends only on shapes and dtypes (a kernel
    result check), fixed for a captured signature, so a capture does not record it."""
    if _modes:
        kw = {"structural": True} if structural else {}
        return _through_modes("host_test", be.name, _run_test(be), (data, test), kw)
    return test(be.backend.to_numpy(data))


def _run_test(be: LoadedBackend) -> Callable[..., Any]:
    return lambda data, test, structural=False: test(be.backend.to_numpy(data))


def from_host(be: LoadedBackend, array: Any, index: int) -> Any:
    """``array`` (NumPy) copied onto device ``index`` of ``be`` (may alias on the host)."""
    if _modes:
        return _through_modes("from_host", be.name, be.backend.from_numpy, (array, index), {})
    return be.backend.from_numpy(array, index)


class DispatchMode:
    """An interposed layer over every kernel call; enter it with ``with``.

    Subclasses override ``__ember_dispatch__``; the default passes the call through.
    """

    def __ember_dispatch__(
        self, op: str, backend: str, run: Callable[..., Any], args: tuple, kwargs: dict[str, Any]
    ) -> Any:
        return run(*args, **kwargs)

    def __enter__(self) -> DispatchMode:  # noqa: PYI034 - typing.Self needs Python 3.11
        push_mode(self)
        return self

    def __exit__(self, *exc: object) -> None:
        pop_mode(self)


_modes: list[DispatchMode] = []
# How many modes (from the bottom of the stack) the next call passes through: lowered while
# a mode's own method runs, so the ops it runs skip it and the modes above it.
_depth: list[int] = [0]


def push_mode(mode: DispatchMode) -> None:
    _modes.append(mode)
    _depth[0] = len(_modes)
    if len(_modes) == 1:
        registry.set_interposer(_interpose)


def pop_mode(mode: DispatchMode) -> None:
    if not _modes or _modes[-1] is not mode:
        raise RuntimeError("dispatch modes must be exited in the reverse order they were entered")
    _modes.pop()
    _depth[0] = len(_modes)
    if not _modes:
        registry.set_interposer(None)


def active_modes() -> tuple[DispatchMode, ...]:
    """The entered modes, bottom first."""
    return tuple(_modes)


def _interpose(lb: LoadedBackend, op: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` routed through the active modes (installed in the tables while any is active)."""
    name = lb.name

    def run(*args: Any, **kwargs: Any) -> Any:
        return _through_modes(op, name, fn, args, kwargs)

    if getattr(fn, WRITES_OUT, False):
        setattr(run, WRITES_OUT, True)
    return run


def _through_modes(op: str, backend: str, fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
    top = _depth[0]
    if top == 0:
        return fn(*args, **kwargs)
    mode = _modes[top - 1]

    def below(*a: Any, **kw: Any) -> Any:
        saved = _depth[0]
        _depth[0] = top - 1
        try:
            return _through_modes(op, backend, fn, a, kw)
        finally:
            _depth[0] = saved

    _depth[0] = top - 1  # the mode's own ops skip it and the modes above it
    try:
        return mode.__ember_dispatch__(op, backend, below, args, kwargs)
    finally:
        _depth[0] = top
