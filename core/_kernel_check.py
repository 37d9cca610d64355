"""Debug mode: the frontend checks every kernel result it wraps.

A kernel's array becomes a Tensor through ``wrap`` with the shape and dtype the frontend
computed; unchecked, a kernel returning another shape (a batched matmul with its batch
dims flattened) gives silently wrong values later. With checks on, ``wrap`` compares the
array's shape and host dtype with those and raises RuntimeError naming the op, the backend,
what was expected and what came back. The conformance suite turns it on; so does
``EMBER_CHECK_KERNELS=1`` at import. Off, it costs nothing: ``wrap`` keeps its own code.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ember.backends import DType, registry
from ember.backends.registry import LoadedBackend

from . import _tensor
from ._creation import numpy_dtype

__all__ = ["kernel_checks_enabled", "set_kernel_checks"]


class _Recording(dict):  # type: ignore[type-arg]
    """A backend's kernel table that remembers the op last looked up (to name it in errors)."""

    last = "an op"

    def __getitem__(self, op: str) -> Any:
        self.last = op
        return dict.__getitem__(self, op)

    def get(self, op: str, default: Any = None) -> Any:
        self.last = op
        return dict.get(self, op, default)


_recording: list[LoadedBackend] = []


def _record(be: LoadedBackend) -> None:
    if type(be.k) is not _Recording:
        be.k = _Recording(be.k)
        _recording.append(be)


def _op_of(be: LoadedBackend) -> str:
    """The op whose result is being wrapped (the last kernel looked up on ``be``) and the
    frontend function wrapping it."""
    frame = sys._getframe(3)
    where = f"{frame.f_globals.get('__name__', '?')}.{frame.f_code.co_qualname}"
    k = be.k
    return f"{getattr(k, 'last', 'an op')} (in {where})"


def _shape_and_dtype(data: Any, be: LoadedBackend) -> tuple[tuple[int, ...], Any]:
    host = be.backend.to_numpy(data)
    return tuple(int(s) for s in host.shape), host.dtype


def check_result(data: Any, be: LoadedBackend, dtype: DType, shape: tuple[int, ...]) -> None:
    """Raise RuntimeError if ``data`` is not an array of ``shape`` and ``dtype``."""
    if type(be.k) is not _Recording:  # the first result seen from this backend: record from now on
        _record(be)
    kind = be.backend.array_type
    if not isinstance(data, kind):
        raise RuntimeError(  # noqa: TRY004 - a broken backend, not a user's wrong argument type
            f"{_op_of(be)}: backend '{be.name}' returned a {type(data).__name__}, expected its "
            f"array type {kind.__name__} (kernel result check)"
        )
    got_shape, got_dtype = _shape_and_dtype(data, be)
    want_dtype = numpy_dtype(dtype)
    if got_shape != tuple(shape) or got_dtype != want_dtype:
        raise RuntimeError(
            f"{_op_of(be)}: backend '{be.name}' returned shape {got_shape} and dtype "
            f"{_name(got_dtype)}, expected shape {tuple(shape)} and dtype {dtype.name} "
            "(kernel result check)"
        )


def _name(d: Any) -> str:
    return "bool" if d.kind == "b" else d.name if d.isnative else f"{d.name} ({d.str}, byte-swapped)"


def set_kernel_checks(enabled: bool) -> None:
    """Turn kernel-result checks on or off (process-wide)."""
    _tensor._result_check = check_result
    _tensor.wrap.__code__ = (_tensor._checked_wrap if enabled else _tensor._plain_wrap).__code__
    if enabled:
        # Backends loaded so far record from now on (later ones at their first result).
        for be in list(registry._loaded.values()):
            _record(be)
    else:
        for be in _recording:  # plain dict lookups again on the hot path
            be.k = dict(be.k)
        _recording.clear()


def kernel_checks_enabled() -> bool:
    return _tensor.wrap.__code__ is _tensor._checked_wrap.__code__


if os.environ.get("EMBER_CHECK_KERNELS", "") not in ("", "0"):
    set_kernel_checks(True)
