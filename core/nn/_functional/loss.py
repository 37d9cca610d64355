"""Loss functions with PyTorch's formulas, reductions (``none``/``mean``/``sum``) and errors."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
from ember.backends import dtypes as D

from ..._autocast_hook import autocast_op
from ..._creation import zeros
from ..._dispatch import host_test
from ..._dtype import pt_name as _pt
from ..._ops import pointwise_unary as U
from ..._ops.gather_scatter import gather_checked, scatter_checked
from ..._ops.select import clamp, where
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...autograd.graph import record
from ._util import apply_reduction
from .activation import logsigmoid
from .softmax import log_softmax

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "mse_loss",
    "nll_loss",
    "smooth_l1_loss",
]


def _legacy(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    sa = True if size_average is None else size_average
    rd = True if reduce is None else reduce
    return "none" if not rd else ("mean" if sa else "sum")


def _warn_size(input: Tensor, target: Tensor) -> None:
    if input._shape != target._shape:
        warnings.warn(
            f"Using a target size (torch.Size({list(target._shape)})) that is different to the input size "
            f"(torch.Size({list(input._shape)})). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


@autocast_op("nn.functional.mse_loss")
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """``(x - y)²``, reduced."""
    _warn_size(input, target)
    d = input - target
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return apply_reduction(loss, _legacy(size_average, reduce, reduction))


@autocast_op("nn.functional.l1_loss")
def l1_loss(
    input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None, reduction: str = "mean"
) -> Tensor:
    """``|x - y|``, reduced."""
    _warn_size(input, target)
    return apply_reduction(U.abs(input - target), _legacy(size_average, reduce, reduction))


@autocast_op("nn.functional.smooth_l1_loss")
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 d² / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = x - y``)."""
    _warn_size(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = input - target  # squared directly, so the second derivative at d = 0 is 1 / beta
    d = U.abs(diff)
    loss = d if beta == 0 else where(d < beta, 0.5 * diff * diff / beta, d - 0.5 * beta)
    return apply_reduction(loss, _legacy(size_average, reduce, reduction))


@autocast_op("nn.functional.huber_loss")
def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0, weight: Tensor | None = None
) -> Tensor:
    """``0.5 d²`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    _warn_size(input, target)
    diff = input - target
    d = U.abs(diff)
    loss = where(d < delta, 0.5 * diff * diff, delta * (d - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return apply_reduction(loss, reduction)


def _no_grad_arg(op: str, name: str, t: Tensor | None) -> None:
    """PyTorch has no derivative for some loss arguments (class weights, ``pos_weight``) and
    refuses them at the call rather than returning a gradient it cannot compute."""
    if t is not None and t.requires_grad and is_grad_enabled():
        raise RuntimeError(
            f"The function '{op}' is not differentiable with respect to argument '{name}'. "
            "This input cannot have requires_grad True."
        )


def _check_batch(input: Tensor, target: Tensor) -> None:
    if input.ndim >= 2 and target.ndim >= 1 and input._shape[0] != target._shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input._shape[0]}) to match target batch_size ({target._shape[0]})."
        )


def _class_dim_last(t: Tensor) -> Tensor:
    return t if t.ndim <= 2 else t.movedim(1, -1)


@autocast_op("nn.functional.nll_loss")
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``-w[y_n] * input[n, y_n]`` per sample (input: log-probabilities, class dim 1).

    ``mean`` divides by the summed weights of the targets that are not ``ignore_index``.
    """
    reduction = _legacy(size_average, reduce, reduction)
    _check_batch(input, target)
    if input.ndim <= 2 and target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    spatial = input._shape[:1] + input._shape[2:]
    if input.ndim == 3 and target._shape != spatial:
        raise RuntimeError(f"Expected target size {list(spatial)}, got {list(target._shape)}")
    if input.ndim > 3 and target._shape != spatial:
        raise RuntimeError(f"size mismatch (got input: {list(input._shape)} , target: {list(target._shape)}")
    n_classes = input._shape[-1] if input.ndim == 1 else input._shape[1]
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes but got "
            f"weight tensor of shape: {list(weight._shape)}"
        )
    _no_grad_arg("nll_loss2d_forward" if input.ndim >= 3 else "nll_loss_forward", "weight", weight)
    if target.dtype not in (D.int64, D.int32, D.int16, D.uint8, D.int8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_pt(target.dtype)}")
    n_cls = input._shape[1] if input.ndim >= 2 else input._shape[0]
    t = target.to(D.int64)
    all_valid = _check_targets(t, n_cls, ignore_index)
    if weight is None and all_valid and input.ndim == 2 and reduction in ("mean", "sum", "none"):
        return _nll_2d(input, t.unsqueeze(-1), reduction)
    valid = t != ignore_index
    safe = t if all_valid else where(valid, t, 0)
    x = _class_dim_last(input)
    picked = x.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight[safe]
    loss = -picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    return apply_reduction(loss, reduction)


