"""PyTorch-like ``repr``: ``tensor([[1., 2.], [3., 4.]], requires_grad=True)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dtype import get_default_dtype

__all__ = ["set_printoptions", "tensor_repr"]

_opts = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(
    precision: int | None = None,
    threshold: int | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    sci_mode: bool | None = None,
    profile: str | None = None,
) -> None:
    """Change how tensors print, as ``torch.set_printoptions``."""
    if profile == "default":
        _opts.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    for k, v in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if v is not None:
            _opts[k] = v
    _opts["sci_mode"] = sci_mode


def _float_formatter(values: np.ndarray) -> tuple[Any, int]:
    """PyTorch's ``_Formatter``: mode and width come from the non-zero finite values only."""
    p = _opts["precision"]
    nz = values[np.isfinite(values) & (values != 0)]
    int_mode, sci, strs = True, False, []
    if nz.size:
        absv = np.abs(nz)
        ratio_big = absv.max() / absv.min() > 1000.0 or absv.max() > 1.0e8
        int_mode = bool(np.all(nz == np.ceil(nz)))
        sci = ratio_big if int_mode else ratio_big or absv.min() < 1.0e-4
        if sci:
            strs = [f"{v:.{p}e}" for v in nz.tolist()]
        elif int_mode:
            strs = [f"{v:.0f}." for v in nz.tolist()]
        else:
            strs = [f"{v:.{p}f}" for v in nz.tolist()]
    width = max([1] + [len(x) for x in strs])
    if _opts["sci_mode"] is not None:
        sci = _opts["sci_mode"]

    def fmt(v: float) -> str:
        if sci:
            out = f"{v:.{p}e}"
        elif int_mode:
            out = f"{v:.0f}" + ("." if np.isfinite(v) else "")
        else:
            out = f"{v:.{p}f}"
        return out.rjust(width)

    return fmt, width


def _formatter(values: np.ndarray) -> tuple[Any, int]:
    """(format one element, the element width PyTorch uses to fill lines)."""
    kind = values.dtype.kind
    if kind == "b":
        width = max([1] + [len(str(bool(v))) for v in values.tolist()])
        return (lambda v: str(bool(v)).rjust(width)), width
    if kind in "iu":
        width = max([1] + [len(str(v)) for v in values.tolist()])
        return (lambda v: str(int(v)).rjust(width)), width
    if kind == "c":
        re, rw = _float_formatter(values.real.astype(np.float64))
        im, iw = _float_formatter(values.imag.astype(np.float64))

        def fmt(v: complex) -> str:
            imag = (im(v.imag) + "j").lstrip()
            return re(v.real) + (imag if imag[0] in "+-" else "+" + imag)

        return fmt, rw + iw + 1
    return _float_formatter(values.astype(np.float64))


def _summarise(a: np.ndarray, edge: int) -> np.ndarray:
    """The corner values that a summarised print shows."""
    if a.ndim == 0:
        return a.reshape(1)
    if a.shape[0] > 2 * edge:
        parts = [a[:edge], a[-edge:]]
    else:
        parts = [a]
    return (
        np.concatenate([_summarise(p[i], edge).reshape(-1) for p in parts for i in range(p.shape[0])])
        if a.ndim > 1
        else np.concatenate(parts)
    )


def _render(a: np.ndarray, fmt: Any, width: int, indent: int, summarise: bool) -> str:
    edge = _opts["edgeitems"]
    if a.ndim == 1:
        items = [fmt(v) for v in (a.tolist() if a.dtype.kind != "c" else a)]
        if summarise and len(items) > 2 * edge:
            items = items[:edge] + [" ..."] + items[-edge:]
        per_line = max(1, (_opts["linewidth"] - indent) // (width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = list(range(a.shape[0]))
    if summarise and len(rows) > 2 * edge:
        rows = rows[:edge] + [None] + rows[-edge:]  # type: ignore[list-item]
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    parts = ["..." if r is None else _render(a[r], fmt, width, indent + 1, summarise) for r in rows]
    return "[" + sep.join(parts) + "]"


def _body(host: np.ndarray) -> str:
    if host.dtype.name in ("bfloat16", "float16"):
        host = host.astype(np.float32)
    summarise = host.size > _opts["threshold"]
    shown = _summarise(host, _opts["edgeitems"]) if summarise else host.reshape(-1)
    fmt, width = _formatter(shown)
    if host.ndim == 0:
        return fmt(host.item() if host.dtype.kind != "c" else host[()])
    if host.size == 0:
        return "[]"
    return _render(host, fmt, width, len("tensor("), summarise)


def tensor_repr(t: Any) -> str:
    host = np.asarray(t._be.backend.to_numpy(t._data))
    suffix = []
    if t._device.type != "cpu" or t._device.index not in (None, 0):
        suffix.append(f"device='{t._device}'")
    if host.size == 0 and t.ndim != 1:
        suffix.append(f"size={tuple(t._shape)}")
    default_float = get_default_dtype()
    implied = {default_float.name, "int64", "bool"}
    if t.dtype.is_complex:
        implied = {"complex128" if default_float.name == "float64" else "complex64"}
    if t.dtype.name not in implied or (host.size == 0 and t.dtype.name != default_float.name):
        suffix.append(f"dtype=ember.{t.dtype.name}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffix.append("requires_grad=True")
    body = _body(host)
    return "tensor(" + body + "".join(", " + s for s in suffix) + ")"
