"""PyTorch's argument-parser errors ("fn(): argument 'x' (position 1) must be Tensor, not
float"), raised at op entry points.

The checks run on the failure path only (after the fast ``isinstance`` test fails, or when an
op body trips over a non-Tensor), so the hot ops pay nothing for them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ember.backends import DType

from .._tensor import Tensor

__all__ = [
    "check_bool",
    "check_dtype",
    "check_number",
    "check_tensor",
    "int_tuple",
    "invalid_combination",
    "must_be",
    "tensor_args",
    "typename",
]

F = TypeVar("F", bound=Callable[..., Any])

_NUMBER = (bool, int, float, complex)


def typename(x: Any) -> str:
    """The type name PyTorch's parser prints for ``x``."""
    return "Tensor" if isinstance(x, Tensor) else type(x).__name__


def must_be(fn: str, arg: str, kind: str, value: Any, pos: int | None = None) -> TypeError:
    """``fn(): argument 'arg' (position N) must be KIND, not TYPE``."""
    where = f" (position {pos})" if pos is not None else ""
    return TypeError(f"{fn}(): argument '{arg}'{where} must be {kind}, not {typename(value)}")


def invalid_combination(fn: str, args: Sequence[Any], kwargs: dict[str, Any] | None = None) -> TypeError:
    """PyTorch's error for arguments that match none of an op's overloads. Its first line is
    PyTorch's; the overload list that follows in PyTorch is its own signature catalogue, so
    ember points at its docs instead."""
    got = [typename(a) for a in args] + [f"{k}={typename(v)}" for k, v in (kwargs or {}).items()]
    return TypeError(
        f"{fn}() received an invalid combination of arguments - got ({', '.join(got)}), but expected one of:\n"
        f" * the signatures in help(ember.{fn})"
    )


def check_tensor(fn: str, arg: str, x: Any, pos: int | None = None) -> None:
    if not isinstance(x, Tensor):
        raise must_be(fn, arg, "Tensor", x, pos)


def check_bool(fn: str, arg: str, v: Any, pos: int | None = None) -> None:
    if not isinstance(v, bool):
        raise must_be(fn, arg, "bool", v, pos)


def check_number(fn: str, arg: str, v: Any, pos: int | None = None) -> None:
    """A Python number, a NumPy scalar or a one-element tensor pass, as in PyTorch."""
    if isinstance(v, _NUMBER) or (hasattr(v, "item") and getattr(v, "ndim", None) == 0):
        return
    if isinstance(v, Tensor) and v.numel() == 1:
        return
    raise must_be(fn, arg, "Number", v, pos)


def check_dtype(fn: str, arg: str, v: Any, pos: int | None = None) -> None:
    """``None`` or an ember dtype."""
    if v is not None and not isinstance(v, DType):
        raise must_be(fn, arg, "ember.dtype", v, pos)


def _is_int(v: Any) -> bool:
    return not isinstance(v, bool) and (isinstance(v, int) or hasattr(v, "__index__"))


def int_tuple(fn: str, arg: str, sizes: Sequence[Any], pos: int = 1) -> tuple[int, ...]:
    """Varargs ints or one sequence of ints (``x.repeat(2, 3)``, ``x.repeat((2, 3))``), with
    the errors of PyTorch's parser for each way of getting them wrong."""
    if len(sizes) == 1 and not _is_int(sizes[0]):
        seq = sizes[0]
        if not isinstance(seq, (tuple, list)):
            raise must_be(fn, arg, "tuple of ints", seq, pos)
        if seq and not _is_int(seq[0]):
            raise TypeError(
                f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, but found "
                f"element of type {typename(seq[0])} at pos 0"
            )
        sizes = seq
    elif sizes and not _is_int(sizes[0]):
        raise TypeError(f"{fn}() takes 1 positional argument but {len(sizes)} were given")
    for i, s in enumerate(sizes):
        if not _is_int(s):
            raise TypeError(
                f"{fn}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                f'"type must be tuple of ints,but got {typename(s)}"'
            )
    return tuple(s if isinstance(s, int) else s.__index__() for s in sizes)


def tensor_args(fn: str, *names: str) -> Callable[[F], F]:
    """Decorate an op whose leading parameters ``names`` are Tensors: when the body fails on
    a non-Tensor there (an ``AttributeError`` or ``TypeError``), raise PyTorch's parser error
    instead. A correct call pays one ``try`` and nothing else."""

    def deco(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return f(*args, **kwargs)
            except (AttributeError, TypeError):
                for i, name in enumerate(names):
                    if i < len(args):
                        check_tensor(fn, name, args[i], i + 1)
                    elif name in kwargs:
                        check_tensor(fn, name, kwargs[name])
                raise

        return wrapper  # type: ignore[return-value]

    return deco
