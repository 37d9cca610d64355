"""Stable sort along a dim: values and int64 indices, NaN sorting as the largest value.

One work item per line runs a bottom-up merge sort of the line's indices (the keys are
read in place from the strided input), ping-ponging between the index output and a
scratch buffer. Merging takes from the left run unless the right element strictly comes
first, so equal keys keep their original order in both directions (PyTorch's stable
descending sort), and no key is moved until the final gather of the values.
"""

from __future__ import annotations

from string import Template

import numpy as np
from ember.backends import DTYPES_BY_NAME

from . import runtime
from .clarray import CLArray, empty
from .dtypes import ctype, kind
from .scan import Lines

__all__ = ["sort"]

INT64 = DTYPES_BY_NAME["int64"]

EMBER_SORT_SRC = Template("""
#define KEY(i) p_x[i_x + (i) * sx]
#define FIRST(u, v) (${FIRST})

__kernel void ember_sort(${oparams}, ${xparams}, ${ksh}${IT} n_lines, ${IT} len, ${IT} sx, ${IT} so,
                         __global long *p_idx, __global long *p_tmp)
{
    ${IT} gid = (${IT})get_global_id(0);
    if (gid >= n_lines) return;
${kept}    __global long *src = p_idx, *dst = p_tmp;
    for (${IT} j = 0; j < len; j++) src[i_out + j * so] = j;
    for (${IT} w = 1; w < len; w *= 2) {
        for (${IT} lo = 0; lo < len; lo += 2 * w) {
            ${IT} mid = min(lo + w, len), hi = min(lo + 2 * w, len), a = lo, b = mid;
            for (${IT} o = lo; o < hi; o++) {
                long ia = a < mid ? src[i_out + a * so] : 0, ib = b < hi ? src[i_out + b * so] : 0;
                bool right = a >= mid || (b < hi && FIRST(KEY(ib), KEY(ia)));
                dst[i_out + o * so] = right ? ib : ia;
                if (right) b++; else a++;
            }
        }
        __global long *t = src; src = dst; dst = t;
    }
    for (${IT} j = 0; j < len; j++) {
        long i = src[i_out + j * so];
        p_idx[i_out + j * so] = i;
        p_out[i_out + j * so] = KEY(i);
    }
}
""")

# FIRST(u, v): key u strictly sorts before key v.
_FIRST = {
    ("f", False): "(!isnan(u) && isnan(v)) || u < v",
    ("f", True): "(isnan(u) && !isnan(v)) || u > v",
    ("i", False): "u < v",
    ("i", True): "u > v",
}


def sort(x: CLArray, dim: int, descending: bool) -> tuple[CLArray, CLArray]:
    vals = empty(x.dev, x.shape, x.dtype)
    idx = empty(x.dev, x.shape, INT64)
    if x.size == 0:
        return vals, idx
    tmp = empty(x.dev, x.shape, INT64)
    lines = Lines(x, dim)
    kd = "f" if kind(x.dtype) == "f" else "i"
    t = ctype(x.dtype)
    src = EMBER_SORT_SRC.substitute(lines.code(t, t), FIRST=_FIRST[kd, bool(descending)])
    ti = np_index_type_of(lines)
    kr = len(lines.kshape)
    dtypes = [None, ti] + [ti] * kr + [None, ti] + [ti] * kr + [ti] * (kr + 4) + [None, None]
    key = ("sort", x.dtype.name, bool(descending), kr, lines.it)
    knl = runtime.kernel(x.dev, key, lambda: (src, "ember_sort", dtypes))
    args = [vals.buf, 0, *lines.ko, x.buf, x.offset, *lines.kx, *lines.kshape]
    args += [lines.n_lines, lines.len, lines.sx, lines.so, idx.buf, tmp.buf]
    runtime.launch(x.dev, knl, lines.n_lines, args)
    return vals, idx


def np_index_type_of(lines: Lines) -> type:
    return np.int32 if lines.it == "int" else np.int64
