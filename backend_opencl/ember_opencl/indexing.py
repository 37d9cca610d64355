"""gather, scatter (plain or reduce="add") and cat.

Index bounds are checked on the device: a bad index sets the device error flag (and is
never used to address memory), then the host raises IndexError. scatter walks each line
along ``dim`` in order in one work item, so duplicate indices resolve as on the CPU: the
last write wins, and "add" accumulates in index order (NumPy's ``add.at``), which also
keeps it deterministic.
"""

from __future__ import annotations

from string import Template
from typing import Any

import numpy as np
from ember.backends import DTYPES_BY_NAME

from . import elementwise as ew
from . import runtime
from .clarray import CLArray, empty
from .dtypes import ctype, load, scalar_np, store, stype
from .strided import array_params, collapse, index_code, index_type, np_index_type, shape_params
from .views import slice_

__all__ = ["cat", "gather", "scatter"]

INT64 = DTYPES_BY_NAME["int64"]

EMBER_GATHER_EXPR = "(idx < 0 || idx >= lim) ? (bad = 1, (${T})0) : ${LOAD}"

EMBER_SCATTER_SRC = Template("""
__kernel void ember_scatter(${oparams}, ${iparams}, ${sparams}, ${ksh}${IT} n_lines, ${IT} len,
                            ${IT} so, ${IT} si, ${IT} ss, long lim, __global int *flag)
{
    ${IT} gid = (${IT})get_global_id(0);
    if (gid >= n_lines) return;
${kept}    int bad = 0;
    for (${IT} j = 0; j < len; j++) {
        long t = p_idx[i_idx + j * si];
        if (t < 0 || t >= lim) { bad = 1; continue; }
        ${T} v = ${SRC};
        ${UPDATE};
    }
    if (bad) flag[0] = 1;
}
""")


def _bad_index(op: str, dim: int, size: int) -> str:
    return f"{op}: index out of range for dimension {dim} with size {size} (indices must be in [0, {size}))"


def gather(x: CLArray, dim: int, index: CLArray) -> CLArray:
    out = empty(x.dev, index.shape, x.dtype)
    if x.ndim == 0:
        size, sdim, strides = 1, 0, (0,) * index.ndim
    else:
        size, sdim = x.shape[dim], x.strides[dim]
        strides = tuple(0 if d == dim else x.strides[d] for d in range(index.ndim))
    base = x.view(index.shape, strides, x.offset)
    load_raw = load(x.dtype, "p_raw", "i_raw + idx * sdim")
    expr = EMBER_GATHER_EXPR.replace("${T}", ctype(x.dtype)).replace("${LOAD}", load_raw)
    ops = [("idx", INT64, index), ("raw", x.dtype, base), ("lim", INT64, size), ("sdim", INT64, sdim)]
    return ew.run(out, expr, "", ops, _bad_index("gather", dim, size), IndexError)


def scatter(x: CLArray, dim: int, index: CLArray, src: Any, reduce: str | None) -> CLArray:
    out = ew.clone(x)
    if index.size == 0:
        return out
    target = out
    if x.ndim == 0:
        target, dim = out.view((1,), (1,), 0), 0
        index = index.view((index.size,), (index.strides[0] if index.ndim else 1,), index.offset)
        if isinstance(src, CLArray) and src.ndim == 0:
            src = src.view((1,), (1,), src.offset)
    if isinstance(src, CLArray):
        src = src.view(index.shape, src.strides[: index.ndim], src.offset)
    _scatter_lines(target, dim, index, src, reduce == "add")
    return out


def _scatter_lines(out: CLArray, dim: int, index: CLArray, src: Any, add: bool) -> None:
    other = [d for d in range(index.ndim) if d != dim]
    arrays = [out, index] + ([src] if isinstance(src, CLArray) else [])
    picks = [tuple(a.strides[d] for d in other) for a in arrays]
    kshape, kst = collapse(tuple(index.shape[d] for d in other), picks)
    kr, it = len(kshape), index_type(max(out.size, index.size), arrays)
    scalar = not isinstance(src, CLArray)
    key = ("scatter", out.dtype.name, add, scalar, kr, it)
    knl = runtime.kernel(out.dev, key, lambda: _scatter_source(out, add, scalar, kr, it))
    n_lines = index.size // index.shape[dim]
    args = [out.buf, out.offset, *kst[0], index.buf, index.offset, *kst[1]]
    args += [ew.scalar_arg(src, out.dtype)] if scalar else [src.buf, src.offset, *kst[2]]
    ss = 0 if scalar else src.strides[dim]
    args += [*kshape, n_lines, index.shape[dim], out.strides[dim], index.strides[dim], ss, out.shape[dim]]
    runtime.reset_flag(out.dev)
    runtime.launch(out.dev, knl, n_lines, args + [out.dev.flag])
    if runtime.check_flag(out.dev):
        raise IndexError(_bad_index("scatter", dim, out.shape[dim]))


def _scatter_source(out: CLArray, add: bool, scalar: bool, kr: int, it: str) -> runtime.KernelSpec:
    # Half types load as float and round on every store: an add rounds per element, as
    # NumPy's add.at on float16 does.
    dt, t, st = out.dtype, ctype(out.dtype), stype(out.dtype)
    dst = "i_out + t * so"
    update = ew.store_expr(dt, f"{load(dt, 'p_out', dst)} + v") if add else "v"
    names = ["out", "idx"] + ([] if scalar else ["src"])
    src = ew.store_helpers(dt) + EMBER_SCATTER_SRC.substitute(
        IT=it,
        T=t,
        oparams=array_params("out", st, kr, it, const=False),
        iparams=array_params("idx", "long", kr, it),
        sparams=f"{t} s" if scalar else array_params("src", st, kr, it),
        ksh=shape_params(kr, it),
        kept=index_code(names, kr, False, it),
        SRC="s" if scalar else load(dt, "p_src", "i_src + j * ss"),
        UPDATE=store(dt, "p_out", dst, update),
    )
    ti = np_index_type(it)
    arr = [None, ti] + [ti] * kr
    sdt = [scalar_np(dt)] if scalar else arr
    return src, "ember_scatter", arr + arr + sdt + [ti] * (kr + 5) + [np.int64, None]


def cat(arrays: list[CLArray], dim: int) -> CLArray:
    first = arrays[0]
    shape = list(first.shape)
    shape[dim] = sum(a.shape[dim] for a in arrays)
    out = empty(first.dev, tuple(shape), first.dtype)
    start = 0
    for a in arrays:
        stop = start + a.shape[dim]
        key = tuple(slice(start, stop, 1) if d == dim else slice(0, s, 1) for d, s in enumerate(shape))
        ew.assign(slice_(out, key), a)
        start = stop
    return out
