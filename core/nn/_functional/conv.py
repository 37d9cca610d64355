"""2-D convolution as three bilinear ops whose derivative rules call each other.

``conv2d(x, w)``, its adjoint in ``x`` (``conv_input_grad(g, w)``, i.e. the transposed
convolution) and its adjoint in ``w`` (``conv_weight_grad(x, g)``) each record one node;
each rule is written with these three ops, so gradients of any order work on every backend.
Values come from the backend's ``conv2d``, ``conv2d_input_grad`` and ``conv2d_weight_grad``
kernels when it registers them, else from their decompositions here: ``im2col`` (an
``as_strided`` view) and one matmul per group, the input gradient as a convolution of the
dilated, padded gradient with the flipped weights, the weight gradient as a convolution with
the batch as channels.
"""

from __future__ import annotations

from typing import Any

from ..._creation import zeros
from ..._dispatch import call, call_out, has_kernel, kernel_writes_out
from ..._ops._composite import decomposition
from ..._tensor import Tensor, wrap
from ...autograd.graph import record
from ._util import NoRecord, recording
from .padding import constant_pad

__all__ = ["conv2d_op", "conv_input_grad", "conv_weight_grad", "fits_bias", "out_size"]

Pair = tuple[int, int]


def out_size(n: int, k: int, s: int, p: int, d: int, ceil: bool = False) -> int:
    """Output length of a sliding window (PyTorch's formula, incl. ceil_mode's last-window rule)."""
    span = n + 2 * p - d * (k - 1) - 1
    if span < 0:
        return 0
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= n + p:
        out -= 1
    return out


