"""Naming and printing helpers of ``Module``."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor

__all__ = ["addindent", "check_name", "typename"]


def addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def check_name(kind: str, name: Any, owner: Any) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    registered = name in owner._parameters or name in owner._buffers or name in owner._modules
    if hasattr(owner, name) and not registered:
        raise KeyError(f"attribute '{name}' already exists")


def typename(v: Any) -> str:
    if isinstance(v, Tensor):
        return "torch." + {"float32": "FloatTensor", "float64": "DoubleTensor", "int64": "LongTensor"}.get(
            v.dtype.name, "Tensor"
        )
    return (
        type(v).__module__ + "." + type(v).__qualname__
        if type(v).__module__ != "builtins"
        else type(v).__name__
    )
