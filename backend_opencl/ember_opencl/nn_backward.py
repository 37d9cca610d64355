"""Backward kernels of conv2d and pooling: deterministic gathers, no atomics.

Conventions as ``ember_cpu.grad_kernels`` (the oracle): NCHW, OIHW weights, (h, w) pairs.

* ``conv2d_input_grad``: one batched matmul ``w^T @ g`` per (sample, group) gives the
  columns ``(N, G, C/G * kh * kw, oh * ow)``; ``ember_col2im`` then runs one work item per
  input cell, summing the columns of the windows that hold it in the CPU's tap order
  (row-major over the kernel), so the sum needs no atomics and is the same on every run.
* ``conv2d_weight_grad``: ``ember_im2col`` copies the windows as ``(G, K, N * oh * ow)``
  rows and ``ember_grad_rows`` the gradient as ``(G, N * oh * ow, O/G)`` rows; one matmul
  per group multiplies them (both operands row-major: the matmul packs them by plain
  copies) into the transposed weight gradient, copied back to OIHW. When that leaves too few output tiles to fill the device, the batch is
  split in chunks (a batch of matmuls) and the partial products summed in a fixed order.
* ``max_pool2d_backward``: disjoint windows (``accumulate`` false) write each gradient at
  its argmax, one work item per output after a zero fill; overlapping windows run one work
  item per plane adding in output order (the order of the CPU's ``np.add.at``).
* ``avg_pool2d_backward``: one work item per input cell summing the (already divided)
  gradients of the windows holding it, in the CPU's tap order.
"""

from __future__ import annotations

from . import elementwise as ew
from . import runtime
from .clarray import CLArray, empty
from .matmul import matmul
from .nn import EMBER_IM2COL_SRC, Pair, _check_float, _dense, _launch
from .reduce import reducer

__all__ = ["avg_pool2d_backward", "conv2d_input_grad", "conv2d_weight_grad", "max_pool2d_backward"]

# The taps of a window dimension that hold input position ``pos`` (``pos = o * s - p + t * d``
# for output position ``o``); the loop body binds ``o``. Stride 1 needs no division.
_TAPS = """
#define EMBER_TAP(t, k, pos, p, s, d, n, o) \\
    for (long t = 0; t < k; t++) { \\
        long o = pos + p - t * d; \\
        if (o < 0) continue; \\
        if (s != 1) { \\
            if (o % s) continue; \\
            o /= s; \\
        } \\
        if (o >= n) continue;
"""

# One work item per input row (b, c, y) walks its W cells: a few divisions per row, not per cell.
EMBER_COL2IM_SRC = (
    _TAPS
    + """
__kernel void ember_col2im(__global T *out, __global const T *cols,
    long C, long H, long W, long OH, long OW, long kh, long kw,
    long sh, long sw, long ph, long pw, long dh, long dw, long n)
{
    long gid = get_global_id(0);
    if (gid >= n) return;
    long y = gid % H, bc = gid / H;
    long P = OH * OW;
    __global const T *col = cols + bc * kh * kw * P;  /* (N, G, CG*kh*kw, P): row (b, c) */
    __global T *row = out + gid * W;
    if (sh == 1 && sw == 1) {  /* each tap adds a contiguous run of a column row, in tap order */
        for (long x = 0; x < W; x++) row[x] = 0;
        for (long i = 0; i < kh; i++) {
            long oy = y + ph - i * dh;
            if (oy < 0 || oy >= OH) continue;
            for (long j = 0; j < kw; j++) {
                long off = pw - j * dw;  /* ox = x + off */
                __global const T *src = col + (i * kw + j) * P + oy * OW + off;
                long x1 = min(W, OW - off);
                for (long x = max(0L, -off); x < x1; x++) row[x] += src[x];
            }
        }
        return;
    }
    for (long x = 0; x < W; x++) {
        T acc = 0;
        EMBER_TAP(i, kh, y, ph, sh, dh, OH, oy)
            EMBER_TAP(j, kw, x, pw, sw, dw, OW, ox)
                acc += col[(i * kw + j) * P + oy * OW + ox];
            }
        }
        row[x] = acc;
    }
}
"""
)