# -- forward values (no graph) -------------------------------------------------------------
def _im2col_conv(x: Tensor, w: Tensor, stride: Pair, padding: Pair, dilation: Pair, groups: int) -> Tensor:
    n, c, _, _ = x._shape
    o, cg, kh, kw = w._shape
    if padding != (0, 0):
        x = constant_pad(x, [padding[:1] * 2, padding[1:] * 2])
    x = x.contiguous()
    hp, wp = x._shape[2:]
    oh = (hp - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wp - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    cols = x.as_strided(
        (n, groups, cg, kh, kw, oh, ow),
        (c * hp * wp, cg * hp * wp, hp * wp, dilation[0] * wp, dilation[1], stride[0] * wp, stride[1]),
        x.storage_offset(),  # a contiguous view may start mid-buffer
    ).reshape(n, groups, cg * kh * kw, oh * ow)
    out = w.reshape(1, groups, o // groups, cg * kh * kw) @ cols
    return out.reshape(n, o, oh, ow)


def _conv_data(x: Tensor, w: Tensor, stride: Pair, padding: Pair, dilation: Pair, groups: int) -> Tensor:
    with NoRecord():
        x, w = x.detach(), w.detach()
        if not has_kernel(x._be, "conv2d"):
            return _im2col_conv(x, w, stride, padding, dilation, groups)
        data = call(x._be, "conv2d", x._data, w._data, stride, padding, dilation, groups)
        n, o = x._shape[0], w._shape[0]
        oh = out_size(x._shape[2], w._shape[2], stride[0], padding[0], dilation[0])
        ow = out_size(x._shape[3], w._shape[3], stride[1], padding[1], dilation[1])
        return wrap(data, x._be, x._device, x.dtype, (n, o, oh, ow))


def _dilate(g: Tensor, stride: Pair) -> Tensor:
    if stride == (1, 1):
        return g
    n, c, h, w = g._shape
    out = zeros((n, c, (h - 1) * stride[0] + 1, (w - 1) * stride[1] + 1), dtype=g.dtype, device=g._device)
    out[:, :, :: stride[0], :: stride[1]] = g
    return out


def _flip_hw(w: Tensor) -> Tensor:
    kh, kw = w._shape[2:]
    if kh > 1:
        w = w.index_select(2, _rev(kh, w))
    if kw > 1:
        w = w.index_select(3, _rev(kw, w))
    return w


def _rev(n: int, like: Tensor) -> Tensor:
    from ..._creation import arange

    return arange(n - 1, -1, -1, device=like._device)


def _input_grad_data(
    g: Tensor, w: Tensor, in_hw: Pair, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Tensor:
    if not has_kernel(g._be, "conv2d_input_grad"):
        return _input_grad_decomposed(g, w, in_hw, stride, padding, dilation, groups)
    data = call(g._be, "conv2d_input_grad", g._data, w._data, in_hw, stride, padding, dilation, groups)
    shape = (g._shape[0], w._shape[1] * groups, *in_hw)
    return wrap(data, g._be, g._device, g.dtype, shape)


@decomposition("conv2d_input_grad")
def _input_grad_decomposed(
    g: Tensor, w: Tensor, in_hw: Pair, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Tensor:
    """A stride-1 convolution of the dilated, padded gradient with the flipped weights."""
    o, cg, kh, kw = w._shape
    with NoRecord():
        g, w = g.detach(), w.detach()
        gd = _dilate(g, stride)
        lh, lw = gd._shape[2:]
        left_h, left_w = dilation[0] * (kh - 1) - padding[0], dilation[1] * (kw - 1) - padding[1]
        right_h = in_hw[0] + dilation[0] * (kh - 1) - lh - left_h
        right_w = in_hw[1] + dilation[1] * (kw - 1) - lw - left_w
        gp = constant_pad(gd, [(left_h, right_h), (left_w, right_w)])
        og = o // groups
        wt = w.reshape(groups, og, cg, kh, kw).transpose(1, 2).reshape(groups * cg, og, kh, kw)
        wt = _flip_hw(wt).contiguous()
    return _conv_data(gp, wt, (1, 1), (0, 0), dilation, groups)


def _weight_grad_data(
    x: Tensor, g: Tensor, w_shape: tuple, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Tensor:
    if not has_kernel(x._be, "conv2d_weight_grad"):
        return _weight_grad_decomposed(x, g, w_shape, stride, padding, dilation, groups)
    data = call(x._be, "conv2d_weight_grad", x._data, g._data, w_shape, stride, padding, dilation, groups)
    return wrap(data, x._be, x._device, x.dtype, tuple(w_shape))


@decomposition("conv2d_weight_grad")
def _weight_grad_decomposed(
    x: Tensor, g: Tensor, w_shape: tuple, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Tensor:
    """dW[o, c] = sum_n x[n, c] ⋆ g[n, o]: one convolution with the batch as channels.

    Per group the input is (cg, N, H, W) and the "kernel" (og, N, oh, ow); the groups sit
    side by side along the channel dim, so a grouped convolution does all of them at once.
    Stride and dilation swap roles; the result is cropped to (kh, kw).
    """
    o, cg, kh, kw = w_shape
    n, og = x._shape[0], o // groups
    with NoRecord():
        x, g = x.detach(), g.detach()
        xs = (
            x.reshape(n, groups, cg, *x._shape[2:])
            .permute(2, 1, 0, 3, 4)
            .reshape(cg, groups * n, *x._shape[2:])
        )
        gs = g.reshape(n, groups, og, *g._shape[2:]).permute(1, 2, 0, 3, 4).reshape(o, n, *g._shape[2:])
        r = _conv_data(xs, gs, dilation, padding, stride, groups)  # (cg, o, >=kh, >=kw)
        return r[:, :, :kh, :kw].transpose(0, 1).contiguous()


def _cat(parts: list[Tensor]) -> Tensor:
    from ..._ops.join import cat

    return cat(parts, 0)


# -- the three ops with their rules --------------------------------------------------------
def _conv_rule(n: Any, g: Tensor) -> tuple:
    x, w, stride, padding, dilation, groups = n.ctx
    need = n.needs_input_grad
    gx = conv_input_grad(g, w, x._shape[2:], stride, padding, dilation, groups) if need[0] else None
    gw = conv_weight_grad(x, g, w._shape, stride, padding, dilation, groups) if need[1] else None
    if len(need) == 2:
        return gx, gw
    return gx, gw, g.sum((0, 2, 3)) if need[2] else None


def fits_bias(out_channels: int, bias: Tensor, like: Tensor) -> bool:
    """A bias ``conv2d_op`` adds itself: one value per output channel, of the result's dtype
    and device (anything else takes the broadcasting add and its errors)."""
    return bias._shape == (out_channels,) and bias.dtype is like.dtype and bias._device is like._device


def conv2d_op(
    x: Tensor, w: Tensor, stride: Pair, padding: Pair, dilation: Pair, groups: int, bias: Tensor | None = None
) -> Tensor:
    """Cross-correlation of NCHW ``x`` with OIHW ``w`` (validated args), plus a (O,) ``bias``
    that ``fits_bias``: added into the fresh result, one ``ConvolutionBackward0`` node for all
    three inputs, as PyTorch records it."""
    out = _conv_data(x, w, stride, padding, dilation, groups)
    ctx = (x, w, stride, padding, dilation, groups)
    if bias is not None:
        out = _add_bias(out, bias)
        if recording(x, w, bias):
            record("ConvolutionBackward0", _conv_rule, out, (x, w, bias), (), ctx)
    elif recording(x, w):
        record("ConvolutionBackward0", _conv_rule, out, (x, w), (), ctx)
    return out


def _add_bias(out: Tensor, bias: Tensor) -> Tensor:
    """``out + bias`` per channel: written into ``out``'s own fresh array where the kernel can
    write there (not a view of the conv's temporaries), else a new result."""
    be = out._be
    b = call(be, "expand", call(be, "reshape", bias._data, (1, bias._shape[0], 1, 1)), out._shape)
    if out._base is None and kernel_writes_out(be, "add"):
        call_out(be, "add", out._data, b, out=out._data)
        return out
    return wrap(call(be, "add", out._data, b), be, out._device, out.dtype, out._shape)


def _crop_like(t: Tensor, ref: Tensor) -> Tensor:
    """``t`` cut to ``ref``'s spatial size.

    A transposed convolution whose output padding reaches the stride (allowed when the
    dilation is larger) has an output that convolves back to an extra row or column, which
    lies outside the original input and gets no gradient.
    """
    h, w = ref._shape[2], ref._shape[3]
    if t._shape[2] == h and t._shape[3] == w:
        return t
    return t[:, :, :h, :w]


def _input_grad_rule(n: Any, gg: Tensor) -> tuple:
    g, w, stride, padding, dilation, groups = n.ctx
    need = n.needs_input_grad
    d_g = _crop_like(conv2d_op(gg, w, stride, padding, dilation, groups), g) if need[0] else None
    d_w = conv_weight_grad(gg, g, w._shape, stride, padding, dilation, groups) if need[1] else None
    return d_g, d_w


def conv_input_grad(
    g: Tensor, w: Tensor, in_hw: tuple, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Tensor:
    """The adjoint of ``conv2d`` in its input: a transposed convolution of ``g`` to size ``in_hw``."""
    out = _input_grad_data(g, w, tuple(in_hw), stride, padding, dilation, groups)
    if recording(g, w):
        record(
            "ConvolutionBackwardBackward0",
            _input_grad_rule,
            out,
            (g, w),
            (),
            (g, w, stride, padding, dilation, groups),
        )
    return out


def _weight_grad_rule(n: Any, gg: Tensor) -> tuple:
    x, g, stride, padding, dilation, groups = n.ctx
    need = n.needs_input_grad
    d_x = conv_input_grad(g, gg, x._shape[2:], stride, padding, dilation, groups) if need[0] else None
    d_g = _crop_like(conv2d_op(x, gg, stride, padding, dilation, groups), g) if need[1] else None
    return d_x, d_g


def conv_weight_grad(
    x: Tensor, g: Tensor, w_shape: tuple, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Tensor:
    """The adjoint of ``conv2d`` in its weight: the weight gradient for output gradient ``g``."""
    out = _weight_grad_data(x, g, tuple(w_shape), stride, padding, dilation, groups)
    if recording(x, g):
        record(
            "ConvolutionBackwardBackward0",
            _weight_grad_rule,
            out,
            (x, g),
            (),
            (x, g, stride, padding, dilation, groups),
        )
    return out
