"""Op case records: what the harness runs for one op (STYLE.md 19).

A record says which op, how to make sample inputs for a dtype, the float64 NumPy
reference, which dtypes the op's semantics admit (and why), tolerances and the gradient
order: 1 or 2 where ``checks_grad.py`` gradchecks (and gradgradchecks) the frontend op that
runs the kernel, 0 elsewhere (``GRAD_ORDERS`` sets it, so case modules need not). The harness (``harness.py``) is the only code that runs
them, so adding an op to the suite is adding a record, never a test function.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["GRAD_ORDERS", "INDEX", "D", "OpCase", "Sample", "T", "rng_for", "same_dtype"]

# kernel op -> the derivative order checked through its frontend op (checks_grad.GRAD_CALLS)
GRAD_ORDERS: dict[str, int] = {
    **dict.fromkeys(
        [
            "add",
            "sub",
            "mul",
            "div",
            "pow",
            "neg",
            "exp",
            "log",
            "sqrt",
            "sin",
            "cos",
            "tanh",
            "sigmoid",
            "erf",
        ],
        2,
    ),
    **dict.fromkeys(
        ["maximum", "where", "sum", "prod", "amax", "cumsum", "matmul", "softmax", "log_softmax"], 2
    ),
    **dict.fromkeys(["gather", "cat", "permute", "conv2d"], 2),
}


@dataclass(frozen=True)
class T:
    """A tensor argument: its logical values and how the harness lays it out on the device.

    ``layout`` is ``contig`` (``from_numpy``), ``expand`` (``source`` broadcast with the
    ``expand`` kernel), ``permute`` (a transposed buffer viewed back with ``permute``) or
    ``step`` (every other element of a wider buffer, through ``slice``).
    """

    value: np.ndarray
    layout: str = "contig"
    source: np.ndarray | None = None


@dataclass(frozen=True)
class D:
    """A dtype parameter (``cast``, ``full``, ``arange``), named so it pickles as text."""

    name: str


@dataclass(frozen=True)
class Sample:
    """One call: a label for the report and the kernel's positional arguments."""

    label: str
    args: tuple[Any, ...]
    out_dtype: Any = None  # overrides the record's result dtype (``cast`` targets)
    expect_none: bool = False  # ``reshape`` of a layout that cannot be viewed


class _DeviceIndex:
    """Stands for the device index under test in creation kernels' last argument."""

    def __repr__(self) -> str:
        return "INDEX"


INDEX = _DeviceIndex()


def same_dtype(dtype: str) -> str:
    return dtype


@dataclass(frozen=True)
class OpCase:
    """The record for one op; see the module docstring."""

    op: str
    samples: Callable[[str, np.random.Generator], list[Sample]]
    reference: Callable[..., Any]
    dtypes: tuple[str, ...]
    why: str
    out_dtype: Callable[[str], Any] = same_dtype
    tol_scale: float = 1.0
    # Error scale for sums and products: e.g. sum(|x|) instead of |sum(x)|, so rounding
    # in a differently ordered accumulation is not mistaken for a wrong kernel.
    magnitude: Callable[..., Any] | None = None
    grad_order: int = -1  # -1: take GRAD_ORDERS' entry (0 when it has none)
    # How to run the kernel when its result is not its return value (``assign``).
    call: Callable[..., Any] | None = field(default=None, compare=False)
    # Maps a non-unique result (eigenvectors, QR signs) to a unique form to compare.
    canon: Callable[..., Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.grad_order < 0:
            object.__setattr__(self, "grad_order", GRAD_ORDERS.get(self.op, 0))


def rng_for(op: str, dtype: str) -> np.random.Generator:
    """The generator for (op, dtype): stable across processes, so the worker, the report
    and the repro snippet all see the same inputs."""
    return np.random.default_rng(zlib.crc32(f"{op}/{dtype}".encode()))
