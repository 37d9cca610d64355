"""Elementwise kernels: unary/binary math, comparisons, where, cast, assign, fill, arange.

One generator (``run``) builds every elementwise kernel from ``EMBER_ELEMENTWISE_SRC``: it
walks any strided output and inputs (views, 0-strides from expand, offsets) in place, with
Python scalars passed as kernel arguments. Programs are cached per signature (expression,
types, which operands are scalars, collapsed rank, index width).
"""

from __future__ import annotations

from collections.abc import Callable
from string import Template
from typing import Any

import numpy as np
from ember.backends import DTYPES_BY_NAME, DType, writes_out

from . import runtime
from .clarray import CLArray, empty
from .dtypes import ctype, kind, to_np, utype
from .exprs import BINARY_EXPRS, COMPARE_EXPRS, FLAGGED, HELPERS, UNARY_EXPRS, cast_expr
from .strided import (
    array_args,
    array_dtypes,
    array_params,
    collapse,
    index_code,
    index_type,
    np_index_type,
    shape_params,
)

__all__ = [
    "arange",
    "assign",
    "binary",
    "cast",
    "clone",
    "compare",
    "full",
    "run",
    "scalar_arg",
    "store_expr",
    "unary",
    "where",
]

EMBER_ELEMENTWISE_SRC = Template("""
${helpers}
__kernel void ember_elementwise(${params}${shape}${it} n, __global int *flag)
{
    ${it} lo = (${it})get_global_id(0) * EMBER_CHUNK;
    ${it} hi = min(lo + EMBER_CHUNK, n);
    int bad = 0;
    for (${it} gid = lo; gid < hi; gid++) {
${index}${loads}    p_out[i_out] = ${store};
    }
    if (bad) flag[0] = 1;
}
""")

EMBER_ARANGE_SRC = Template("""
__kernel void ember_arange(__global ${OT} *out, ${ST} start, ${ST} step, long n)
{
    long gid = get_global_id(0);
    if (gid >= n) return;
    ${ST} v = ${VALUE};
    out[gid] = ${store};
}
""")

# An operand: (name in the expression, dtype, CLArray or Python scalar).
Operand = tuple[str, DType, Any]
BOOL = DTYPES_BY_NAME["bool"]
INT64 = DTYPES_BY_NAME["int64"]


def store_expr(out: DType, expr: str) -> str:
    return f"(uchar)(({expr}) != 0)" if out.name == "bool" else f"({ctype(out)})({expr})"


def _source(
    out: CLArray, expr: str, helpers: str, sig: tuple[Any, ...], rank: int, contig: bool, it: str
) -> runtime.KernelSpec:
    params = [
        f"__global {ctype(out.dtype)} *p_out, {it} off_out"
        + "".join(f", {it} st_out_{d}" for d in range(rank))
    ]
    loads, names, dtypes = [], ["out"], array_dtypes(rank, it)
    for name, ct, scalar, np_t in sig:
        if scalar:
            params.append(f"{ct} {name}")
            dtypes.append(np_t)
        else:
            params.append(array_params(name, ct, rank, it))
            if not name.startswith("raw"):  # raw operands are indexed by the expression
                loads.append(f"    {ct} {name} = p_{name}[i_{name}];\n")
            names.append(name)
            dtypes += array_dtypes(rank, it)
    np_it = np_index_type(it)
    dtypes += [np_it] * rank + [np_it, None]
    src = EMBER_ELEMENTWISE_SRC.substitute(
        helpers=helpers,
        params=", ".join(params) + ", ",
        shape=shape_params(rank, it),
        it=it,
        index=index_code(names, rank, contig, it),
        loads="".join(loads),
        store=store_expr(out.dtype, expr),
    )
    return src, "ember_elementwise", dtypes


def scalar_arg(value: Any, dt: DType) -> Any:
    """A Python scalar as the kernel argument for dtype ``dt`` (float to int truncates)."""
    if kind(dt) == "b":
        return int(bool(value))
    if kind(dt) == "i":
        return int(value)
    return float(value)