EMBER_AVG_POOL2D_BACKWARD_SRC = (
    _TAPS
    + """
__kernel void ember_avg_pool2d_backward(__global T *out, __global const T *g,
    long H, long W, long OH, long OW, long kh, long kw, long sh, long sw, long ph, long pw, long n)
{
    long gid = get_global_id(0);
    if (gid >= n) return;
    long y = gid % H, plane = gid / H;
    __global const T *gp = g + plane * OH * OW;
    __global T *row = out + gid * W;
    for (long x = 0; x < W; x++) {
        T acc = 0;
        EMBER_TAP(i, kh, y, ph, sh, 1, OH, oy)
            EMBER_TAP(j, kw, x, pw, sw, 1, OW, ox)
                acc += gp[oy * OW + ox];
            }
        }
        row[x] = acc;
    }
}
"""
)

# The output gradient as (G, N * OH * OW, O/G) rows, read through its strides: the right
# operand of the weight-grad matmul. One work item per row (g, b, pos).
EMBER_GRAD_ROWS_SRC = """
__kernel void ember_grad_rows(__global T *out, __global const T *g, long goff,
    long sgn, long sgc, long sgh, long sgw, long N, long OW, long P, long OG, long n)
{
    long gid = get_global_id(0);
    if (gid >= n) return;
    long pos, b, grp, oy, ox;
    if (n <= INT_MAX) {  /* 32-bit division: several times cheaper than 64-bit on CPUs */
        int gi = (int)gid, pi = (int)P, ni = (int)N, wi = (int)OW;
        pos = gi % pi; b = (gi / pi) % ni; grp = gi / (pi * ni); oy = (int)pos / wi; ox = (int)pos % wi;
    } else {
        pos = gid % P; b = (gid / P) % N; grp = gid / (P * N); oy = pos / OW; ox = pos % OW;
    }
    __global const T *gp = g + goff + b * sgn + grp * OG * sgc + oy * sgh + ox * sgw;
    __global T *row = out + gid * OG;
    for (long o = 0; o < OG; o++) row[o] = gp[o * sgc];
}
"""

EMBER_MAX_POOL2D_BACKWARD_SRC = """
__kernel void ember_max_unpool2d(__global T *out, __global const T *g, __global const long *idx,
    long plane, long outs, long n)
{
    long gid = get_global_id(0);
    if (gid >= n) return;
    long i = idx[gid];
    if (i >= 0 && i < plane) out[gid / outs * plane + i] = g[gid];
}

__kernel void ember_max_pool2d_backward_acc(__global T *out, __global const T *g,
    __global const long *idx, long plane, long outs, long n)
{
    long gid = get_global_id(0);
    if (gid >= n) return;
    __global T *op = out + gid * plane;
    __global const T *gp = g + gid * outs;
    __global const long *ip = idx + gid * outs;
    for (long i = 0; i < plane; i++) op[i] = 0;
    for (long o = 0; o < outs; o++) {
        long i = ip[o];
        if (i >= 0 && i < plane) op[i] += gp[o];
    }
}
"""

_sum = reducer("sum")


