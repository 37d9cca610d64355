"""``ember.utils.backcompat``: PyTorch's two back-compatibility warning switches.

Old scripts set ``broadcast_warning.enabled`` and ``keepdim_warning.enabled`` to hear about
broadcasting and ``keepdim`` changes of PyTorch 0.2. PyTorch keeps the flags settable and
readable but no op reads them any more; ember does the same: they take only a ``bool`` (with
PyTorch's error otherwise) and change nothing else.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Warning", "broadcast_warning", "keepdim_warning"]

_flags = {"broadcast": False, "keepdim": False}


def _setter(name: str) -> Callable[[bool], None]:
    def set_flag(value: bool) -> None:
        if type(value) is not bool:
            kind = type(value)
            shown = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
            raise RuntimeError(f"set_backcompat_{name}_warn expects a bool, but got {shown}")
        _flags[name] = value

    return set_flag


def _getter(name: str) -> Callable[[], bool]:
    return lambda: _flags[name]


class Warning:  # PyTorch's name, shadowing the builtin inside this module only
    """One switch: ``enabled`` reads and writes it through the setter and getter."""

    def __init__(self, setter: Callable[[bool], None], getter: Callable[[], bool]) -> None:
        self.setter = setter
        self.getter = getter

    def set_enabled(self, value: bool) -> None:
        self.setter(value)

    def get_enabled(self) -> bool:
        return self.getter()

    enabled = property(get_enabled, set_enabled)


broadcast_warning = Warning(_setter("broadcast"), _getter("broadcast"))
keepdim_warning = Warning(_setter("keepdim"), _getter("keepdim"))
