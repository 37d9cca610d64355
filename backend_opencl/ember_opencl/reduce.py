"""Reductions over any set of axes: sum, prod, amax, amin (fused), argmax, argmin (fused).

The input is viewed as (kept dims) x (reduced dims); each work item folds one output over
its reduced elements, walking the strided input in place. When there are few outputs and
many elements (a full sum), the reduced range is split into parts reduced in parallel,
then a second pass folds the parts. Results keep the input dtype (ops.py; the frontend
casts first where PyTorch widens): integers accumulate in wrapping 64 bits, bool sums and
products become any/all, float32 accumulates in double where the device has fp64.
"""

from __future__ import annotations

from collections.abc import Callable
from string import Template
from typing import Any

import numpy as np
from ember.backends import DTYPES_BY_NAME, DType

from . import runtime
from .cexprs import COMPLEX_SRC
from .clarray import CLArray, empty
from .dtypes import ctype, kind
from .elementwise import store_expr
from .strided import (
    array_params,
    collapse,
    index_code,
    index_type,
    np_index_type,
    shape_params,
    stride_params,
)

__all__ = ["Plan", "argreducer", "reducer"]

EMBER_REDUCE_SRC = Template("""
__kernel void ember_reduce(__global ${OT} *p_out, ${xparams}, ${rst}${ksh}${rsh}${IT} n_out, ${IT} n_red,
                           ${IT} parts, ${IT} chunk)
{
    ${IT} gid = (${IT})get_global_id(0);
    if (gid >= n_out * parts) return;
    ${IT} part = gid % parts, out_i = gid / parts;
${kept}    ${ACC} acc = ${INIT};
    ${IT} hi = min(n_red, (part + 1) * chunk);
    for (${IT} j = part * chunk; j < hi; j++) {
${red}        ${ACC} v = ${LOADV};
        acc = ${COMBINE};
    }
    p_out[gid] = ${store};
}
""")

EMBER_ARGREDUCE_SRC = Template("""
__kernel void ember_argreduce(__global long *p_out, ${xparams}, ${rst}${ksh}${rsh}${IT} n_out, ${IT} n_red)
{
    ${IT} gid = (${IT})get_global_id(0);
    if (gid >= n_out) return;
    ${IT} out_i = gid;
${kept}    ${T} best = p_x[i_x];
    long bi = 0;
    for (${IT} j = 1; j < n_red; j++) {
${red}        ${T} v = p_x[i_x + iR_x];
        if (${BETTER}) { best = v; bi = j; }
    }
    p_out[gid] = bi;
}
""")

INT64 = DTYPES_BY_NAME["int64"]
_INT_LIMITS = {d: (int(np.iinfo(d).min), int(np.iinfo(d).max)) for d in ("int8", "int16", "int32", "int64")}
_INT_LIMITS.update({"uint8": (0, 255), "bool": (0, 1)})

# op -> kind -> (combine expression of acc and v, init)
_COMBINE: dict[str, dict[str, tuple[str, str]]] = {
    "sum": {"f": ("acc + v", "0"), "i": ("acc + v", "0"), "b": ("acc + v", "0")},
    "prod": {"f": ("acc * v", "1"), "i": ("acc * v", "1"), "b": ("acc * v", "1")},
    "amax": {"f": ("(isnan(acc) || acc >= v) ? acc : v", "-INFINITY"), "i": ("acc > v ? acc : v", "MIN")},
    "amin": {"f": ("(isnan(acc) || acc <= v) ? acc : v", "INFINITY"), "i": ("acc < v ? acc : v", "MAX")},
}
_BETTER = {
    "argmax": {"f": "!isnan(best) && (isnan(v) || v > best)", "i": "v > best"},
    "argmin": {"f": "!isnan(best) && (isnan(v) || v < best)", "i": "v < best"},
}


class Plan:
    """x viewed as (kept dims) x (reduced dims), both collapsed; outputs are contiguous."""

    def __init__(self, x: CLArray, dims: tuple[int, ...]) -> None:
        kept = [d for d in range(x.ndim) if d not in dims]
        kshape = tuple(x.shape[d] for d in kept)
        self.kshape, (self.kst,) = collapse(kshape, [tuple(x.strides[d] for d in kept)])
        rshape = tuple(x.shape[d] for d in dims)
        self.rshape, (self.rst,) = collapse(rshape, [tuple(x.strides[d] for d in dims)])
        self.m = int(np.prod(kshape, dtype=np.int64))
        self.r = int(np.prod(rshape, dtype=np.int64))
        self.it = index_type(max(self.m, self.r), [x])
        self.rcontig = len(self.rshape) == 1 and self.rst[0] == 1

    def sig(self) -> tuple[Any, ...]:
        return (len(self.kshape), len(self.rshape), self.rcontig, self.it)

    def code(self) -> dict[str, str]:
        it, kr, rr = self.it, len(self.kshape), len(self.rshape)
        return {
            "IT": it,
            "xparams": array_params("x", "${T}", kr, it),
            "rst": stride_params("x", rr, it, "R"),
            "ksh": shape_params(kr, it),
            "rsh": shape_params(rr, it, "R"),
            "kept": index_code(["x"], kr, False, it, lin="out_i"),
            "red": index_code(["x"], rr, self.rcontig, it, lin="j", tag="R"),
        }

    def args(self, x: CLArray) -> list[Any]:
        return [x.buf, x.offset, *self.kst, *self.rst, *self.kshape, *self.rshape]

    def arg_dtypes(self) -> list[Any]:
        t = np_index_type(self.it)
        n = 1 + len(self.kst) + len(self.rst) + len(self.kshape) + len(self.rshape)
        return [None] + [t] * n


