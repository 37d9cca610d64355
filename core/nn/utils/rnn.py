"""``pad_sequence``: stack variable-length sequences with padding (PackedSequence is not provided)."""

from __future__ import annotations

from collections.abc import Sequence

from ..._creation import full
from ..._tensor import Tensor

__all__ = ["pad_sequence"]


def pad_sequence(
    sequences: Sequence[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """(L_i, *) tensors → (max L, N, *) or (N, max L, *) filled with ``padding_value`` (differentiable)."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    rest = tuple(sequences[0].shape[1:])
    padded = []
    for s in sequences:
        n = longest - s.shape[0]
        if n:
            pad = full((n, *rest), padding_value, dtype=s.dtype, device=s.device)
            s = _cat([s, pad] if padding_side == "right" else [pad, s])
        padded.append(s)
    from ..._ops.join import stack

    return stack(padded, 0 if batch_first else 1)


def _cat(parts: list[Tensor]) -> Tensor:
    from ..._ops.join import cat

    return cat(parts, 0)