def _check_targets(t: Tensor, n_cls: int, ignore_index: int) -> bool:
    """Whether every target is a class (none is ``ignore_index``); PyTorch's IndexError for
    one out of range. One host read of the targets instead of a reduction and a sync each."""
    all_valid, bad = host_test(t._be, t._data, functools.partial(_targets_test, n_cls, ignore_index))
    if bad is not None:
        raise IndexError(f"Target {bad} is out of bounds.")
    return all_valid


def _targets_test(n_cls: int, ignore_index: int, th: Any) -> tuple[bool, int | None]:
    """(no target is ``ignore_index``, the first out-of-range target seen or None)."""
    th = np.asarray(th)
    valid = th != ignore_index
    all_valid = bool(valid.all())
    safe = th if all_valid else np.where(valid, th, 0)
    if safe.size:
        hi, lo = int(safe.max()), int(safe.min())
        if hi >= n_cls or lo < 0:
            return all_valid, hi if hi >= n_cls else lo
    return all_valid, None


def _nll_rule(n: Any, g: Tensor) -> tuple:
    idx, shape, reduction, count = n.ctx
    per = -g / count if reduction == "mean" else -g  # the same roundings as -(x.sum() / N)
    per = per.expand(shape[0]) if reduction != "none" else per
    # the targets were checked when the loss ran: no second host read of them
    # scattered into a broadcast zero: the kernel's one copy is the only (N, C) buffer made
    zero = zeros((), dtype=g.dtype, device=g.device).expand(shape)
    gx = scatter_checked(zero, 1, idx, per.unsqueeze(-1), None)
    return (gx,)


def _nll_2d(input: Tensor, idx: Tensor, reduction: str) -> Tensor:
    """Unweighted NLL on (N, C) log-probabilities with every target valid: one graph node
    (PyTorch's ``NllLossBackward0``), whose gradient scatters ``-g`` (``-g/N``) at the targets."""
    with no_grad():
        loss = -(gather_checked(input, 1, idx).squeeze(1))  # targets checked by the caller
        count = input._shape[0]
        out = loss.sum() / count if reduction == "mean" else apply_reduction(loss, reduction)
    if is_grad_enabled() and input.requires_grad:
        record("NllLossBackward0", _nll_rule, out, (input,), (), (idx, input._shape, reduction, count))
    return out


