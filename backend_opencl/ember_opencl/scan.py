"""Kernels that walk whole lines along one dim: cumsum, and fused softmax / log_softmax.

One work item per line (every index of the other dims). cumsum adds in sequence like
NumPy's, in the input's float type (so float results match bit for bit) or in wrapping
64-bit integers stored back in the input's dtype (bool: running any), as sum does. softmax makes three passes over its
line (max, sum of exp, write) without temporaries.
"""

from __future__ import annotations

from collections.abc import Callable
from string import Template
from typing import Any

import numpy as np
from ember.backends import DTYPES_BY_NAME, DType

from . import runtime
from .clarray import CLArray, contiguous_strides, empty
from .dtypes import ctype, kind
from .elementwise import store_expr
from .strided import array_params, collapse, index_code, index_type, np_index_type, shape_params

__all__ = ["Lines", "cumsum", "log_softmax", "softmax"]

EMBER_CUMSUM_SRC = Template("""
__kernel void ember_cumsum(${oparams}, ${xparams}, ${ksh}${IT} n_lines, ${IT} len, ${IT} sx, ${IT} so)
{
    ${IT} gid = (${IT})get_global_id(0);
    if (gid >= n_lines) return;
${kept}    ${ACC} acc = 0;
    for (${IT} j = 0; j < len; j++) {
        acc = acc + ${LOADV};
        p_out[i_out + j * so] = ${store};
    }
}
""")

EMBER_SOFTMAX_SRC = Template("""
__kernel void ember_softmax(${oparams}, ${xparams}, ${ksh}${IT} n_lines, ${IT} len, ${IT} sx, ${IT} so)
{
    ${IT} gid = (${IT})get_global_id(0);
    if (gid >= n_lines) return;
${kept}    ${T} mx = -INFINITY;
    for (${IT} j = 0; j < len; j++) {
        ${T} v = p_x[i_x + j * sx];
        mx = (isnan(mx) || mx >= v) ? mx : v;
    }
    ${ACC} s = 0;
    for (${IT} j = 0; j < len; j++) s += (${ACC})exp(p_x[i_x + j * sx] - mx);
    ${T} total = (${T})s, lse = (${T})log(s);
    for (${IT} j = 0; j < len; j++) {
        ${T} v = p_x[i_x + j * sx] - mx;
        p_out[i_out + j * so] = ${RESULT};
    }
}
""")

_RESULTS = {"softmax": "exp(v) / total", "log_softmax": "v - lse"}
INT64 = DTYPES_BY_NAME["int64"]


class Lines:
    """``x`` as lines along ``dim``; the output is contiguous with ``x``'s shape."""

    def __init__(self, x: CLArray, dim: int) -> None:
        ostrides = contiguous_strides(x.shape)
        other = [d for d in range(x.ndim) if d != dim]
        kshape = tuple(x.shape[d] for d in other)
        pick = [tuple(st[d] for d in other) for st in (x.strides, ostrides)]
        self.kshape, (self.kx, self.ko) = collapse(kshape, pick)
        self.n_lines = int(np.prod(kshape, dtype=np.int64))
        self.len = x.shape[dim] if x.ndim else 1
        self.sx = x.strides[dim] if x.ndim else 0
        self.so = ostrides[dim] if x.ndim else 0
        self.it = index_type(x.size, [x])

    def code(self, out_t: str, in_t: str) -> dict[str, str]:
        kr, it = len(self.kshape), self.it
        return {
            "IT": it,
            "oparams": array_params("out", out_t, kr, it, const=False),
            "xparams": array_params("x", in_t, kr, it),
            "ksh": shape_params(kr, it),
            "kept": index_code(["x", "out"], kr, False, it),
        }

    def run(self, x: CLArray, out: CLArray, key: tuple[Any, ...], src: str, name: str) -> CLArray:
        t = np_index_type(self.it)
        kr = len(self.kshape)
        dtypes = [None, t] + [t] * kr + [None, t] + [t] * kr + [t] * (kr + 4)
        knl = runtime.kernel(x.dev, key + (kr, self.it), lambda: (src, name, dtypes))
        args = [out.buf, 0, *self.ko, x.buf, x.offset, *self.kx, *self.kshape]
        runtime.launch(x.dev, knl, self.n_lines, args + [self.n_lines, self.len, self.sx, self.so])
        return out


def cumsum(x: CLArray, dim: int) -> CLArray:
    floating = kind(x.dtype) in "fc"
    odt: DType = x.dtype
    acc = ctype(x.dtype) if floating else "ulong"
    out = empty(x.dev, x.shape, odt)
    if x.size == 0:
        return out
    lines = Lines(x, dim)
    code = lines.code(ctype(odt), ctype(x.dtype))
    load = "p_x[i_x + j * sx]" if kind(x.dtype) == "c" else "(${ACC})p_x[i_x + j * sx]"
    src = Template(EMBER_CUMSUM_SRC.safe_substitute(LOADV=load)).substitute(
        code, ACC=acc, store=store_expr(odt, "acc")
    )
    return lines.run(x, out, ("cumsum", x.dtype.name), src, "ember_cumsum")


def _softmax(op: str) -> Callable[[CLArray, int], CLArray]:
    def k(x: CLArray, dim: int) -> CLArray:
        if kind(x.dtype) != "f":
            raise TypeError(f"{op}: backend 'opencl' has no {x.dtype.name} kernel")
        out = empty(x.dev, x.shape, x.dtype)
        if x.size == 0:
            return out
        lines = Lines(x, dim)
        t = ctype(x.dtype)
        acc = "double" if x.dev.fp64 else t
        src = EMBER_SOFTMAX_SRC.substitute(lines.code(t, t), T=t, ACC=acc, RESULT=_RESULTS[op])
        return lines.run(x, out, (op, x.dtype.name), src, "ember_softmax")

    k.__name__ = op
    return k


softmax = _softmax("softmax")
log_softmax = _softmax("log_softmax")
