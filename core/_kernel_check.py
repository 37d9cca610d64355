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
from collections.abc import Callable
from typing import Any

from ember.backends import DType
from ember.backends.registry import LoadedBackend

from . import _tensor
from ._creation import numpy_dtype
from ._dispatch import DispatchMode, active_modes, host_test, pop_mode, push_mode

__all__ = ["kernel_checks_enabled", "set_kernel_checks"]


class _LastOp(DispatchMode):
    """Remembers the op last run on each backend, to name it in errors."""

    def __init__(self) -> None:
        self.last: dict[str, str] = {}

    def __ember_dispatch__(
        self, op: str, backend: str, run: Callable[..., Any], args: tuple, kwargs: dict[str, Any]
    ) -> Any:
        if op not in ("to_host", "from_host", "host_test"):  # copies are not kernel results
            self.last[backend] = op
        return run(*args, **kwargs)


_mode = _LastOp()


def _op_of(be: LoadedBackend) -> str:
    """The op whose result is being wrapped (the last kernel run on ``be``) and the
    frontend function wrapping it."""
    frame = sys._getframe(3)
    where = f"{frame.f_globals.get('__name__', '?')}.{frame.f_code.co_qualname}"
    return f"{_mode.last.get(be.name, 'an op')} (in {where})"


def _shape_and_dtype(data: Any, be: LoadedBackend) -> tuple[tuple[int, ...], Any]:
    # a host test, not a host read: ember.compile guards on the shape and dtype, not the values
    return host_test(be, data, _meta, structural=True)  # type: ignore[no-any-return]


def _meta(host: Any) -> tuple[tuple[int, ...], Any]:
    return tuple(int(s) for s in host.shape), host.dtype


def check_result(data: Any, be: LoadedBackend, dtype: DType, shape: tuple[int, ...]) -> None:
    """Raise RuntimeError if ``data`` is not an array of ``shape`` and ``dtype``."""
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
    if enabled and _mode not in active_modes():
        push_mode(_mode)
    elif not enabled and _mode in active_modes():
        pop_mode(_mode)


def kernel_checks_enabled() -> bool:
    return _tensor.wrap.__code__ is _tensor._checked_wrap.__code__


if os.environ.get("EMBER_CHECK_KERNELS", "") not in ("", "0"):
    set_kernel_checks(True)
