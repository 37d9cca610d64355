"""PyTorch's ``repr`` of tensors: ``tensor([[1., 2.], [3., 4.]], requires_grad=True)``.

A tensor with more than ``threshold`` elements prints summarised (``edgeitems`` rows and
columns at each end of every dimension, ``...`` between). The summary is gathered on the
tensor's device with views and ``cat``, so only the printed corners cross to the host: printing
10M elements costs what printing a few dozen does. The number format (integer-valued floats,
scientific notation, widths) is chosen from the printed elements only, as PyTorch does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._dispatch import to_host
from ._dtype import get_default_dtype
from ._ops.join import cat
from ._ops.views import detach, narrow
from ._public import op, public
from ._tensor import Tensor

PUBLIC = public(
    __name__,
    {
        "get_printoptions": op(),
        "printoptions": op(),
        "set_printoptions": op(),
    },
)
__all__ = [*PUBLIC, "PRINT_OPTS", "tensor_repr"]


@dataclasses.dataclass
class PrintOptions:
    """The print options, one process-wide record (PyTorch's ``torch._tensor_str.PRINT_OPTS``)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = PrintOptions()

# (precision, threshold, edgeitems, linewidth) of each profile; sci_mode is set on its own
_PROFILES: dict[str, tuple[int, float, int, int]] = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print, as ``torch.set_printoptions``.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: more elements than this print summarised (default 1000).
        edgeitems: items shown at each end of a summarised dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``, applied before the other arguments.
        sci_mode: True/False force scientific notation on/off; None (the default, and what
            every call without it restores) lets the values decide.

    Example: ``ember.set_printoptions(threshold=5)``; ``ember.arange(10)`` then prints
    ``tensor([0, 1, 2,  ..., 7, 8, 9])``.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"set_printoptions: unknown profile {profile!r}; expected one of {list(_PROFILES)}"
            )
        p = _PROFILES[profile]
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = p
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Change the print options inside a ``with`` block (``set_printoptions``'s arguments)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# -- number format --------------------------------------------------------------------------


class _Formatter:
    """PyTorch's ``_Formatter``: one element format and width for all printed elements.

    Floats print as integers with a dot when every non-zero finite value is integral, in
    scientific notation when those values span more than 1000x or leave [1e-4, 1e8]; the
    width is the longest of their strings (zeros, nan and inf never widen it).
    """

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.precision = PRINT_OPTS.precision
        self.int_mode = True
        self.sci_mode: bool | None = False
        self.width = 1
        if not floating:
            self.width = max([1] + [len(str(v)) for v in values.tolist()])
            return
        finite = values[np.isfinite(values) & (values != 0)]
        if finite.size == 0:
            return  # no value decides: plain "0." / "nan", even under sci_mode=True
        absv = np.abs(finite)
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode is None:
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        self.width = max(len(self._body(v)) + (self.int_mode and not self.sci_mode) for v in finite.tolist())

    def _body(self, value: float) -> str:
        if self.sci_mode:
            return f"{value:.{self.precision}e}"
        if self.int_mode:
            return f"{value:.0f}"
        return f"{value:.{self.precision}f}"

    def format(self, value: Any) -> str:
        """One element, right-aligned to the common width."""
        if not self.floating:
            return f"{value}".rjust(self.width)
        out = self._body(value)
        if self.int_mode and not self.sci_mode and math.isfinite(value):
            out += "."
        return out.rjust(self.width)


class _Format:
    """How each element prints: a real formatter, plus one for the imaginary part if complex."""

    def __init__(self, shown: np.ndarray) -> None:
        self.complex = shown.dtype.kind == "c"
        if self.complex:
            self.real = _Formatter(shown.real.astype(np.float64), True)
            self.imag: _Formatter | None = _Formatter(shown.imag.astype(np.float64), True)
            self.width = self.real.width + 2 + self.imag.width + 1
        else:
            floating = shown.dtype.kind == "f"
            self.real = _Formatter(shown.astype(np.float64) if floating else shown, floating)
            self.imag = None
            self.width = self.real.width + 2

    def __call__(self, value: Any) -> str:
        if self.imag is None:
            return self.real.format(value)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        # a sign (including that of -0.0) joins directly; otherwise "+"
        return self.real.format(value.real) + (imag if imag[0] in "+-" else "+" + imag)


# -- layout ---------------------------------------------------------------------------------


def _vector(values: list, cut: bool, indent: int, fmt: _Format) -> str:
    """One row: elements wrapped to the line width, ``...`` in the middle if ``cut``."""
    items = [fmt(v) for v in values]
    if cut:
        half = len(items) // 2
        items = items[:half] + [" ..."] + items[half:]
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / fmt.width))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: np.ndarray, cuts: tuple[bool, ...], indent: int, fmt: _Format) -> str:
    """The bracketed text of ``a`` (the printed corners); ``cuts[d]``: dimension d was summarised."""
    if a.ndim == 1:
        return _vector(a.tolist(), cuts[0], indent, fmt)
    parts = [_nested(row, cuts[1:], indent + 1, fmt) for row in a]
    if cuts[0]:
        half = len(parts) // 2
        parts = parts[:half] + ["..."] + parts[half:]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


