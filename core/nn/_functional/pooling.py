"""Pooling: max (with indices) and average over 2-D windows, adaptive average pooling.

``max_pool2d`` and ``avg_pool2d`` use the backend's kernels when registered, else an
``as_strided`` window view; each records one node whose rule is written in ember ops
(a scatter of the gradient to the argmax positions; a transposed convolution with ones).
"""

from __future__ import annotations

from typing import Any

from ..._creation import arange, ones, tensor, zeros
from ..._dispatch import call, has_kernel
from ..._ops._composite import decomposition
from ..._ops.select import where
from ..._public import op, public
from ..._tensor import Tensor, wrap
from ...autograd.graph import record
from ._util import NoRecord, ntuple, recording
from .conv import conv_input_grad, out_size
from .padding import constant_pad

PUBLIC = public(
    __name__,
    {
        "avg_pool1d": op(),
        "max_pool1d": op(),
        "max_pool2d": op(),
    },
)
__all__ = [
    *PUBLIC,
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "avg_pool2d",
]


def _geometry(
    x: Tensor, kernel: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool, name: str
) -> tuple:
    k = ntuple(kernel, 2, "kernel_size")
    s = (
        k
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else ntuple(stride, 2, "stride")
    )
    p, d = ntuple(padding, 2, "padding"), ntuple(dilation, 2, "dilation")
    if x.ndim not in (3, 4):
        raise RuntimeError(
            f"{name}: Expected 3D or 4D (batch mode) tensor for input, but got: {list(x._shape)}"
        )
    for i in range(2):
        if p[i] > (d[i] * (k[i] - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                f"kernel_size={k[i]} and dilation={d[i]}"
            )
    oh = out_size(x._shape[-2], k[0], s[0], p[0], d[0], ceil_mode)
    ow = out_size(x._shape[-1], k[1], s[1], p[1], d[1], ceil_mode)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, x._shape[-3:]))}). Calculated output size: "
            f"({x._shape[-3]}x{oh}x{ow}). Output size is too small"
        )
    return k, s, p, d, (oh, ow)


def _windows(x: Tensor, k: tuple, s: tuple, p: tuple, d: tuple, out: tuple, fill: float) -> Tensor:
    """(N, C, oh, ow, kh*kw) copies of the windows of a padded copy of ``x``."""
    h, w = x._shape[-2:]
    extra_h = max((out[0] - 1) * s[0] + d[0] * (k[0] - 1) + 1 - h - 2 * p[0], 0)
    extra_w = max((out[1] - 1) * s[1] + d[1] * (k[1] - 1) + 1 - w - 2 * p[1], 0)
    xp = constant_pad(x, [(p[0], p[0] + extra_h), (p[1], p[1] + extra_w)], fill).contiguous()
    n, c, hp, wp = xp._shape
    v = xp.as_strided(
        (n, c, out[0], out[1], k[0], k[1]), (c * hp * wp, hp * wp, s[0] * wp, s[1], d[0] * wp, d[1]), 0
    )
    return v.reshape(n, c, out[0], out[1], k[0] * k[1])


