"""Connectionist temporal classification loss: the log-space forward (alpha) recursion.

The recursion runs over time in Python and over the batch and the extended label sequence
(blank, l1, blank, l2, ..., blank) in ember ops, so autograd differentiates it on any
backend. Impossible paths carry a large finite negative log-probability instead of -inf:
with -inf, log-sum-exp of all-impossible terms has a NaN derivative (0 * inf), which would
poison the gradients of feasible samples too. Losses past that sentinel are reported as inf.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ember as E

from ..._autocast_hook import autocast_op
from ..._tensor import Tensor

__all__ = ["ctc_loss"]

_IMPOSSIBLE = -1e30
_INF_LIMIT = 1e29


def _lengths(lengths: Any, name: str) -> list[int]:
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.reshape(-1).tolist()]
    if isinstance(lengths, int):
        return [lengths]
    if isinstance(lengths, Sequence):
        return [int(v) for v in lengths]
    raise TypeError(f"ctc_loss: {name} must be a tensor or a tuple of ints, got {type(lengths).__name__}")


def _padded_targets(targets: Tensor, target_lengths: list[int], blank: int) -> Tensor:
    """Targets as (N, S) with entries past each length set to ``blank`` (in range for gather)."""
    s_max = max(target_lengths, default=0)
    if targets.dim() == 1:
        rows, start = [], 0
        flat = [int(v) for v in targets.tolist()]
        for n in target_lengths:
            rows.append(flat[start : start + n] + [blank] * (s_max - n))
            start += n
        return E.tensor(rows, dtype=E.int64).reshape(len(target_lengths), s_max)
    t = targets[:, :s_max].long()
    pos = E.arange(s_max).unsqueeze(0)
    lens = E.tensor(target_lengths, dtype=E.int64).unsqueeze(1)
    return E.where(pos < lens, t, E.full_like(t, blank))


def _extended(labels: Tensor, blank: int) -> tuple[Tensor, Tensor]:
    """Extended labels (N, 2S+1) and where the skip from s-2 to s is allowed."""
    n, s = labels.shape
    ext = E.full((n, 2 * s + 1), blank, dtype=E.int64)
    if s:
        ext[:, 1::2] = labels
    skip = E.zeros((n, 2 * s + 1), dtype=E.bool)
    if s > 1:
        skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]
    if s:
        skip = skip & (ext != blank)
    return ext, skip


def _lse3(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    m = E.maximum(E.maximum(a, b), c).detach()
    return m + E.log(E.exp(a - m) + E.exp(b - m) + E.exp(c - m))


def _shift(alpha: Tensor, k: int) -> Tensor:
    pad = E.full((alpha.shape[0], k), _IMPOSSIBLE, dtype=alpha.dtype)
    return E.cat([pad, alpha[:, :-k]], dim=1)


def _log_likelihood(lp_ext: Tensor, skip: Tensor, in_lens: list[int], tgt_lens: list[int]) -> Tensor:
    """log p(target | input) per sample from gathered log-probs ``lp_ext`` (T, N, L)."""
    t_max, n, length = lp_ext.shape
    neg = E.full((n, length), _IMPOSSIBLE, dtype=lp_ext.dtype)
    start = E.arange(length).unsqueeze(0) < 2
    alpha = E.where(start, lp_ext[0], neg)
    lens = E.tensor(in_lens, dtype=E.int64).unsqueeze(1)
    for t in range(1, t_max):
        two = E.where(skip, _shift(alpha, 2), neg) if length > 2 else neg
        one = _shift(alpha, 1) if length > 1 else neg
        new = _lse3(alpha, one, two) + lp_ext[t]
        alpha = E.where(lens > t, new, alpha)
    last = E.tensor([2 * s for s in tgt_lens], dtype=E.int64).unsqueeze(1)
    prev = E.tensor([max(2 * s - 1, 0) for s in tgt_lens], dtype=E.int64).unsqueeze(1)
    end = alpha.gather(1, last).squeeze(1)
    before = alpha.gather(1, prev).squeeze(1)
    has_label = E.tensor([s > 0 for s in tgt_lens])
    before = E.where(has_label, before, E.full_like(before, _IMPOSSIBLE))
    m = E.maximum(end, before).detach()
    ll = m + E.log(E.exp(end - m) + E.exp(before - m))
    # no frames: only the empty target is possible (with probability 1)
    no_frames = E.tensor([t == 0 for t in in_lens])
    empty_ll = E.tensor([0.0 if s == 0 else _IMPOSSIBLE for s in tgt_lens], dtype=ll.dtype)
    return E.where(no_frames, empty_ll, ll)


def _check(log_probs: Tensor, in_lens: list[int], tgt_lens: list[int]) -> None:
    t_max, n = log_probs.shape[0], log_probs.shape[1]
    if len(in_lens) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tgt_lens) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in in_lens:
        if v > t_max or v < 0:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {t_max}, but got value {v} "
                "(while checking arguments for ctc_loss_allocate_outputs)"
            )


@autocast_op("nn.functional.ctc_loss")
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The CTC loss: ``-log`` of the total probability of all alignments of each target.

    ``log_probs`` is (T, N, C) (or (T, C)) of log-softmax outputs; ``targets`` is (N, S)
    padded or 1-D concatenated; lengths are tensors or tuples of ints. ``'mean'`` divides
    each loss by its target length, then averages over the batch. Example:
    ``F.ctc_loss(x.log_softmax(2), y, (50,) * 16, (20,) * 16)``.
    """
    if not 0 <= blank < log_probs.shape[-1]:
        raise RuntimeError("blank must be in label range")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    in_lens = _lengths(input_lengths, "input_lengths")
    tgt_lens = _lengths(target_lengths, "target_lengths")
    _check(log_probs, in_lens, tgt_lens)
    labels = _padded_targets(targets, tgt_lens, blank)
    ext, skip = _extended(labels, blank)
    t_max = log_probs.shape[0]
    index = ext.unsqueeze(0).expand(t_max, *ext.shape)
    lp_ext = log_probs.gather(2, index)
    loss = -_log_likelihood(lp_ext, skip, in_lens, tgt_lens)
    infinite = loss > _INF_LIMIT
    fill = 0.0 if zero_infinity else float("inf")
    loss = E.where(infinite, E.full_like(loss, fill), loss)
    if unbatched:
        loss = loss.squeeze(0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        denom = E.tensor([max(s, 1) for s in tgt_lens], dtype=loss.dtype).reshape(loss.shape)
        return (loss / denom).mean()
    raise ValueError(f"{reduction} is not a valid value for reduction")
