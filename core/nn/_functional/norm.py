"""Normalisation: ``layer_norm``, ``batch_norm`` (with running statistics), ``group_norm``,
``instance_norm``, ``local_response_norm`` is not provided. Written in ember ops."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..._autocast_hook import autocast_op
from ..._dispatch import call, has_kernel
from ..._ops._composite import NoRecord, decomposition
from ..._public import op, public
from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import no_grad
from ...autograd.grad_mode import state as _grad
from ...autograd.graph import record
from ._util import recording

PUBLIC = public(
    __name__,
    {
        "group_norm": op(),
        "layer_norm": op(),
    },
)
__all__ = [*PUBLIC, "batch_norm", "instance_norm", "rms_norm"]


_HALF = ("bfloat16", "float16")


def _compute_dtype(input: Tensor, *params: Tensor | None) -> Tensor | None:
    """The float32 input a half-precision norm computes from, or None to compute as given.

    PyTorch's CPU norms take a bfloat16/float16 input with parameters of its dtype or of
    float32 (mixed precision: weights kept in float32), accumulate in float32 and round the
    result once to the input's dtype; any other mix is its "mixed dtype (CPU)" error.
    """
    xd = input.dtype.name
    given = {t.dtype.name for t in params if t is not None}
    if given and given != {xd}:
        if xd == "float64" or (xd not in _HALF and xd != "float32"):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        if xd not in _HALF or given != {"float32"}:
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    return input.float() if xd in _HALF else None


def _moments(x: Tensor, dims: tuple[int, ...]) -> tuple[Tensor, Tensor]:
    mean = x.mean(dims, keepdim=True)
    c = x - mean
    var = (c * c).mean(dims, keepdim=True)
    return mean, var


@autocast_op("layer_norm")
def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last ``len(normalized_shape)`` dims."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if tuple(input._shape[input.ndim - k :]) != shape or k > input.ndim:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, {', '.join(map(str, shape))}], "
            f"but got input of size{list(input._shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t._shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                f"{list(t._shape)} and normalized_shape = {list(shape)}"
            )
    x = _compute_dtype(input, weight, bias)
    dims = tuple(range(input.ndim - k, input.ndim))
    x = input if x is None else x
    if k == 0 or not x.dtype.is_floating_point:
        return _affine(_normalized(x, dims, eps), weight, bias, None, input)
    out = _layer_norm_node(x, dims, weight, bias, eps)
    return out if out.dtype == input.dtype else out.to(input.dtype)


def _layer_norm_node(
    x: Tensor, dims: tuple[int, ...], w: Tensor | None, b: Tensor | None, eps: float
) -> Tensor:
    """One ``layer_norm`` call (its decomposition, unrecorded, where the backend has no kernel)
    and one node (PyTorch's) whose rule is one ``layer_norm_backward`` call: a dozen recorded
    ops and their broadcast reductions cost more than the arithmetic."""
    be, k = x._be, len(dims)
    if has_kernel(be, "layer_norm"):
        o, m, r = call(be, "layer_norm", x._data, _data(w), _data(b), k, eps)
        stat = x._shape[: x.ndim - k] + (1,) * k
        out = wrap(o, be, x._device, x.dtype, x._shape)
        mean, rstd = (wrap(a, be, x._device, x.dtype, stat) for a in (m, r))
    else:
        with NoRecord():
            out, mean, rstd = _layer_norm_decomposed(x, w, b, k, eps)
    if recording(x, w, b):
        record(
            "NativeLayerNormBackward0", _layer_norm_rule, out, (x, w, b), (), (x, w, b, mean, rstd, dims, eps)
        )
    return out


def _layer_norm_rule(n: Any, g: Tensor) -> tuple:
    """One ``layer_norm_backward`` call (its decomposition where the backend has no kernel)."""
    x, w, b, mean, rstd, dims, eps = n.ctx
    need = n.needs_input_grad
    if _grad.enabled:  # create_graph: the decomposition, recorded, for gradients of gradients
        from ...autograd import grad

        inputs = [t for t, want in zip((x, w, b), need) if want]
        out = _affine(_normalized(x, dims, eps), w, b, None, x)
        got = iter(grad(out, inputs, g, create_graph=True, allow_unused=True))
        return tuple(next(got) if want else None for want in need)
    if g.dtype is not x.dtype:
        g = g.to(x.dtype)
    be, k = x._be, len(dims)
    if has_kernel(be, "layer_norm_backward"):
        gx, gw, gb = call(be, "layer_norm_backward", g._data, x._data, _data(w), mean._data, rstd._data, k)
        dx = wrap(gx, be, x._device, x.dtype, x._shape) if need[0] else None
        dw = wrap(gw, be, x._device, w.dtype, w._shape) if need[1] and w is not None else None
        db = wrap(gb, be, x._device, b.dtype, b._shape) if need[2] and b is not None else None
        return dx, dw, db
    dx, dw, db = _layer_norm_backward_decomposed(g, x, w, mean, rstd, k)
    return (dx if need[0] else None), (dw if need[1] else None), (db if need[2] else None)


def _data(t: Tensor | None) -> Any:
    return None if t is None else t._data


# -- the two composites' decompositions (run unrecorded) -------------------------------------
def _layer_norm_decomposed(
    x: Tensor, w: Tensor | None, b: Tensor | None, k: int, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    dims = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(dims, keepdim=True)
    c = x - mean
    rstd = ((c * c).mean(dims, keepdim=True) + eps).rsqrt()
    return _affine(c * rstd, w, b, None, x), mean, rstd


def _layer_norm_backward_decomposed(
    g: Tensor, x: Tensor, w: Tensor | None, mean: Tensor, rstd: Tensor, k: int
) -> tuple[Tensor, Tensor | None, Tensor]:
    """dx = rstd (gw - mean(gw) - xhat mean(gw xhat)) with gw = g w; dw, db summed over rows."""
    dims, rows = tuple(range(x.ndim - k, x.ndim)), tuple(range(x.ndim - k))
    xhat = (x - mean) * rstd
    gw = g if w is None else g * w
    dx = (gw - gw.mean(dims, keepdim=True) - xhat * (gw * xhat).mean(dims, keepdim=True)) * rstd
    dw = None if w is None else ((g * xhat).sum(rows) if rows else g * xhat)
    return dx, dw, (g.sum(rows) if rows else g.clone())


decomposition("layer_norm")(_layer_norm_decomposed)  # weight and bias may be None
decomposition("layer_norm_backward")(_layer_norm_backward_decomposed)


def _normalized(x: Tensor, dims: tuple[int, ...], eps: float) -> Tensor:
    mean, var = _moments(x, dims)
    return (x - mean) * (var + eps).rsqrt()


def _affine(
    out: Tensor, weight: Tensor | None, bias: Tensor | None, shape: tuple[int, ...] | None, input: Tensor
) -> Tensor:
    """``out * weight + bias`` (reshaped to ``shape``), in the input's dtype at the end."""
    if weight is not None:
        out = out * (weight if shape is None else weight.reshape(shape))
    if bias is not None:
        out = out + (bias if shape is None else bias.reshape(shape))
    return out if out.dtype == input.dtype else out.to(input.dtype)


def rms_norm(
    input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    """``x / sqrt(mean(x²) + eps) * weight`` over the last dims."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    e = (
        eps
        if eps is not None
        else (1.1920928955078125e-07 if input.dtype.name == "float32" else 2.220446049250313e-16)
    )
    x = input.float() if input.dtype.name in _HALF else input
    out = x * ((x * x).mean(dims, keepdim=True) + e).rsqrt()
    out = out * weight if weight is not None else out
    return out if out.dtype == input.dtype else out.to(input.dtype)


def _channel_shape(x: Tensor) -> tuple[int, ...]:
    return (1, x._shape[1]) + (1,) * (x.ndim - 2)


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (dim 1) by batch statistics (training) or running ones (eval).

    Training updates ``running = (1 - momentum) * running + momentum * batch_stat`` with the
    unbiased batch variance, as PyTorch does.
    """
    if input.ndim < 2:
        raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")
    cs = _channel_shape(input)
    c = input._shape[1]
    for name, t in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    x = _compute_dtype(input, running_mean, running_var, weight, bias)
    x = input if x is None else x
    if training:
        dims = (0,) + tuple(range(2, input.ndim))
        count = input.numel() // input._shape[1]
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {input.shape}"
            )
        mean, var = _moments(x, dims)
        if running_mean is not None and running_var is not None:
            with no_grad():
                m = mean.reshape(-1).to(running_mean.dtype)
                running_mean.mul_(1 - momentum).add_(m * momentum)
                unbiased = (var.reshape(-1) * (count / (count - 1))).to(running_var.dtype)
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean, var = running_mean.reshape(cs), running_var.reshape(cs)
    return _affine((x - mean) * (var + eps).rsqrt(), weight, bias, cs, input)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each (sample, channel) plane over its spatial dims.

    As PyTorch: a batch norm of the ``(1, N * C, ...)`` view, so running statistics (when given)
    are updated with the mean over the batch of each instance's, and used when
    ``use_input_stats`` is False.
    """
    if use_input_stats and math.prod(input._shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    b, c = input._shape[0], input._shape[1]

    def rep(t: Tensor | None) -> Tensor | None:
        return None if t is None else t.repeat(b)

    rm, rv = rep(running_mean), rep(running_var)
    flat = input.reshape(1, b * c, *input._shape[2:])
    out = batch_norm(flat, rm, rv, rep(weight), rep(bias), use_input_stats, momentum, eps)
    if use_input_stats:
        with no_grad():
            for run, r in ((running_mean, rm), (running_var, rv)):
                if run is not None and r is not None:
                    run.copy_(r.reshape(b, c).mean(0))
    return out.reshape(input._shape)


@autocast_op("group_norm")
def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over groups of ``C / num_groups`` channels (and all spatial dims) per sample."""
    n, c = input._shape[0], input._shape[1]
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(input._shape)} and num_groups={num_groups}"
        )
    x = _compute_dtype(input, weight, bias)
    x = (input if x is None else x).reshape(n, num_groups, -1)
    out = _normalized(x, (2,), eps).reshape(input._shape)
    return _affine(out, weight, bias, _channel_shape(input), input)