def _max_data(x: Tensor, k: tuple, s: tuple, p: tuple, d: tuple, out: tuple, ceil_mode: bool) -> tuple:
    shape = x._shape[:2] + out
    if has_kernel(x._be, "max_pool2d"):
        vals, idx = call(x._be, "max_pool2d", x._data, k, s, p, d, ceil_mode)
        from ember.backends import dtypes as D

        return wrap(vals, x._be, x._device, x.dtype, shape), wrap(idx, x._be, x._device, D.int64, shape)
    win = _windows(x, k, s, p, d, out, float("-inf"))
    pos = win.argmax(-1)
    vals = win.amax(-1)
    r0 = arange(out[0], device=x._device).reshape(-1, 1) * s[0] - p[0]
    c0 = arange(out[1], device=x._device) * s[1] - p[1]
    rows, cols = r0 + (pos // k[1]) * d[0], c0 + (pos % k[1]) * d[1]
    h, w = x._shape[-2:]
    # A window whose maximum is -inf may pick a padding cell; report its first in-bounds cell.
    outside = (rows < 0) | (rows >= h) | (cols < 0) | (cols >= w)
    rows = where(outside, r0 + ((-r0).clamp(min=0) + d[0] - 1) // d[0] * d[0], rows)
    cols = where(outside, c0 + ((-c0).clamp(min=0) + d[1] - 1) // d[1] * d[1], cols)
    return vals, rows * w + cols


def _max_rule(n: Any, g: Tensor) -> tuple:
    shape, idx, overlap = n.ctx
    # Under create_graph the decomposition's own nodes carry the higher-order gradients.
    if not recording(g) and has_kernel(g._be, "max_pool2d_backward"):
        data = call(g._be, "max_pool2d_backward", g._data, idx._data, shape[2:], overlap)
        return (wrap(data, g._be, g._device, g.dtype, shape),)
    return (_max_backward(g, idx, shape[2:], overlap),)


@decomposition("max_pool2d_backward")
def _max_backward(g: Tensor, idx: Tensor, in_hw: tuple, accumulate: bool) -> Tensor:
    """A scatter of ``g`` to the argmax positions (a plain indexed write for disjoint windows)."""
    shape = g._shape[:2] + tuple(in_hw)
    nc, plane, outs = shape[0] * shape[1], shape[2] * shape[3], g._shape[2] * g._shape[3]
    if accumulate:  # windows share elements: several outputs may send gradient to one input
        base = zeros((nc, plane), dtype=g.dtype, device=g._device)
        gx = base.scatter_add(1, idx.reshape(nc, outs), g.reshape(nc, outs))
        return gx.reshape(shape)
    # Disjoint windows: each input gets at most one gradient, a plain write at flat positions.
    offsets = arange(nc, device=g._device).reshape(-1, 1) * plane
    flat = (idx.reshape(nc, outs) + offsets).reshape(-1)
    base = zeros(nc * plane, dtype=g.dtype, device=g._device)
    return base.index_put((flat,), g.reshape(-1)).reshape(shape)


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Maximum over each (kH, kW) window; ``return_indices`` also gives flat positions per plane."""
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    k, s, p, d, out = _geometry(x, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    with NoRecord():
        vals, idx = _max_data(x.detach(), k, s, p, d, out, ceil_mode)
    if recording(x):
        overlap = any(s[i] < d[i] * (k[i] - 1) + 1 for i in range(2))
        record("MaxPool2DWithIndicesBackward0", _max_rule, vals, (x,), (), (x._shape, idx, overlap))
    if unbatched:
        vals, idx = vals.squeeze(0), idx.squeeze(0)
    return (vals, idx) if return_indices else vals


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Maximum over 1-D windows of (N, C, L) or (C, L) input."""
    one = lambda v: (1, ntuple(v, 1)[0])
    r = max_pool2d(
        input.unsqueeze(-2),
        one(kernel_size),
        None if stride is None else one(stride),
        (0, ntuple(padding, 1)[0]),
        one(dilation),
        ceil_mode,
        True,
    )
    vals, idx = r[0].squeeze(-2), r[1].squeeze(-2)
    return (vals, idx) if return_indices else vals


def _counts(n: int, k: int, s: int, p: int, out: int, include_pad: bool) -> list[int]:
    res = []
    for i in range(out):
        a = i * s - p
        b = min(a + k, n + p)
        if not include_pad:
            a, b = max(a, 0), min(b, n)
        res.append(b - a)
    return res


def _avg_data(
    x: Tensor,
    k: tuple,
    s: tuple,
    p: tuple,
    out: tuple,
    ceil_mode: bool,
    include_pad: bool,
    div: Tensor,
    kernel_ok: bool,
) -> Tensor:
    if kernel_ok and has_kernel(x._be, "avg_pool2d"):
        data = call(x._be, "avg_pool2d", x._data, k, s, p, ceil_mode, include_pad)
        return wrap(data, x._be, x._device, x.dtype, x._shape[:2] + out)
    win = _windows(x, k, s, p, (1, 1), out, 0.0)
    return win.sum(-1) / div


def _avg_rule(n: Any, g: Tensor) -> tuple:
    shape, k, s, p, div = n.ctx
    gs = g / div
    if not recording(g) and has_kernel(g._be, "avg_pool2d_backward"):
        data = call(g._be, "avg_pool2d_backward", gs._data, shape[2:], k, s, p)
        return (wrap(data, g._be, g._device, g.dtype, shape),)
    return (_avg_backward(gs, shape[2:], k, s, p),)


@decomposition("avg_pool2d_backward")
def _avg_backward(g: Tensor, in_hw: tuple, k: tuple, s: tuple, p: tuple) -> Tensor:
    """A transposed convolution of the (divided) gradient with a kernel of ones, per plane.

    Its own nodes carry higher-order gradients: the result is linear in ``g``.
    """
    n, c = g._shape[:2]
    gs = g.reshape(n * c, 1, g._shape[-2], g._shape[-1])
    w = ones((1, 1) + tuple(k), dtype=g.dtype, device=g._device)
    return conv_input_grad(gs, w, tuple(in_hw), s, p, (1, 1), 1).reshape(n, c, *in_hw)


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over each (kH, kW) window (divisor: the window size, see ``count_include_pad``)."""
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    k, s, p, _, out = _geometry(x, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")
    h, w = x._shape[-2:]
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        div = tensor(float(divisor_override), dtype=x.dtype, device=x._device)
    else:
        rh = _counts(h, k[0], s[0], p[0], out[0], count_include_pad)
        rw = _counts(w, k[1], s[1], p[1], out[1], count_include_pad)
        div = tensor([[a * b for b in rw] for a in rh], dtype=x.dtype, device=x._device)
    with NoRecord():
        vals = _avg_data(
            x.detach(), k, s, p, out, ceil_mode, count_include_pad, div, divisor_override is None
        )
    if recording(x):
        record("AvgPool2DBackward0", _avg_rule, vals, (x,), (), (x._shape, k, s, p, div))
    return vals.squeeze(0) if unbatched else vals


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Mean over 1-D windows of (N, C, L) or (C, L) input."""
    one = lambda v: (1, ntuple(v, 1)[0])
    r = avg_pool2d(
        input.unsqueeze(-2),
        one(kernel_size),
        None if stride is None else one(stride),
        (0, ntuple(padding, 1)[0]),
        ceil_mode,
        count_include_pad,
    )
    return r.squeeze(-2)


def _adaptive_matrix(n: int, out: int, like: Tensor) -> Tensor:
    rows = []
    for i in range(out):
        a, b = (i * n) // out, -(-((i + 1) * n) // out)
        rows.append([1.0 / (b - a) if a <= j < b else 0.0 for j in range(n)])
    return tensor(rows, dtype=like.dtype, device=like._device)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed (oH, oW): cell i spans [floor(i*H/oH), ceil((i+1)*H/oH))."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input._shape)}")
    size = (output_size,) * 2 if isinstance(output_size, int) or output_size is None else tuple(output_size)
    h, w = input._shape[-2:]
    oh = h if size[0] is None else size[0]
    ow = w if size[1] is None else size[1]
    if (oh, ow) == (1, 1):
        return input.mean((-2, -1), keepdim=True)
    if h % oh == 0 and w % ow == 0:
        return avg_pool2d(input, (h // oh, w // ow))
    ph, pw = _adaptive_matrix(h, oh, input), _adaptive_matrix(w, ow, input)
    return ph @ input @ pw.mT


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling of (N, C, L) to a fixed length."""
    size = output_size if isinstance(output_size, int) else output_size[0]
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def _cells(n: int, out: int) -> list[tuple[int, int]]:
    return [((i * n) // out, -(-((i + 1) * n) // out)) for i in range(out)]


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed (oH, oW) with the adaptive cells of ``adaptive_avg_pool2d``."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got {list(input._shape)}")
    size = (output_size,) * 2 if isinstance(output_size, int) or output_size is None else tuple(output_size)
    h, w = input._shape[-2:]
    oh = h if size[0] is None else size[0]
    ow = w if size[1] is None else size[1]
    if h % oh == 0 and w % ow == 0:
        return max_pool2d(input, (h // oh, w // ow), return_indices=return_indices)
    from ..._ops.join import stack

    vals, idxs = [], []
    for a, b in _cells(h, oh):
        for c, d in _cells(w, ow):
            win = input[..., a:b, c:d].flatten(-2)
            pos = win.argmax(-1)
            vals.append(win.gather(-1, pos.unsqueeze(-1)).squeeze(-1))
            idxs.append((pos // (d - c) + a) * w + pos % (d - c) + c)
    lead = input._shape[:-2]
    out = stack(vals, -1).reshape(lead + (oh, ow))
    if not return_indices:
        return out
    return out, stack(idxs, -1).reshape(lead + (oh, ow))


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    size = output_size if isinstance(output_size, int) else output_size[0]
    r = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), True)
    vals, idx = r[0].squeeze(-2), r[1].squeeze(-2)
    return (vals, idx) if return_indices else vals
