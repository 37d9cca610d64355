"""``F.pad``: constant (own node), reflect, replicate and circular (one ``index_select`` per dim).

The index modes build each padded dim's source indices in Python (negative pads crop), so
they run on every backend and differentiate through index_select. Checks follow PyTorch's
``_pad_enum`` in order, with its exception types and wording.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._creation import full, tensor
from ..._tensor import Tensor, wrap
from ...autograd.graph import record
from ._util import NoRecord, recording

__all__ = ["constant_pad", "pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_rule(n: Any, g: Tensor) -> tuple:
    key = n.ctx
    return (g[key],)


def constant_pad(x: Tensor, pads: Sequence[tuple[int, int]], value: float = 0.0) -> Tensor:
    """Pad the last ``len(pads)`` dims by ``(before, after)`` each; negatives crop."""
    lead = x.ndim - len(pads)
    if any(x._shape[lead + i] + min(a, 0) + min(b, 0) < 0 for i, (a, b) in enumerate(pads)):
        raise RuntimeError("narrow(): length must be non-negative.")
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
    """Source position of every output position of one dim (negative ``before``/``after`` crop)."""
    if mode == "circular":  # PyTorch crops first, then wraps around what is left
        off, m = max(-before, 0), n + min(before, 0) + min(after, 0)
        return [off + (i % m if m else 0) for i in range(-max(before, 0), m + max(after, 0))]
    idx = []
    for i in range(-before, n + after):
        if mode == "replicate":
            j = min(max(i, 0), n - 1)
        else:  # reflect: mirror without repeating the edge
            period = 2 * (n - 1)
            j = abs(i) % period if period else 0
            j = period - j if j >= n else j
        idx.append(j)
    return idx


def _check_index_pad(x: Tensor, pads: list[tuple[int, int]], mode: str) -> None:
    k, shape = len(pads), list(x._shape)
    lead = x.ndim - k
    if mode == "circular":
        for i, (a, b) in enumerate(pads):
            if a > shape[lead + i] or b > shape[lead + i]:
                raise RuntimeError("Padding value causes wrapping around more than once.")
        for i, (a, b) in enumerate(pads):
            if shape[lead + i] + a + b < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
        return
    batched = x.ndim == k + 2
    if any(s == 0 for s in shape[1 if batched else 0 :]):
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {shape}"
        )
    if mode == "reflect":
        for i in reversed(range(k)):  # PyTorch checks the last dim first (argument #4, #6, #8)
            a, b = pads[i]
            if a >= shape[lead + i] or b >= shape[lead + i]:
                raise RuntimeError(
                    f"Argument #{4 + 2 * (k - 1 - i)}: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({a}, {b}) at dimension {lead + i} of input {shape}"
                )
    out = [shape[lead + i] + a + b for i, (a, b) in enumerate(pads)]
    if k == 1 and out[0] < 1:
        raise RuntimeError(f"input (W: {shape[-1]}) is too small. Calculated output W: {out[0]}")
    if any(o < 0 for o in out):
        bad = shape[:lead] + out
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {bad}")


def _index_pad(x: Tensor, pads: list[tuple[int, int]], mode: str) -> Tensor:
    _check_index_pad(x, pads, mode)
    lead = x.ndim - len(pads)
    for i, (a, b) in enumerate(pads):
        n = x._shape[lead + i]
        if (a, b) == (0, 0) or n == 0:
            continue
        idx = tensor(_source_index(n, a, b, mode), device=x._device).long()
        x = x.index_select(lead + i, idx)
    return x


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last dims: ``pad=(left, right, top, bottom, front, back)`` pairs from the last dim back.

    ``constant`` pads any number of dims with ``value`` (negative pads crop); ``reflect``,
    ``replicate`` and ``circular`` pad the last 1, 2 or 3 dims of a batched or unbatched
    (2-D to 5-D) input. Example: ``F.pad(x, (1, 1))`` adds one zero on each side of the last dim.
    """
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding "
            f"length {len(pad)} and input of dimension {input.ndim}"
        )
    pairs = [(int(pad[i]), int(pad[i + 1])) for i in range(0, len(pad), 2)][::-1]
    if mode == "constant":
        return constant_pad(input, pairs, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pairs)
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.")
    return _index_pad(input, pairs, mode)
