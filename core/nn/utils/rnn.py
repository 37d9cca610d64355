"""Variable-length sequences: ``pad_sequence``, ``PackedSequence`` and packing/unpacking.

A PackedSequence stores, time step by time step, the entries of the sequences still running
at that step, longest sequence first (PyTorch's layout), so ``data`` and ``batch_sizes``
match PyTorch's for the same input. Recurrent layers accept it and return one.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

from ember.backends import dtypes as D

from ..._creation import full, tensor
from ..._tensor import Tensor

__all__ = [
    "PackedSequence",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
]


def _cat(parts: list[Tensor]) -> Tensor:
    from ..._ops.join import cat

    return cat(parts, 0)


def _stack(parts: list[Tensor], dim: int) -> Tensor:
    from ..._ops.join import stack

    return stack(parts, dim)


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
    return _stack(padded, 0 if batch_first else 1)


class PackedSequence(NamedTuple):
    """``data`` (sum of lengths, *), ``batch_sizes`` (per time step), and the sort permutation."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self._replace(data=self.data.to(*args, **kwargs))

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def _lengths(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded (T, B, *) (or batch-first) tensor of sequences with the given lengths."""
    lens = _lengths(lengths)
    if any(n <= 0 for n in lens):
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    if enforce_sorted:
        if any(a < b for a, b in itertools.pairwise(lens)):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
                "if you do not need ONNX exportability."
            )
        order = list(range(len(lens)))
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
    x = input.transpose(0, 1) if batch_first else input
    sizes, parts = [], []
    for t in range(max(lens)):
        running = [i for i in order if lens[i] > t]
        sizes.append(len(running))
        parts.append(x[t][tensor(running, device=x.device)])
    sorted_idx = None if enforce_sorted else tensor(order, device=x.device)
    unsorted = (
        None if enforce_sorted else tensor(sorted(range(len(order)), key=lambda i: order[i]), device=x.device)
    )
    return PackedSequence(_cat(parts), tensor(sizes, dtype=D.int64), sorted_idx, unsorted)


def _order(seq: PackedSequence) -> list[int]:
    if seq.sorted_indices is None:
        return list(range(int(seq.batch_sizes[0])))
    return [int(v) for v in seq.sorted_indices.tolist()]


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Inverse of ``pack_padded_sequence``: the padded tensor (original batch order) and the lengths."""
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    order = _order(sequence)
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {steps}"
            )
        steps = total_length
    data = sequence.data
    rest = tuple(data.shape[1:])
    rows: list[list[Tensor]] = [[] for _ in order]  # per sorted position, its time steps
    offset = 0
    for bs in sizes:
        for j in range(bs):
            rows[j].append(data[offset + j])
        offset += bs
    lengths = [len(r) for r in rows]
    seqs: list[Tensor] = [None] * len(order)  # type: ignore[list-item]
    for j, r in enumerate(rows):
        s = _stack(r, 0)
        if steps > len(r):
            s = _cat([s, full((steps - len(r), *rest), padding_value, dtype=data.dtype, device=data.device)])
        seqs[order[j]] = s
    out_lengths = [0] * len(order)
    for j, n in enumerate(lengths):
        out_lengths[order[j]] = n
    return _stack(seqs, 0 if batch_first else 1), tensor(out_lengths, dtype=D.int64)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) tensors."""
    return pack_padded_sequence(
        pad_sequence(sequences), [s.shape[0] for s in sequences], False, enforce_sorted
    )


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of (L_i, *) tensors in a PackedSequence."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return [padded[i, : int(n)] for i, n in enumerate(lengths.tolist())]
