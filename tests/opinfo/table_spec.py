"""The entry type of the OpInfo-style gradient table and the shorthands the tables use.

An entry names one public op and says how to call it on small float64 inputs. ``A(...)``
marks a differentiable input (made fresh, seeded by the entry's name, with
``requires_grad``); every other positional value is passed as is (dims, index tensors).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ember
import numpy as np

__all__ = ["PREFIXES", "SPD", "A", "E", "Entry", "P", "U", "idx", "resolve"]


@dataclass(frozen=True)
class A:
    """A differentiable float64 input of ``shape`` drawn uniformly from [lo, hi]."""

    shape: tuple[int, ...]
    lo: float = -1.0
    hi: float = 1.0
    spd: bool = False  # a symmetric positive definite matrix (shape[-1] == shape[-2])
    kink_free: bool = True  # |x| >= 0.1: away from the kinks of abs, relu, sign, round

    def make(self, rng: np.random.Generator) -> ember.Tensor:
        a = rng.uniform(self.lo, self.hi, self.shape)
        if self.kink_free and self.lo < 0 < self.hi:
            a = np.where(np.abs(a) < 0.1, np.copysign(0.1, a) + a, a)
        if self.spd:
            n = self.shape[-1]
            a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
        return ember.tensor(a, dtype=ember.float64, requires_grad=True)


def P(*shape: int, lo: float = 0.5, hi: float = 1.5) -> A:
    """A positive input (logs, roots, divisors)."""
    return A(shape, lo, hi)


def U(*shape: int, lo: float = -1.0, hi: float = 1.0) -> A:
    return A(shape, lo, hi)


def SPD(*shape: int) -> A:
    return A(shape, -1.0, 1.0, spd=True)


PREFIXES: dict[str, str] = {
    "": "ember",
    "F.": "ember.nn.functional",
    "linalg.": "ember.linalg",
    "special.": "ember.special",
    "fft.": "ember.fft",
}


def resolve(name: str) -> Callable[..., Any]:
    """The public callable a table name stands for (``Tensor.x`` calls the method)."""
    if name.startswith("Tensor."):
        meth = name[len("Tensor.") :]
        return lambda t, *a, **k: getattr(t, meth)(*a, **k)
    import importlib

    for prefix in sorted(PREFIXES, key=len, reverse=True):
        if prefix and name.startswith(prefix):
            return getattr(importlib.import_module(PREFIXES[prefix]), name[len(prefix) :])
    return getattr(ember, name)


@dataclass(frozen=True)
class Entry:
    """One differentiable public op: how to call it and what to check."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    fn: Callable[..., Any] | None = None  # called with the differentiable inputs only
    gradgrad: bool = True  # PyTorch supports double backward here
    case: str = ""  # distinguishes several entries of one op
    atol: float = 1e-5
    rtol: float = 1e-3
    eps: float = 1e-6  # finite-difference step (larger for ops that round to float32)

    @property
    def id(self) -> str:
        return f"{self.name}-{self.case}" if self.case else self.name

    def inputs(self) -> tuple[ember.Tensor, ...]:
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        return tuple(a.make(rng) for a in self.args if isinstance(a, A))

    def func(self) -> Callable[..., Any]:
        if self.fn is not None:
            return self.fn
        op, args, kwargs = resolve(self.name), self.args, self.kwargs

        def call(*xs: ember.Tensor) -> Any:
            it = iter(xs)
            return op(*(next(it) if isinstance(a, A) else a for a in args), **kwargs)

        return call


def E(
    name: str,
    *args: Any,
    fn: Callable[..., Any] | None = None,
    gradgrad: bool = True,
    case: str = "",
    atol: float = 1e-5,
    rtol: float = 1e-3,
    eps: float = 1e-6,
    **kwargs: Any,
) -> Entry:
    """An entry; with no args, one (2, 3) input in [-1, 1]."""
    return Entry(name, args or (U(2, 3),), kwargs, fn, gradgrad, case, atol, rtol, eps)


def idx(values: Any) -> ember.Tensor:
    return ember.tensor(values, dtype=ember.int64)