def run(
    out: CLArray,
    expr: str,
    helpers: str,
    operands: list[Operand],
    flag_msg: str | None = None,
    flag_exc: type[Exception] = RuntimeError,
) -> CLArray:
    """Evaluate ``expr`` over ``out``'s shape and store into ``out`` (which may be a view).

    Operands named ``raw...`` are not loaded: the expression indexes ``p_raw..`` itself
    (gather). If the kernel sets the error flag, ``flag_exc(flag_msg)`` is raised.
    """
    n = out.size
    if n == 0:
        return out
    dev = out.dev
    arrays = [v for _, _, v in operands if isinstance(v, CLArray)]
    shape, strides = collapse(out.shape, [a.strides for a in [out, *arrays]])
    rank = len(shape)
    contig = rank == 1 and all(st[0] == 1 for st in strides)
    it = index_type(n, [out, *arrays])
    sig = tuple((name, ctype(dt), not isinstance(v, CLArray), to_np(dt).type) for name, dt, v in operands)
    key = ("ew", expr, helpers, out.dtype.name, sig, rank, contig, it)
    knl = runtime.kernel(dev, key, lambda: _source(out, expr, helpers, sig, rank, contig, it))
    args = array_args(out, strides[0])
    k = 1
    for _, dt, v in operands:
        if isinstance(v, CLArray):
            args += array_args(v, strides[k])
            k += 1
        else:
            args.append(scalar_arg(v, dt))
    args += shape + [n, dev.flag]
    if flag_msg is not None:
        runtime.reset_flag(dev)
    runtime.launch(dev, knl, (n + runtime.CHUNK - 1) // runtime.CHUNK, args)
    if flag_msg is not None and runtime.check_flag(dev):
        raise flag_exc(flag_msg)
    return out


def _subst(template: str, dt: DType, out: DType | None = None) -> str:
    return Template(template).substitute(T=ctype(dt), U=utype(dt), OT=ctype(out or dt))


def _expr(table: dict[str, dict[str, str]], op: str, dt: DType) -> tuple[str, str, str | None]:
    exprs = table[op]
    k = kind(dt)
    if k not in exprs:
        raise TypeError(f"{op}: backend 'opencl' has no {dt.name} kernel")
    helper = HELPERS.get((op, k), "")
    return _subst(exprs[k], dt), _subst(helper, dt), FLAGGED.get((op, k))


def _like(*values: Any) -> CLArray:
    for v in values:
        if isinstance(v, CLArray):
            return v
    raise TypeError("opencl: an elementwise kernel needs at least one array operand")


def unary(op: str) -> Callable[[CLArray], CLArray]:
    def k(x: CLArray) -> CLArray:
        expr, helper, msg = _expr(UNARY_EXPRS, op, x.dtype)
        return run(empty(x.dev, x.shape, x.dtype), expr, helper, [("a", x.dtype, x)], msg)

    k.__name__ = op
    return k


def binary(op: str, mark: bool = True) -> Callable[..., CLArray]:
    """A binary primitive (marked ``writes_out``) or, with ``mark=False``, a binary composite."""

    def k(a: Any, b: Any, out: CLArray | None = None) -> CLArray:
        x = _like(a, b)
        if op == "pow" and kind(x.dtype) == "i" and not isinstance(b, CLArray) and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        expr, helper, msg = _expr(BINARY_EXPRS, op, x.dtype)
        if out is None:
            out = empty(x.dev, x.shape, x.dtype)
        elif any(st == 0 and n > 1 for st, n in zip(out.strides, out.shape)):
            # Each work item reads and writes its own element, so out may alias an operand
            # exactly; an expanded view would be written by many items at once.
            raise ValueError(f"{op}: out has elements that share memory (an expanded view)")
        return run(out, expr, helper, [("a", x.dtype, a), ("b", x.dtype, b)], msg)

    k.__name__ = op
    return writes_out(k) if mark else k


def compare(op: str) -> Callable[[Any, Any], CLArray]:
    def k(a: Any, b: Any) -> CLArray:
        x = _like(a, b)
        out = empty(x.dev, x.shape, BOOL)
        return run(out, COMPARE_EXPRS[op], "", [("a", x.dtype, a), ("b", x.dtype, b)])

    k.__name__ = op
    return k


def _scalar_dtype(v: Any) -> DType:
    if isinstance(v, bool):
        return BOOL
    return INT64 if isinstance(v, int) else DTYPES_BY_NAME["float32"]


def where(c: Any, a: Any, b: Any) -> CLArray:
    x = _like(c, a, b)
    vals = [v for v in (a, b) if isinstance(v, CLArray)]
    dt = vals[0].dtype if vals else _scalar_dtype(a)
    out = empty(x.dev, x.shape, dt)
    return run(out, "c ? a : b", "", [("c", BOOL, c), ("a", dt, a), ("b", dt, b)])


def cast(x: CLArray, dtype: DType) -> CLArray:
    from .backend import check_dtype

    check_dtype(dtype)
    out = empty(x.dev, x.shape, dtype)
    return run(out, _subst(cast_expr(x.dtype, dtype), x.dtype, dtype), "", [("a", x.dtype, x)])


def clone(x: CLArray) -> CLArray:
    return run(empty(x.dev, x.shape, x.dtype), "a", "", [("a", x.dtype, x)])


def assign(dst: CLArray, src: Any) -> None:
    # Several elements of an expanded view share one location: refuse like NumPy's
    # read-only broadcast (ValueError), which the frontend turns into PyTorch's error.
    if any(st == 0 and s > 1 for s, st in zip(dst.shape, dst.strides)):
        raise ValueError("assign: destination is an expanded view whose elements overlap in memory")
    if not isinstance(src, CLArray):
        run(dst, "a", "", [("a", dst.dtype, src)])
        return
    if src.buf is dst.buf:  # overlapping source: read it fully before writing
        src = clone(src)
    run(dst, _subst(cast_expr(src.dtype, dst.dtype), src.dtype, dst.dtype), "", [("a", src.dtype, src)])


def full(shape: tuple[int, ...], value: Any, dtype: DType, index: int) -> CLArray:
    from .backend import check_dtype

    check_dtype(dtype)
    out = empty(runtime.device(index), tuple(shape), dtype)
    return run(out, "a", "", [("a", dtype, value)])


def arange(start: Any, step: Any, n: int, dtype: DType, index: int) -> CLArray:
    from .backend import check_dtype

    check_dtype(dtype)
    dev = runtime.device(index)
    out = empty(dev, (n,), dtype)
    if n == 0:
        return out
    floating = kind(dtype) == "f"
    st = ("double" if dev.fp64 else "float") if floating else "long"
    np_st = to_np(DTYPES_BY_NAME["float64" if st == "double" else "float32" if floating else "int64"]).type
    key = ("arange", dtype.name, st)

    def make() -> runtime.KernelSpec:
        # Floats: start + step * i as one fused multiply-add, rounded once (PyTorch's rule).
        value = "fma((${ST})gid, step, start)" if floating else "start + (${ST})gid * step"
        src = Template(EMBER_ARANGE_SRC.safe_substitute(VALUE=value)).substitute(
            OT=ctype(dtype), ST=st, store=store_expr(dtype, "v")
        )
        return src, "ember_arange", [None, np_st, np_st, np.int64]

    knl = runtime.kernel(dev, key, make)
    conv = float if floating else int
    runtime.launch(dev, knl, n, [out.buf, conv(start), conv(step), n])
    return out