@autocast_op("nn.functional.cross_entropy")
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)``; ``target`` holds class indices or class probabilities.

    With ``label_smoothing`` ε the target mixes with the uniform distribution: ``(1-ε) y + ε/C``.
    """
    reduction = _legacy(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 1 if input.ndim >= 2 else 0
    logp = log_softmax(input, cdim)
    n_cls = input._shape[cdim]
    if target.dtype.is_floating_point and (target._shape == input._shape or input.ndim == 3):
        return _soft_targets(logp, target, weight, reduction, label_smoothing, cdim)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0.0:
        return nll
    x = _class_dim_last(logp)
    valid = (target != ignore_index).to(input.dtype)
    per = -(x * weight).sum(-1) if weight is not None else -x.sum(-1)
    smooth = per * valid
    if reduction == "mean":
        safe = where(target != ignore_index, target, 0)
        denom = (weight[safe] * valid).sum() if weight is not None else valid.sum()
        smooth = smooth.sum() / denom
    else:
        smooth = apply_reduction(smooth, reduction)
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / n_cls)


def _soft_targets(
    logp: Tensor, target: Tensor, weight: Tensor | None, reduction: str, eps: float, cdim: int
) -> Tensor:
    if target._shape != logp._shape:
        want = logp._shape[:1] + logp._shape[2:]  # PyTorch names the class-index shape here
        raise RuntimeError(f"Expected target size {list(want)}, got {list(target._shape)}")
    n_cls = logp._shape[cdim]
    if eps > 0:
        target = target * (1.0 - eps) + eps / n_cls
    prod = logp * target
    if weight is not None:
        prod = prod * weight.reshape((-1,) + (1,) * (logp.ndim - cdim - 1))
    loss = -prod.sum(cdim)
    if reduction == "mean":
        return loss.sum() / (logp.numel() // n_cls if logp.numel() else 1)
    return apply_reduction(loss, reduction)


@autocast_op("nn.functional.binary_cross_entropy")
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``-w (y log x + (1 - y) log(1 - x))`` with the logs clamped at -100, as PyTorch does."""
    if input._shape != target._shape:
        raise ValueError(
            f"Using a target size (torch.Size({list(target._shape)})) that is different to the input size "
            f"(torch.Size({list(input._shape)})) is deprecated. Please ensure they have the same size."
        )
    _no_grad_arg("binary_cross_entropy", "weight", weight)
    if input.numel() and (float(input.min()) < 0 or float(input.max()) > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with no_grad():
        log_x = clamp(U.log(input), min=-100.0)
        log_1mx = clamp(U.log(1 - input), min=-100.0)
        loss = -(target * log_x + (1 - target) * log_1mx)
        if weight is not None:
            loss = loss * weight
    if is_grad_enabled() and (input.requires_grad or target.requires_grad):
        record("BinaryCrossEntropyBackward0", _bce_rule, loss, (input, target), (), (input, target, weight))
    return apply_reduction(loss, _legacy(size_average, reduce, reduction))


_BCE_EPS = 9.999999960041972e-13  # PyTorch's EPSILON, the float32 literal 1e-12f


def _bce_rule(n: Any, g: Tensor) -> tuple:
    """PyTorch's: ``(x - y) / max((1 - x) x, 1e-12)`` for the input (finite at 0 and 1), and
    the clamped ``log(1 - x) - log(x)`` for the target."""
    x, y, w = n.ctx
    gx = g * (x - y) / clamp((1 - x) * x, min=_BCE_EPS)
    gy = g * (clamp(U.log(1 - x), min=-100.0) - clamp(U.log(x), min=-100.0))
    if w is not None:
        gx, gy = gx * w, gy * w
    return gx, gy


@autocast_op("nn.functional.binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """``-w (p y log σ(x) + (1 - y) log(1 - σ(x)))`` in the stable form
    ``(1 - y) x + (1 + (p - 1) y) (log(1 + exp(-|x|)) + max(-x, 0))``."""
    if input._shape != target._shape:
        raise ValueError(
            f"Target size (torch.Size({list(target._shape)})) must be the same as input size "
            f"(torch.Size({list(input._shape)}))"
        )
    _no_grad_arg("binary_cross_entropy_with_logits", "weight", weight)
    _no_grad_arg("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    softplus_neg = -logsigmoid(input)  # its rule gives PyTorch's σ(0) = 0.5 at logit 0
    if pos_weight is not None:
        coef = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + coef * softplus_neg
    else:
        loss = (1 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return apply_reduction(loss, _legacy(size_average, reduce, reduction))


@autocast_op("nn.functional.kl_div")
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """``target * (log target - input)`` (``input`` is log-probabilities); ``batchmean`` divides by N."""
    reduction = _legacy(size_average, reduce, reduction)
    if log_target:
        loss = U.exp(target) * (target - input)
    else:
        safe = where(target > 0, target, 1.0)
        loss = where(target > 0, target * (U.log(safe) - input), -target * input * 0)
    if reduction == "batchmean":
        return loss.sum() / (input._shape[0] if input.ndim else 1)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            stacklevel=2,
        )
    return apply_reduction(loss, reduction)
