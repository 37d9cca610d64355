"""CuPy import guard, device availability and the "run on this array's device" helper.

Nothing here touches the GPU at import: ember must import (and ``ember info`` must list
``cuda`` as unavailable, with the driver's reason) on machines without a GPU or without
CuPy. The reason is computed once, on the first question, and cached.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["cupy_or_none", "device_count", "device_name", "import_error", "on_device", "unavailable_reason"]

try:  # CuPy is a dependency, but a broken install must not break `import ember`
    import cupy as _cupy
except Exception as e:  # noqa: BLE001 - any import failure makes the backend unavailable
    _cupy = None
    _IMPORT_ERROR: str | None = f"CuPy could not be imported ({type(e).__name__}: {e})"
else:
    _IMPORT_ERROR = None

F = TypeVar("F", bound=Callable[..., Any])


def cupy_or_none() -> Any:
    """The ``cupy`` module, or None when it cannot be imported."""
    return _cupy


def import_error() -> str | None:
    return _IMPORT_ERROR


@functools.lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """None when at least one CUDA device is usable, else the driver's or CuPy's reason."""
    if _cupy is None:
        return _IMPORT_ERROR
    try:
        n = _cupy.cuda.runtime.getDeviceCount()
    except _cupy.cuda.runtime.CUDARuntimeError as e:
        return f"no usable CUDA driver or device: {e}"
    except Exception as e:  # noqa: BLE001 - e.g. libcudart missing: report, never raise
        return f"CUDA runtime could not be queried ({type(e).__name__}: {e})"
    return None if n > 0 else "the CUDA driver reports no devices"


def device_count() -> int:
    if unavailable_reason() is not None:
        return 0
    return int(_cupy.cuda.runtime.getDeviceCount())


def device_name(index: int) -> str:
    props = _cupy.cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    return f"{name} (compute capability {props['major']}.{props['minor']})"


def on_device(fn: F) -> F:
    """Run kernel ``fn`` with the device of its first CuPy-array argument current.

    CuPy launches on the current device and refuses arrays of another one, so kernels on
    ``cuda:1`` must switch; lists (``cat``) are looked into.
    """

    @functools.wraps(fn)
    def k(*args: Any) -> Any:
        for a in args:
            if isinstance(a, list) and a:
                a = a[0]
            if isinstance(a, _cupy.ndarray):
                with a.device:
                    return fn(*args)
        return fn(*args)

    return k  # type: ignore[return-value]
