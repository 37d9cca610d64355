"""Records for the convolution and pooling composites (NCHW), with loop references.

Parameters are pairs ``(h, w)``, as the frontend passes them after normalising ints.
"""

from __future__ import annotations

import math

import numpy as np

from .dtypes import FLOATS
from .records import OpCase, Sample
from .samples import contig, strided, values

__all__ = ["RECORDS"]


def _out_size(n: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    span = n + 2 * p - d * (k - 1) - 1
    out = (math.ceil(span / s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= n + p:  # the last window must start inside the input or left padding
        out -= 1
    return max(out, 0)


def _conv_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    def v(*shape: int) -> np.ndarray:
        return values(rng, shape, dtype, "small")

    return [
        Sample("basic", (contig(v(2, 3, 5, 5)), contig(v(4, 3, 3, 3)), (1, 1), (0, 0), (1, 1), 1)),
        Sample("padding-stride", (contig(v(1, 2, 6, 5)), contig(v(3, 2, 3, 2)), (2, 1), (1, 2), (1, 1), 1)),
        Sample("dilation", (contig(v(1, 2, 7, 7)), contig(v(2, 2, 2, 3)), (1, 1), (0, 1), (2, 2), 1)),
        Sample("groups", (contig(v(2, 4, 4, 4)), contig(v(6, 2, 3, 3)), (1, 1), (1, 1), (1, 1), 2)),
        Sample("strided-input", (strided(v(1, 2, 4, 4)), contig(v(2, 2, 2, 2)), (1, 1), (0, 0), (1, 1), 1)),
        Sample("batch-0", (contig(v(0, 3, 5, 5)), contig(v(4, 3, 3, 3)), (1, 1), (1, 1), (1, 1), 1)),
        Sample("1x1-odd", (contig(v(1, 3, 17, 13)), contig(v(5, 3, 1, 1)), (1, 1), (0, 0), (1, 1), 1)),
    ]


def _conv2d(x: np.ndarray, w: np.ndarray, stride, padding, dilation, groups: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = _out_size(h, kh, stride[0], padding[0], dilation[0], False)
    ow = _out_size(wd, kw, stride[1], padding[1], dilation[1], False)
    out = np.zeros((n, o, oh, ow), dtype=np.result_type(x, w))
    per = o // groups
    for oc in range(o):
        g = oc // per
        for i in range(kh):
            for j in range(kw):
                hs, ws = i * dilation[0], j * dilation[1]
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    hs : hs + stride[0] * oh : stride[0],
                    ws : ws + stride[1] * ow : stride[1],
                ]
                out[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j])
    return out


def _windows(x: np.ndarray, kernel, stride, padding, dilation, ceil: bool):  # type: ignore[no-untyped-def]
    """Yield (oh, ow, values in the window, flat input indices or -1 for padding) per output."""
    h, w = x.shape[-2:]
    oh = _out_size(h, kernel[0], stride[0], padding[0], dilation[0], ceil)
    ow = _out_size(w, kernel[1], stride[1], padding[1], dilation[1], ceil)
    for a in range(oh):
        for b in range(ow):
            rows = [a * stride[0] - padding[0] + i * dilation[0] for i in range(kernel[0])]
            cols = [b * stride[1] - padding[1] + j * dilation[1] for j in range(kernel[1])]
            yield a, b, rows, cols, (oh, ow)


def _max_pool2d(x: np.ndarray, kernel, stride, padding, dilation, ceil_mode: bool):  # type: ignore[no-untyped-def]
    h, w = x.shape[-2:]
    vals: np.ndarray | None = None
    idx: np.ndarray | None = None
    for a, b, rows, cols, shape in _windows(x, kernel, stride, padding, dilation, ceil_mode):
        if vals is None:
            vals = np.zeros(x.shape[:-2] + shape, x.dtype)
            idx = np.zeros(x.shape[:-2] + shape, np.int64)
        cells = [(r, c) for r in rows for c in cols if 0 <= r < h and 0 <= c < w]
        stack = np.stack([x[..., r, c] for r, c in cells], axis=-1)
        best = np.argmax(stack, axis=-1)  # first maximum, as PyTorch's CPU kernel
        vals[..., a, b] = np.take_along_axis(stack, best[..., None], -1)[..., 0]
        flat = np.array([r * w + c for r, c in cells])
        idx[..., a, b] = flat[best]  # type: ignore[index]
    return vals, idx


def _avg_pool2d(x: np.ndarray, kernel, stride, padding, ceil_mode: bool, count_include_pad: bool):  # type: ignore[no-untyped-def]
    h, w = x.shape[-2:]
    out: np.ndarray | None = None
    for a, b, rows, cols, shape in _windows(x, kernel, stride, padding, (1, 1), ceil_mode):
        if out is None:
            out = np.zeros(x.shape[:-2] + shape, x.dtype)
        # PyTorch's divisor: the window clipped to the padded input, or to the input itself
        r0, c0 = rows[0], cols[0]
        r1, c1 = min(r0 + kernel[0], h + padding[0]), min(c0 + kernel[1], w + padding[1])
        inside = [(r, c) for r in rows for c in cols if 0 <= r < h and 0 <= c < w]
        total = sum(x[..., r, c] for r, c in inside) if inside else 0.0
        if count_include_pad:
            div = (r1 - r0) * (c1 - c0)
        else:
            div = (min(r1, h) - max(r0, 0)) * (min(c1, w) - max(c0, 0))
        out[..., a, b] = total / div
    return out


def _pool_samples(dtype: str, rng: np.random.Generator, avg: bool) -> list[Sample]:
    def v(*shape: int) -> np.ndarray:
        return values(rng, shape, dtype)

    tail = (False, True) if avg else ((1, 1), False)
    tail_ceil = (True, False) if avg else ((1, 1), True)
    out = [
        Sample("2x2", (contig(v(2, 3, 4, 6)), (2, 2), (2, 2), (0, 0), *tail)),
        Sample("3x3-pad", (contig(v(1, 2, 5, 5)), (3, 3), (2, 2), (1, 1), *tail)),
        Sample("ceil-mode", (contig(v(1, 1, 5, 7)), (2, 3), (2, 2), (0, 1), *tail_ceil)),
        Sample("strided-input", (strided(v(1, 2, 4, 4)), (2, 2), (1, 1), (0, 0), *tail)),
    ]
    out.append(Sample("batch-0", (contig(v(0, 2, 4, 4)), (2, 2), (2, 2), (0, 0), *tail)))
    # every combination of the boolean parameters, on a size where ceil_mode adds a window
    if avg:
        for ceil, include_pad in ((a, b) for a in (False, True) for b in (False, True)):
            x = contig(v(1, 2, 6, 7))
            out.append(
                Sample(
                    f"ceil={ceil}-include_pad={include_pad}", (x, (3, 2), (2, 2), (1, 1), ceil, include_pad)
                )
            )
    else:
        for ceil in (False, True):
            x = contig(v(1, 2, 7, 8))
            out.append(Sample(f"dilation-ceil={ceil}", (x, (2, 2), (2, 3), (1, 0), (2, 2), ceil)))
    return out


def _taps(xshape: tuple, wshape: tuple, gshape: tuple, stride, padding, dilation, groups: int):  # type: ignore[no-untyped-def]
    """Yield (input channels, output channels, tap (i, j), padded row/col slices) per group and tap."""
    cg, og = wshape[1], wshape[0] // groups
    oh, ow = gshape[2:]
    for grp in range(groups):
        for i in range(wshape[2]):
            for j in range(wshape[3]):
                hs, ws = i * dilation[0], j * dilation[1]
                rows = slice(hs, hs + stride[0] * (oh - 1) + 1, stride[0])
                cols = slice(ws, ws + stride[1] * (ow - 1) + 1, stride[1])
                yield slice(grp * cg, (grp + 1) * cg), slice(grp * og, (grp + 1) * og), i, j, rows, cols


def _padded_zeros(n: int, c: int, hw, padding, need, dtype) -> np.ndarray:  # type: ignore[no-untyped-def]
    hp = max(hw[0] + 2 * padding[0], need[0])
    wp = max(hw[1] + 2 * padding[1], need[1])
    return np.zeros((n, c, hp, wp), dtype)


def _conv_input_grad(
    g: np.ndarray, w: np.ndarray, in_hw, stride, padding, dilation, groups: int
) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The adjoint of ``_conv2d`` in x: each tap's products added back at its input cells."""
    n, _, oh, ow = g.shape
    need = [(o - 1) * s + d * (k - 1) + 1 for o, s, d, k in zip((oh, ow), stride, dilation, w.shape[2:])]
    dx = _padded_zeros(n, w.shape[1] * groups, in_hw, padding, need, np.result_type(g, w))
    for cs, os_, i, j, rows, cols in _taps((), w.shape, g.shape, stride, padding, dilation, groups):
        dx[:, cs, rows, cols] += np.einsum("nohw,oc->nchw", g[:, os_], w[os_, :, i, j])
    return dx[:, :, padding[0] : padding[0] + in_hw[0], padding[1] : padding[1] + in_hw[1]]


def _conv_weight_grad(
    x: np.ndarray, g: np.ndarray, w_shape, stride, padding, dilation, groups: int
) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The adjoint of ``_conv2d`` in w: each tap's input cells times the gradient, summed."""
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    dw = np.zeros(w_shape, np.result_type(x, g))
    for cs, os_, i, j, rows, cols in _taps(x.shape, w_shape, g.shape, stride, padding, dilation, groups):
        dw[os_, :, i, j] = np.einsum("nohw,nchw->oc", g[:, os_], xp[:, cs, rows, cols])
    return dw


def _grad_conv_samples(dtype: str, rng: np.random.Generator, weight: bool) -> list[Sample]:
    """The forward samples' geometry, with an output gradient of the matching shape."""
    out = []
    for s in _conv_samples(dtype, rng):
        x, w, stride, padding, dilation, groups = s.args
        hw = [
            _out_size(x.value.shape[2 + a], w.value.shape[2 + a], stride[a], padding[a], dilation[a], False)
            for a in range(2)
        ]
        gshape = (x.value.shape[0], w.value.shape[0], *hw)
        g = values(rng, gshape, dtype, "small")
        gt = strided(g) if s.label == "strided-input" else contig(g)
        if weight:
            args = (x, gt, w.value.shape, stride, padding, dilation, groups)
        else:
            args = (gt, w, x.value.shape[2:], stride, padding, dilation, groups)
        out.append(Sample(s.label, args))
    # stride 2 over 7x5: the last row and column are in no window and get no gradient
    x, w = values(rng, (1, 2, 7, 5), dtype, "small"), values(rng, (3, 2, 2, 2), dtype, "small")
    g = contig(values(rng, (1, 3, 3, 2), dtype, "small"))
    geo = ((2, 2), (0, 0), (1, 1), 1)
    out.append(
        Sample("uncovered-edge", (contig(x), g, w.shape, *geo) if weight else (g, contig(w), (7, 5), *geo))
    )
    return out


def _max_backward(g: np.ndarray, idx: np.ndarray, in_hw, accumulate: bool) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = np.zeros(g.shape[:2] + tuple(in_hw), np.float64)
    for n in range(g.shape[0]):
        for c in range(g.shape[1]):
            for pos, v in zip(idx[n, c].reshape(-1), g[n, c].reshape(-1).astype(np.float64)):
                out[n, c].reshape(-1)[pos] += v
    return out.astype(g.dtype)


def _max_backward_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = []
    for s in _pool_samples(dtype, rng, False):
        x, k, stride, padding, dilation, ceil = s.args
        _, idx = _max_pool2d(x.value, k, stride, padding, dilation, ceil)
        if idx is None:
            continue
        overlap = any(stride[i] < dilation[i] * (k[i] - 1) + 1 for i in range(2))
        g = values(rng, idx.shape, dtype, "small")
        out.append(Sample(s.label, (contig(g), contig(idx), x.value.shape[2:], overlap)))
    x = values(rng, (2, 2, 5, 5), dtype)
    _, idx = _max_pool2d(x, (3, 3), (1, 1), (1, 1), (1, 1), False)  # overlapping windows
    g = values(rng, idx.shape, dtype, "small")  # type: ignore[union-attr]
    out.append(Sample("overlap-strided-grad", (strided(g), contig(idx), (5, 5), True)))  # type: ignore[arg-type]
    return out


def _avg_backward(g: np.ndarray, in_hw, kernel, stride, padding) -> np.ndarray:  # type: ignore[no-untyped-def]
    n, c, oh, ow = g.shape
    need = [(o - 1) * s + k for o, s, k in zip((oh, ow), stride, kernel)]
    dx = _padded_zeros(n, c, in_hw, padding, need, g.dtype)
    for a in range(oh):
        for b in range(ow):
            r, q = a * stride[0], b * stride[1]
            dx[:, :, r : r + kernel[0], q : q + kernel[1]] += g[:, :, a : a + 1, b : b + 1]
    return dx[:, :, padding[0] : padding[0] + in_hw[0], padding[1] : padding[1] + in_hw[1]]


def _avg_backward_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = []
    for s in _pool_samples(dtype, rng, True):
        x, k, stride, padding, ceil, _ = s.args
        oh = _out_size(x.value.shape[2], k[0], stride[0], padding[0], 1, ceil)
        ow = _out_size(x.value.shape[3], k[1], stride[1], padding[1], 1, ceil)
        g = values(rng, x.value.shape[:2] + (oh, ow), dtype, "small")
        gt = strided(g) if s.label == "strided-input" else contig(g)
        out.append(Sample(s.label, (gt, x.value.shape[2:], k, stride, padding)))
    return out


def _sort_out(dtype: str) -> tuple[str, str]:
    return dtype, "int64"


RECORDS = [
    OpCase(
        "conv2d",
        _conv_samples,
        _conv2d,
        FLOATS,
        "real floating; NCHW, OIHW weights, no bias",
        tol_scale=4.0,
        magnitude=lambda x, w, *p: _conv2d(np.abs(x), np.abs(w), *p),
    ),
    OpCase(
        "max_pool2d",
        lambda d, r: _pool_samples(d, r, False),
        _max_pool2d,
        FLOATS,
        "real floating; indices flat per (H, W) plane",
        out_dtype=_sort_out,
    ),
    OpCase(
        "avg_pool2d",
        lambda d, r: _pool_samples(d, r, True),
        _avg_pool2d,
        FLOATS,
        "real floating; PyTorch's divisor rules",
        tol_scale=2.0,
    ),
    OpCase(
        "conv2d_input_grad",
        lambda d, r: _grad_conv_samples(d, r, False),
        _conv_input_grad,
        FLOATS,
        "real floating; the adjoint of conv2d in its input (col2im)",
        tol_scale=4.0,
        magnitude=lambda g, w, *p: _conv_input_grad(np.abs(g), np.abs(w), *p),
    ),
    OpCase(
        "conv2d_weight_grad",
        lambda d, r: _grad_conv_samples(d, r, True),
        _conv_weight_grad,
        FLOATS,
        "real floating; the adjoint of conv2d in its weight",
        tol_scale=4.0,
        magnitude=lambda x, g, *p: _conv_weight_grad(np.abs(x), np.abs(g), *p),
    ),
    OpCase(
        "max_pool2d_backward",
        _max_backward_samples,
        _max_backward,
        FLOATS,
        "real floating; the gradient placed at max_pool2d's flat indices, summed where windows overlap",
        tol_scale=2.0,
    ),
    OpCase(
        "avg_pool2d_backward",
        _avg_backward_samples,
        _avg_backward,
        FLOATS,
        "real floating; each window's gradient added to its cells (padding cut off)",
        tol_scale=2.0,
    ),
]
