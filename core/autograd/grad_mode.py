"""Thread-local grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .._public import op, public

PUBLIC = public(
    __name__,
    {
        "is_grad_enabled": op(),
        "is_inference_mode_enabled": op(),
    },
)
__all__ = [*PUBLIC, "enable_grad", "inference_mode", "no_grad", "set_grad_enabled", "state"]

F = TypeVar("F", bound=Callable[..., Any])


from .._state import state


def is_grad_enabled() -> bool:
    """Whether ops performed now record a graph for autograd."""
    return state.enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _Mode:
    """Base of the grad-mode context managers; each also works as a decorator."""

    _target = True

    def __enter__(self) -> None:
        self._prev = state.enabled
        state.enabled = self._target

    def __exit__(self, *exc: object) -> None:
        state.enabled = self._prev

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class _BareDecorator(_Mode):
    """Also usable without parentheses, as PyTorch allows: ``@ember.no_grad``."""

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_BareDecorator):
    """Disable graph recording: ``with ember.no_grad(): y = model(x)``."""

    _target = False


class enable_grad(_BareDecorator):
    """Re-enable graph recording inside ``no_grad``."""

    _target = True


class set_grad_enabled(_Mode):
    """Set grad mode on or off; works as a function, context manager or decorator."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(
                f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type(mode).__name__}"
            )
        self._prev = state.enabled
        self._target = mode
        state.enabled = mode

    def clone(self) -> set_grad_enabled:
        """A new instance with the same mode (PyTorch's ``clone``); creating it sets that mode."""
        return self.__class__(self._target)

    def __repr__(self) -> str:
        return f"ember.autograd.grad_mode.set_grad_enabled(mode={self._target})"

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        state.enabled = self._prev

    def __call__(self, fn: F) -> F:
        target = self._target
        state.enabled = self._prev

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(target):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class inference_mode(_Mode):
    """Like ``no_grad``, for inference-only code: ``with ember.inference_mode(): ...``.

    Tensors made inside are inference tensors (``is_inference()``): outside the mode they
    cannot be changed in place or saved for backward, so no wrong gradient can come of them.
    ``inference_mode(False)`` inside turns the marking off again."""

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # bare ``@ember.inference_mode`` on a function

    def __init__(self, mode: Any = True) -> None:
        self._mode = bool(mode) if isinstance(mode, bool) else True

    def __enter__(self) -> None:
        from .._tensor import inference_users

        self._prev = state.enabled
        self._prev_inf = state.inference
        if self._mode:
            state.enabled = False
        state.inference = self._mode
        inference_users(1)

    def __exit__(self, *exc: object) -> None:
        from .._tensor import inference_users

        state.enabled = self._prev
        state.inference = self._prev_inf
        inference_users(-1)

    def __call__(self, fn: F) -> F:
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
