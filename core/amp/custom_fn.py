"""``ember.amp.custom_fwd`` / ``custom_bwd``: PyTorch's decorators that make a custom autograd
Function's backward run under the autocast state its forward saw, or run forward in one dtype."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from .._tensor import Tensor
from ..backends.dtypes import DType, float64
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled

__all__ = ["custom_bwd", "custom_fwd"]


def _cast(value: Any, device_type: str, dtype: DType) -> Any:
    if isinstance(value, Tensor):
        ok = value.is_floating_point() and value.device.type == device_type and value.dtype != float64
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def _check(device_type: Any) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")  # noqa: TRY004


def custom_fwd(
    fwd: Callable[..., Any] | None = None, *, device_type: str, cast_inputs: DType | None = None
) -> Any:
    """Decorate ``Function.forward``: remember the autocast state for backward; with
    ``cast_inputs``, run forward outside autocast on inputs cast to that dtype."""
    _check(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if is_autocast_enabled(device_type):
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorate ``Function.backward``: run it under the autocast state forward ran under."""
    _check(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
