"""Backward kernels of convolution and pooling: im2col/col2im around one BLAS call.

``conv2d_input_grad`` multiplies the transposed weights by the output gradient (one batched
matmul over the groups) and adds the columns back into the padded input (col2im: one strided
add per kernel tap, never a loop over the channels). ``conv2d_weight_grad`` copies the
input's windows once (im2col) and multiplies them by the output gradient. Large batches go
by blocks of samples whose columns stay in L2 between the copy and the GEMM. The
pooling backwards write (or add) the gradient at the saved argmax positions, or spread each
window's gradient over its cells. Large scratch arrays come from the host cache, so a
training loop reuses them. Half types compute in float32.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .dtypes import HALF
from .hostmem import cache
from .nn_kernels import _COLS_BLOCK, _padded, _windows

__all__ = ["avg_pool2d_backward", "conv2d_input_grad", "conv2d_weight_grad", "max_pool2d_backward"]

Pair = tuple[int, int]
_F32 = np.dtype(np.float32)
# Below this many weights per output channel (C/groups · kh · kw) the GEMMs run per sample
# on the windows in their natural order; above it one GEMM per group over the whole batch.
_SMALL_K = 64


def _zeros(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    out = cache.empty(shape, dtype)
    out.fill(0)
    return out


def _col2im(cols: np.ndarray, hw: Pair, k: Pair, s: Pair, p: Pair, d: Pair, dtype: np.dtype) -> np.ndarray:
    """Sum (N, C, kh, kw, oh, ow) columns back into an (N, C, H, W) array (the adjoint of im2col).

    Taps reaching past the padded input's bottom/right edge (``ceil_mode`` windows) land in
    extra rows and columns that are cut off with the padding.
    """
    n, c, kh, kw, oh, ow = cols.shape
    hp = max(hw[0] + 2 * p[0], (oh - 1) * s[0] + d[0] * (kh - 1) + 1)
    wp = max(hw[1] + 2 * p[1], (ow - 1) * s[1] + d[1] * (kw - 1) + 1)
    full = _zeros((n, c, hp, wp), dtype)
    for i in range(kh):
        rows = slice(i * d[0], i * d[0] + s[0] * (oh - 1) + 1, s[0])
        for j in range(kw):
            part = full[:, :, rows, j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1]]
            np.add(part, cols[:, :, i, j], out=part)
    if (hp, wp) == hw:
        return full
    return np.ascontiguousarray(full[:, :, p[0] : p[0] + hw[0], p[1] : p[1] + hw[1]])


def _input_grad_rows(g: np.ndarray, w: np.ndarray, hw: Pair, p: Pair, d: Pair, groups: int) -> np.ndarray:
    """Stride-1 input gradient with whole padded rows as columns: the col2im adds run over
    contiguous (oh·Wp)-long rows instead of ow-long pieces (half the time at 13x13).

    ``g`` is widened to the padded width with zero columns, so the GEMM yields ``Wp - ow``
    extra columns per row that are exact zeros (``w`` is finite: the caller checks) and add
    nothing where they land, also past a plane's end into the next one (planes lie back to
    back, NCHW). The kw taps of a kernel row are summed by the GEMM itself (its inner
    dimension runs over og·kw copies of the rows shifted by j·dw), so one shifted add per
    kernel row remains; blocks of samples keep the columns in L2.
    """
    n, o, oh, ow = g.shape
    _, cg, kh, kw = w.shape
    og, c = o // groups, cg * groups
    hp, wp = hw[0] + 2 * p[0], hw[1] + 2 * p[1]
    plane, row, lead = hp * wp, oh * wp, d[1] * (kw - 1)
    # a[g, (c, i), (o, j)] = w[g·og + o, c, i, j]
    a = np.ascontiguousarray(w.reshape(groups, og, cg, kh, kw).transpose(0, 2, 3, 1, 4))
    a = a.reshape(groups, cg * kh, og * kw)
    flat = _zeros((n * c * plane + lead,), g.dtype)
    it = flat.itemsize
    step = max(1, _COLS_BLOCK // (cg * kh * kw * row * it))
    for lo in range(0, n, step):
        b = min(step, n - lo)
        if lo == 0 or b < step:
            wide = cache.empty((o, lead + b * row), g.dtype)  # zero lead, then (B, oh, Wp) rows
            wide[:, :lead] = 0
            body = wide[:, lead:].reshape(o, b, oh, wp)
            body[..., ow:] = 0
            shifted = cache.empty((o, kw, b * row), g.dtype)
            cols = cache.empty((groups, cg * kh, b * row), g.dtype)
        np.copyto(body[..., :ow], g[lo : lo + b].transpose(1, 0, 2, 3))
        for j in range(kw):  # shifted[o, j, q] = row element q - j·dw (zeros before the start)
            np.copyto(shifted[:, j], wide[:, lead - j * d[1] : lead - j * d[1] + b * row])
        np.matmul(a, shifted.reshape(groups, og * kw, b * row), out=cols)  # (G, cg·kh, B·oh·Wp)
        taps = cols.reshape(c, kh, b, row)
        for i in range(kh):
            at = lo * c * plane + i * d[0] * wp
            part = as_strided(flat[at:], (b, c, row), (c * plane * it, plane * it, it))
            np.add(part, taps[:, i].transpose(1, 0, 2), out=part)
    full = flat[: n * c * plane].reshape(n, c, hp, wp)
    if p == (0, 0):
        return full
    out = cache.empty((n, c) + hw, g.dtype)
    np.copyto(out, full[:, :, p[0] : p[0] + hw[0], p[1] : p[1] + hw[1]])
    return out


def conv2d_input_grad(
    g: np.ndarray, w: np.ndarray, in_hw: Pair, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> np.ndarray:
    """Gradient of ``conv2d`` in its input (a transposed convolution of ``g`` to ``in_hw``)."""
    dtype = g.dtype
    if dtype in HALF:
        g, w = g.astype(_F32), w.astype(_F32)
    n, o, oh, ow = g.shape
    _, cg, kh, kw = w.shape
    og, k, length = o // groups, cg * kh * kw, oh * ow
    wt = w.reshape(groups, og, k).transpose(0, 2, 1)  # (G, K, og), BLAS reads it transposed
    if k >= _SMALL_K and stride == (1, 1) and n and length and np.isfinite(w).all():
        res = _input_grad_rows(g, w, tuple(in_hw), padding, dilation, groups)  # type: ignore[arg-type]
        return res.astype(dtype) if dtype in HALF else res
    if k < _SMALL_K:
        cols = np.matmul(wt, g.reshape(n, groups, og, length))  # (N, G, K, L)
        cols = cols.reshape(n, groups * cg, kh, kw, oh, ow)
    else:
        gt = cache.empty((groups, og, n, length), g.dtype)
        np.copyto(gt, g.reshape(n, groups, og, length).transpose(1, 2, 0, 3))
        cols = np.matmul(wt, gt.reshape(groups, og, n * length))  # (G, K, N·L)
        cols = cols.reshape(groups * cg, kh, kw, n, oh, ow).transpose(3, 0, 1, 2, 4, 5)
    res = _col2im(cols, tuple(in_hw), (kh, kw), stride, padding, dilation, g.dtype)  # type: ignore[arg-type]
    return res.astype(dtype) if dtype in HALF else res


def conv2d_weight_grad(
    x: np.ndarray, g: np.ndarray, w_shape: tuple, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> np.ndarray:
    """Gradient of ``conv2d`` in its weight: output gradient times the input's windows."""
    dtype = x.dtype
    if dtype in HALF:
        x, g = x.astype(_F32), g.astype(_F32)
    n = x.shape[0]
    o, cg, kh, kw = w_shape
    _, _, oh, ow = g.shape
    og, k, length = o // groups, cg * kh * kw, oh * ow
    xp = _padded(np.ascontiguousarray(x), padding[0], padding[0], padding[1], padding[1], 0.0)
    win = _windows(xp, (kh, kw), stride, dilation, (oh, ow))  # (N, C, kh, kw, oh, ow)
    if n == 0 or length == 0:
        res = np.zeros((groups, og, k), x.dtype)
    elif k < _SMALL_K:
        cols = cache.empty((n, groups * cg, kh, kw, oh, ow), x.dtype)
        np.copyto(cols, win)
        cols_t = cols.reshape(n, groups, k, length).transpose(0, 1, 3, 2)
        res = np.matmul(g.reshape(n, groups, og, length), cols_t).sum(axis=0)  # (G, og, K)
    else:
        # By blocks of samples whose columns (~1 MB) stay in L2 from the copy to the GEMM;
        # the blocks' (G, K, og) products are summed. (K, B·L) @ (B·L, og), then transposed:
        # OpenBLAS runs this orientation ~20% faster than (og, B·L) @ (B·L, K).
        step = max(1, _COLS_BLOCK // (k * length * x.itemsize))
        win_g, g_g = win.reshape(n, groups, cg, kh, kw, oh, ow), g.reshape(n, groups, og, length)
        acc = None
        for lo in range(0, n, step):
            b = min(step, n - lo)
            if lo == 0 or b < step:
                cols = cache.empty((groups, cg, kh, kw, b, oh, ow), x.dtype)
                gt = cache.empty((groups, og, b, length), x.dtype)
            np.copyto(cols, win_g[lo : lo + b].transpose(1, 2, 3, 4, 0, 5, 6))
            np.copyto(gt, g_g[lo : lo + b].transpose(1, 2, 0, 3))
            part = np.matmul(
                cols.reshape(groups, k, b * length), gt.reshape(groups, og, b * length).transpose(0, 2, 1)
            )
            acc = part if acc is None else np.add(acc, part, out=acc)
        res = acc.transpose(0, 2, 1)  # type: ignore[union-attr]
    res = res.reshape(o, cg, kh, kw)
    return res.astype(dtype, order="C") if dtype in HALF else np.ascontiguousarray(res)


def max_pool2d_backward(g: np.ndarray, indices: np.ndarray, in_hw: Pair, accumulate: bool) -> np.ndarray:
    """``g`` written at each window's argmax (flat h·W + w per plane); summed where windows overlap."""
    dtype = g.dtype
    n, c = g.shape[:2]
    plane = in_hw[0] * in_hw[1]
    nc = n * c
    flat = indices.reshape(nc, g.shape[2] * g.shape[3]) + (np.arange(nc, dtype=np.int64) * plane)[:, None]
    if accumulate:
        acc = _F32 if dtype in HALF else dtype
        out = np.zeros(nc * plane, acc)
        np.add.at(out, flat.reshape(-1), g.reshape(-1).astype(acc, copy=False))
        out = out.astype(dtype, copy=False)
    else:  # disjoint windows: every input cell receives at most one gradient
        out = _zeros((nc * plane,), dtype)
        out[flat.reshape(-1)] = g.reshape(-1)
    return out.reshape(n, c, *in_hw)


def avg_pool2d_backward(g: np.ndarray, in_hw: Pair, kernel: Pair, stride: Pair, padding: Pair) -> np.ndarray:
    """Each input cell gets the sum of ``g`` over the windows holding it (``g`` is already
    divided by each window's divisor); padding cells are dropped."""
    dtype = g.dtype
    acc = g.astype(_F32) if dtype in HALF else g
    n, c, oh, ow = g.shape
    cols = np.broadcast_to(acc[:, :, None, None], (n, c, kernel[0], kernel[1], oh, ow))
    res = _col2im(cols, tuple(in_hw), kernel, stride, padding, (1, 1), acc.dtype)  # type: ignore[arg-type]
    return res.astype(dtype) if dtype in HALF else res