def out_shape(x: CLArray, dims: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if d in dims else s for d, s in enumerate(x.shape))
    return tuple(s for d, s in enumerate(x.shape) if d not in dims)


def _acc_type(op: str, x: CLArray) -> tuple[str, DType]:
    """(C accumulator type, output dtype) of reduction ``op`` on ``x``."""
    k = kind(x.dtype)
    if k == "c":  # complex64 sums in double2 where the device has fp64
        return ("double2" if x.dev.fp64 else ctype(x.dtype)), x.dtype
    if op in ("sum", "prod"):
        if k != "f":  # wrapping 64-bit sums, stored back in the input dtype (bool: any/all)
            return "ulong", x.dtype
        return ("double" if x.dev.fp64 else "float"), x.dtype
    return ctype(x.dtype), x.dtype


def _init(op: str, dt: DType) -> str:
    init = _COMBINE[op]["f" if kind(dt) == "f" else "i"][1]
    lo, hi = _INT_LIMITS.get(dt.name, (0, 0))
    literal = {"MIN": lo, "MAX": hi}.get(init)
    if literal is None:
        return init
    return f"({ctype(dt)})({literal + 1}L - 1)" if literal < 0 else f"({ctype(dt)}){literal}UL"


def _fold(x: CLArray, plan: Plan, op: str, acc: str, out: CLArray, parts: int) -> None:
    k = "f" if kind(x.dtype) == "f" else "i"
    combine = _COMBINE[op][k][0]
    if kind(x.dtype) == "b" and op in ("amax", "amin"):
        combine = "acc | v" if op == "amax" else "acc & v"
    init = _init(op, x.dtype) if op in ("amax", "amin") else _COMBINE[op][k][1]
    load, helper = "(${ACC})p_x[i_x + iR_x]", ""
    if kind(x.dtype) == "c":
        if op not in ("sum", "prod"):
            raise TypeError(f"{op}: backend 'opencl' has no {x.dtype.name} kernel (complex has no order)")
        load, init = "convert_${ACC}(p_x[i_x + iR_x])", f"({acc})({init}, 0)"
        if op == "prod":
            combine = "ember_cmul(acc, v)"
            helper = Template(COMPLEX_SRC).substitute(T=acc, R=acc[:-1])
    key = ("reduce", op, x.dtype.name, acc, out.dtype.name, plan.sig())

    def make() -> runtime.KernelSpec:
        code = plan.code()
        src = Template(EMBER_REDUCE_SRC.safe_substitute(code, LOADV=load)).substitute(
            T=ctype(x.dtype),
            OT=ctype(out.dtype),
            ACC=acc,
            INIT=init,
            COMBINE=combine,
            store=store_expr(out.dtype, "acc"),
        )
        src = helper + src
        t = np_index_type(plan.it)
        return src, "ember_reduce", [None] + plan.arg_dtypes() + [t] * 4

    knl = runtime.kernel(x.dev, key, make)
    chunk = -(-plan.r // parts)
    args = [out.buf, *plan.args(x), plan.m, plan.r, parts, chunk]
    runtime.launch(x.dev, knl, plan.m * parts, args)


def _parts(m: int, r: int) -> int:
    if m >= 64 or r < 8192:
        return 1
    return min(-(-r // 2048), max(1, 256 // m))


def reducer(op: str) -> Callable[[CLArray, tuple[int, ...], bool], CLArray]:
    def k(x: CLArray, dims: tuple[int, ...], keepdim: bool) -> CLArray:
        acc, odt = _acc_type(op, x)
        plan = Plan(x, tuple(dims))
        out = empty(x.dev, out_shape(x, tuple(dims), keepdim), odt)
        if plan.m == 0:
            return out
        if plan.r == 0 and op in ("amax", "amin"):
            name = "maximum" if op == "amax" else "minimum"
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        parts = _parts(plan.m, plan.r)
        if parts == 1:
            _fold(x, plan, op, acc, out, 1)
            return out
        acc_dt = x.dtype if op in ("amax", "amin") else _acc_dtype(acc)
        tmp = empty(x.dev, (plan.m, parts), acc_dt)
        _fold(x, plan, op, acc, tmp, parts)
        _fold(tmp, Plan(tmp, (1,)), op, acc, out, 1)
        return out

    k.__name__ = op
    return k


def _acc_dtype(acc: str) -> DType:
    names = {"ulong": "int64", "double": "float64", "float": "float32", "double2": "complex128"}
    return DTYPES_BY_NAME[names.get(acc, "complex64")]


def argreducer(op: str) -> Callable[[CLArray, int | None, bool], CLArray]:
    def k(x: CLArray, dim: int | None, keepdim: bool) -> CLArray:
        dims = tuple(range(x.ndim)) if dim is None else (dim,)
        shape = out_shape(x, dims, keepdim)
        plan = Plan(x, dims)
        out = empty(x.dev, shape, INT64)
        if plan.r == 0:
            raise ValueError(f"attempt to get {op} of an empty sequence")
        if plan.m == 0:
            return out
        kd = "f" if kind(x.dtype) == "f" else "i"
        key = ("argreduce", op, x.dtype.name, plan.sig())

        def make() -> runtime.KernelSpec:
            src = Template(EMBER_ARGREDUCE_SRC.safe_substitute(plan.code())).substitute(
                T=ctype(x.dtype), BETTER=_BETTER[op][kd]
            )
            return src, "ember_argreduce", [None] + plan.arg_dtypes() + [np_index_type(plan.it)] * 2

        knl = runtime.kernel(x.dev, key, make)
        runtime.launch(x.dev, knl, plan.m, [out.buf, *plan.args(x), plan.m, plan.r])
        return out

    k.__name__ = op
    return k