# -- the summary, gathered on the device ----------------------------------------------------


def _corners(t: Tensor, dim: int, edge: int) -> Tensor:
    """``t`` without the middle of every dimension longer than ``2 * edge``, built with views
    and ``cat`` on ``t``'s device (views first, so each copy is no larger than the result)."""
    if dim == t.ndim:
        return t
    n = t._shape[dim]
    if n <= 2 * edge:
        return _corners(t, dim + 1, edge)
    head = _corners(narrow(t, dim, 0, edge), dim + 1, edge)
    tail = _corners(narrow(t, dim, n - edge, edge), dim + 1, edge)
    return cat([head, tail], dim)


def _host(t: Tensor) -> np.ndarray:
    host = np.asarray(to_host(t._be, t._data))
    if host.dtype.kind == "V" or host.dtype.name in ("bfloat16", "float16"):
        host = host.astype(np.float32)  # exact; Python formats every float as a double anyway
    elif host.dtype.kind == "c":
        host = host.astype(np.complex128)  # exact; its elements are Python complex numbers
    return host


def _tensor_str(t: Tensor, indent: int) -> str:
    """The body of the repr: a scalar, ``[]``, or nested brackets (summarised when large)."""
    if t.numel() == 0:
        return "[]"
    edge = PRINT_OPTS.edgeitems
    summarize = t.numel() > PRINT_OPTS.threshold
    if summarize and not edge:
        return "[...]"
    if summarize:
        shown = _host(_corners(detach(t), 0, edge))
        cuts = tuple(n > 2 * edge for n in t._shape)
    else:
        shown = _host(t)
        cuts = (False,) * t.ndim
    fmt = _Format(shown.reshape(-1))
    if t.ndim == 0:
        return fmt(shown.item())
    return _nested(shown, cuts, indent, fmt)


# -- suffixes -------------------------------------------------------------------------------


def _suffixes(t: Tensor) -> list[str]:
    """``device=``, ``size=``, ``dtype=``, ``grad_fn=``/``requires_grad=``, when PyTorch prints them."""
    out = []
    if t._device.type != "cpu" or t._device.index not in (None, 0):
        out.append(f"device='{t._device}'")
    default = get_default_dtype()
    if t.numel() == 0:
        if t.ndim != 1:
            out.append(f"size={tuple(t._shape)}")
        if t.dtype.name != default.name:
            out.append(f"dtype={t.dtype!r}")
    else:
        if not PRINT_OPTS.edgeitems:
            out.append(f"size={tuple(t._shape)}")
        complex_default = "complex128" if default.name == "float64" else "complex64"
        if t.dtype.name not in (default.name, complex_default, "int64", "bool"):
            out.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        out.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        out.append("requires_grad=True")
    return out


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` each, starting a new line where the line would pass ``linewidth``."""
    parts = [text]
    line = len(text) - text.rfind("\n") + 1  # PyTorch's count, two more than the last line
    for s in suffixes:
        if line + len(s) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + s)
            line = indent + len(s)
        else:
            parts.append(", " + s)
            line += len(s) + 2
    return "".join(parts) + ")"


def tensor_repr(t: Tensor) -> str:
    """``repr(t)`` exactly as PyTorch prints it, with ``ember.`` for ``torch.`` in dtypes."""
    prefix = "tensor("
    return _add_suffixes(prefix + _tensor_str(t, len(prefix)), _suffixes(t), len(prefix))
