"""More losses: margin, ranking, embedding and likelihood losses (PyTorch's formulas)."""

from __future__ import annotations

import math
from typing import Any

from ..._autocast_hook import autocast_op
from ..._ops import pointwise_unary as U
from ..._ops.select import clamp, where
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled
from ._util import apply_reduction
from .activation import softplus
from .linear import cosine_similarity, pairwise_distance

__all__ = [
    "cosine_embedding_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "multilabel_soft_margin_loss",
    "poisson_nll_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
]


@autocast_op("nn.functional.margin_ranking_loss")
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``."""
    return apply_reduction(clamp(-target * (input1 - input2) + margin, min=0.0), reduction)


@autocast_op("nn.functional.hinge_embedding_loss")
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1``; any other target gets
    both terms, as PyTorch computes it."""
    loss = where(target != -1, input, 0.0) + where(target != 1, clamp(margin - input, min=0.0), 0.0)
    return apply_reduction(loss, reduction)


@autocast_op("nn.functional.soft_margin_loss")
def soft_margin_loss(
    input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None, reduction: str = "mean"
) -> Tensor:
    """``log(1 + exp(-y x))``; like PyTorch, no gradient for ``target``."""
    if target.requires_grad and is_grad_enabled():
        raise RuntimeError(
            "The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
            "This input cannot have requires_grad True."
        )
    return apply_reduction(softplus(-target * input), reduction)


@autocast_op("nn.functional.multilabel_soft_margin_loss")
def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``-mean_c (y log σ(x) + (1 - y) log σ(-x))`` per sample."""
    loss = target * softplus(-input) + (1 - target) * softplus(input)
    if weight is not None:
        loss = loss * weight
    return apply_reduction(loss.mean(-1), reduction)


@autocast_op("nn.functional.cosine_embedding_loss")
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(x1, x2)`` where ``y = 1``, ``max(0, cos(x1, x2) - margin)`` where ``y = -1``."""
    cos = cosine_similarity(input1, input2, dim=-1, eps=1e-12)
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, clamp(cos - margin, min=0.0), 0.0)
    return apply_reduction(loss, reduction)


@autocast_op("nn.functional.triplet_margin_loss")
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the p-norm distance."""
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = d_an.minimum(pairwise_distance(positive, negative, p, eps))
    return apply_reduction(clamp(d_ap - d_an + margin, min=0.0), reduction)


@autocast_op("nn.functional.poisson_nll_loss")
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: Any = None,
    eps: float = 1e-8,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``exp(x) - y x`` (log input) or ``x - y log(x + eps)``; ``full`` adds Stirling's term."""
    loss = U.exp(input) - target * input if log_input else input - target * U.log(input + eps)
    if full:
        safe = where(target > 1, target, 1.0)
        stirling = safe * U.log(safe) - safe + 0.5 * U.log(2 * math.pi * safe)
        loss = loss + where(target > 1, stirling, 0.0)
    return apply_reduction(loss, reduction)


def gaussian_nll_loss(
    input: Tensor, target: Tensor, var: Tensor, full: bool = False, eps: float = 1e-6, reduction: str = "mean"
) -> Tensor:
    """``0.5 (log(max(var, eps)) + (x - y)² / max(var, eps))`` (+ ``0.5 log 2π`` when ``full``)."""
    if var.ndim == input.ndim - 1 or (var.ndim == input.ndim and var.shape[-1] == 1 and input.shape[-1] != 1):
        var = var if var.ndim == input.ndim else var.unsqueeze(-1)
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    v = clamp(var, min=eps)
    loss = 0.5 * (U.log(v) + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return apply_reduction(loss, reduction)
