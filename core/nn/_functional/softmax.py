"""``softmax``, ``log_softmax`` and ``softmin`` along a dim: one node each, stable forms.

The forward uses the backend's fused kernel when it registers one, else subtracts the max
before ``exp`` (so ``softmax([1000., 0.])`` is ``[1., 0.]``, not NaN). The backward is one
``softmax_backward``/``log_softmax_backward`` call where the backend has it (a 10000-wide
row's gradient in a few passes instead of four recorded ops), else those composites'
decompositions; under ``create_graph`` the decomposition runs recorded, so it differentiates.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..._autocast_hook import autocast_op
from ..._dispatch import call, has_kernel
from ..._dtype import pt_name as _pt
from ..._ops._args import check_dtype, check_tensor
from ..._ops._common import norm_dim
from ..._ops._composite import decomposition
from ..._public import op, public
from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import state as _grad
from ...autograd.graph import record
from ._util import NoRecord, recording

PUBLIC = public(
    __name__,
    {
        "log_softmax": op(),
        "softmax": op(),
    },
)
__all__ = [*PUBLIC, "softmin"]


def _implicit_dim(name: str, ndim: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _prepare(x: Tensor, dim: Any, dtype: Any, name: str) -> tuple[Tensor, int]:
    check_tensor(name, "input", x, 1)
    check_dtype(name, "dtype", dtype)
    if dtype is not None:
        x = x.to(dtype)
    elif not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise NotImplementedError(f"\"{name}_lastdim_kernel_impl\" not implemented for '{_pt(x.dtype)}'")
    if dim is None:
        dim = _implicit_dim(name, x.ndim)
    return x, norm_dim(dim, x.ndim, name, "dim", 2)


def _softmax_data(x: Tensor, d: int, log: bool) -> Tensor:
    op = "log_softmax" if log else "softmax"
    if x.ndim == 0:
        with NoRecord():
            return x * 0 if log else x * 0 + 1
    if x.numel() == 0:  # nothing to normalise; the max-subtracting forms would reduce over nothing
        with NoRecord():
            return x * 0
    if has_kernel(x._be, op):
        return wrap(call(x._be, op, x._data, d), x._be, x._device, x.dtype, x._shape)
    with NoRecord():
        z = x - x.amax(d, keepdim=True)
        if log:
            return z - z.exp().sum(d, keepdim=True).log()
        e = z.exp()
        return e / e.sum(d, keepdim=True)


@decomposition("softmax_backward")
def _softmax_backward(g: Tensor, y: Tensor, d: int) -> Tensor:
    return y * (g - (g * y).sum(d, keepdim=True))


@decomposition("log_softmax_backward")
def _log_softmax_backward(g: Tensor, y: Tensor, d: int) -> Tensor:
    return g - y.exp() * g.sum(d, keepdim=True)


def _backward(op: str, fn: Any, g: Tensor, y: Tensor, d: int) -> Tensor:
    """The fused kernel on plain backward, the recorded decomposition under create_graph."""
    if _grad.enabled or y.ndim == 0 or not has_kernel(y._be, op):
        return fn(g, y, d)
    if g.dtype is not y.dtype:
        g = g.to(y.dtype)
    return wrap(call(y._be, op, g._data, y._data, d), y._be, y._device, y.dtype, y._shape)


def _softmax_rule(n: Any, g: Tensor) -> tuple:
    y, d = n.ctx
    return (_backward("softmax_backward", _softmax_backward, g, y, d),)


def _log_softmax_rule(n: Any, g: Tensor) -> tuple:
    y, d = n.ctx
    return (_backward("log_softmax_backward", _log_softmax_backward, g, y, d),)


@autocast_op("softmax")
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim`` (computed as ``exp(x - max)`` for stability)."""
    x, d = _prepare(input, dim, dtype, "softmax")
    out = _softmax_data(x, d, False)
    if recording(x):
        record("SoftmaxBackward0", _softmax_rule, out, (x,), (), (out, d))
    return out


@autocast_op("log_softmax")
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``x_i - log(sum_j exp(x_j))`` along ``dim``, computed as ``z - log(sum(exp(z)))``, ``z = x - max``."""
    x, d = _prepare(input, dim, dtype, "log_softmax")
    out = _softmax_data(x, d, True)
    if recording(x):
        record("LogSoftmaxBackward0", _log_softmax_rule, out, (x,), (), (out, d))
    return out


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``softmax(-x)`` along ``dim``."""
    if dim is None:
        dim = _implicit_dim("softmin", input.ndim)
    return softmax(-input, dim, dtype=dtype)
