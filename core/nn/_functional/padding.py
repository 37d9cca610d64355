"""``F.pad``: constant (own node), reflect, replicate and circular (index_select)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._creation import full, tensor
from ..._tensor import Tensor, wrap
from ...autograd.graph import record
from ._util import NoRecord, recording

__all__ = ["constant_pad", "pad"]


def _pad_rule(n: Any, g: Tensor) -> tuple:
    key = n.ctx
    return (g[key],)


def constant_pad(x: Tensor, pads: Sequence[tuple[int, int]], value: float = 0.0) -> Tensor:
    """Pad the last ``len(pads)`` dims by ``(before, after)`` each; negatives crop."""
    lead = x.ndim - len(pads)
    crop = tuple(slice(max(-a, 0), x._shape[lead + i] - max(-b, 0)) for i, (a, b) in enumerate(pads))
    if any(a < 0 or b < 0 for a, b in pads):
        x = x[(Ellipsis,) + crop]
        pads = [(max(a, 0), max(b, 0)) for a, b in pads]
    shape = x._shape[:lead] + tuple(x._shape[lead + i] + a + b for i, (a, b) in enumerate(pads))
    key = (Ellipsis,) + tuple(slice(a, a + x._shape[lead + i]) for i, (a, _) in enumerate(pads))
    with NoRecord():
        out = full(shape, value, dtype=x.dtype, device=x._device)
        out[key] = x.detach()
    out = wrap(out._data, out._be, out._device, out.dtype, out._shape)
    if recording(x):
        record("ConstantPadNdBackward0", _pad_rule, out, (x,), (), key)
    return out


def _source_index(n: int, before: int, after: int, mode: str) -> list[int]:
    idx = []
    for i in range(-before, n + after):
        if mode == "replicate":
            j = min(max(i, 0), n - 1)
        elif mode == "circular":
            j = i % n
        else:  # reflect: mirror without repeating the edge
            period = 2 * (n - 1)
            j = abs(i) % period if period else 0
            j = period - j if j >= n else j
        idx.append(j)
    return idx


def _index_pad(x: Tensor, pads: list[tuple[int, int]], mode: str) -> Tensor:
    lead = x.ndim - len(pads)
    for i, (a, b) in enumerate(pads):
        n = x._shape[lead + i]
        if mode == "reflect" and (a >= n or b >= n):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input dimension, "
                f"but got: padding ({a}, {b}) at dimension {lead + i} of input {list(x._shape)}"
            )
        if mode == "circular" and (a > n or b > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        idx = tensor(_source_index(n, a, b, mode), device=x._device)
        x = x.index_select(lead + i, idx)  # type: ignore[attr-defined]
    return x


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last dims: ``pad=(left, right, top, bottom, ...)`` pairs from the last dim back.

    Modes: ``constant`` (with ``value``), ``reflect``, ``replicate``, ``circular``.
    Example: ``F.pad(x, (1, 1))`` adds one zero on each side of the last dimension.
    """
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension")
    pairs = [(int(pad[i]), int(pad[i + 1])) for i in range(0, len(pad), 2)][::-1]
    if mode == "constant":
        return constant_pad(input, pairs, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument.')
    return _index_pad(input, pairs, mode)