def conv2d_input_grad(
    g: CLArray, w: CLArray, in_hw: Pair, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> CLArray:
    """Gradient of ``conv2d`` in its input: ``w^T @ g`` per group, then ``ember_col2im``."""
    _check_float("conv2d_input_grad", g)
    n, o, oh, ow = g.shape
    _, cg, kh, kw = w.shape
    h, wd = in_hw
    og, k, p = o // groups, cg * kh * kw, oh * ow
    c = cg * groups
    if n * c * h * wd == 0 or o * p == 0:
        return ew.full((n, c, h, wd), 0.0, g.dtype, g.dev.index)
    wt = _dense(w).view((n, groups, k, og), (0, og * k, 1, k), 0)
    gv = _dense(g).view((n, groups, og, p), (o * p, og * p, p, 1), 0)
    cols = matmul(wt, gv)  # (N, G, K, P), contiguous
    out = empty(g.dev, (n, c, h, wd), g.dtype)
    geo = [c, h, wd, oh, ow, kh, kw, *stride, *padding, *dilation, n * c * h]
    _launch(g, "ember_col2im", EMBER_COL2IM_SRC, [out.buf, cols.buf], geo, [])
    return out


def _chunks(dev: runtime.Device, n: int, tiles: int, k: int) -> int:
    """How many batch chunks the weight-grad matmul splits into: enough output tiles for
    about four per compute unit, each chunk keeping a long reduction (a divisor of ``n``)."""
    units = int(getattr(dev.dev, "max_compute_units", 1) or 1)
    want = max(1, min(n, -(-4 * units // tiles), k // 1024))
    return max(d for d in range(1, want + 1) if n % d == 0)


def conv2d_weight_grad(
    x: CLArray, g: CLArray, w_shape: tuple[int, ...], stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> CLArray:
    """Gradient of ``conv2d`` in its weight: ``g @ im2col(x)^T`` per group (see module doc)."""
    _check_float("conv2d_weight_grad", x)
    n, _, h, wd = x.shape
    o, cg, kh, kw = w_shape
    oh, ow = g.shape[2:]
    og, k, p = o // groups, cg * kh * kw, oh * ow
    if n * p == 0 or o * k == 0:
        return ew.full(tuple(w_shape), 0.0, x.dtype, x.dev.index)
    cols = empty(x.dev, (groups, k, n, p), x.dtype)
    geo = [x.offset, *x.strides, groups, cg, h, wd, oh, ow, kh, kw, *stride, *padding, *dilation]
    _launch(
        x,
        "ember_im2col",
        EMBER_IM2COL_SRC,
        [cols.buf, x.buf],
        geo + [p, k * n * p, n * p, n * groups * k],
        [],
    )
    gt = empty(x.dev, (groups, n * p, og), x.dtype)
    geo = [g.offset, *g.strides, n, ow, p, og, groups * n * p]
    _launch(x, "ember_grad_rows", EMBER_GRAD_ROWS_SRC, [gt.buf, g.buf], geo, [])
    tiles = groups * -(-og // 64) * -(-k // 64)
    s = _chunks(x.dev, n, tiles, n * p)
    ck = n * p // s
    a = cols.view((s, groups, k, ck), (ck, k * n * p, n * p, 1), 0)
    b = gt.view((s, groups, ck, og), (ck * og, n * p * og, og, 1), 0)
    r = matmul(a, b)  # (S, G, K, og): both operands packed by plain copies
    r = r if s == 1 else _sum(r, (0,), False)
    r = ew.clone(r.view((groups, og, k), (k * og, 1, og), 0))
    return r.view(tuple(w_shape), (cg * kh * kw, kh * kw, kw, 1), 0)


def max_pool2d_backward(g: CLArray, indices: CLArray, in_hw: Pair, accumulate: bool) -> CLArray:
    """``g`` placed at each window's argmax (flat ``h * W + w`` per plane), summed if ``accumulate``."""
    _check_float("max_pool2d_backward", g)
    n, c, oh, ow = g.shape
    plane, outs = in_hw[0] * in_hw[1], oh * ow
    if n * c * plane == 0 or outs == 0:
        return ew.full((n, c, *in_hw), 0.0, g.dtype, g.dev.index)
    gd, idx = _dense(g), _dense(indices)
    if accumulate:
        out = empty(g.dev, (n, c, *in_hw), g.dtype)
        name, size = "ember_max_pool2d_backward_acc", n * c
    else:
        out = ew.full((n, c, *in_hw), 0.0, g.dtype, g.dev.index)
        name, size = "ember_max_unpool2d", gd.size
    _launch(g, name, EMBER_MAX_POOL2D_BACKWARD_SRC, [out.buf, gd.buf, idx.buf], [plane, outs, size], [])
    return out


def avg_pool2d_backward(g: CLArray, in_hw: Pair, kernel: Pair, stride: Pair, padding: Pair) -> CLArray:
    """Each input cell gets the sum of ``g`` over the windows holding it (padding dropped)."""
    _check_float("avg_pool2d_backward", g)
    n, c, oh, ow = g.shape
    h, w = in_hw
    if n * c * h * w == 0 or oh * ow == 0:
        return ew.full((n, c, h, w), 0.0, g.dtype, g.dev.index)
    out = empty(g.dev, (n, c, h, w), g.dtype)
    geo = [h, w, oh, ow, *kernel, *stride, *padding, n * c * h]
    _launch(g, "ember_avg_pool2d_backward", EMBER_AVG_POOL2D_BACKWARD_SRC, [out.buf, _dense(g).buf], geo, [])
    return out
