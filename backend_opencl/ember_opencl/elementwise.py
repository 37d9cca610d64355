"""Elementwise kernels: unary/binary math, comparisons, where, cast, assign, fill, arange.

One generator (``run``) builds every elementwise kernel from ``EMBER_ELEMENTWISE_SRC``: it
walks any strided output and inputs (views, 0-strides from expand, offsets) in place, with
Python scalars passed as kernel arguments. Programs are cached per signature (expression,
types, which operands are scalars, collapsed rank, index width).

float16 unary and binary kernels compute in native ``half`` where the device lists
``cl_khr_fp16`` (``native_half``, chosen when the program is built: the pragma, ``half``
operands and expression types); elsewhere they load float16 as float and round once on
store. Python scalars stay ``float`` either way (PyTorch's CPU kernels keep a float scalar
for half tensors), so such a kernel computes in float and rounds on store, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from string import Template
from typing import Any

import numpy as np
from ember.backends import DTYPES_BY_NAME, DType, writes_out

from . import runtime
from .cexprs import COMPLEX_BINARY, COMPLEX_COMPARE, COMPLEX_SRC, COMPLEX_UNARY
from .clarray import CLArray, empty
from .dtypes import (
    FP16_PRAGMA,
    HALF_DTYPES,
    ctype,
    half_helpers,
    has_fp16,
    kind,
    load,
    scalar_np,
    store,
    stype,
    utype,
)
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
    "native_half",
    "op_source",
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
${init}    for (${it} gid = lo; gid < hi; gid++) {
${index}${loads}    ${store};
${advance}    }
    if (bad) flag[0] = 1;
}
""")

# Strided operands whose last collapsed dimension is long: a work item takes a run of up to
# EMBER_CHUNK elements of one row (a plain loop the compiler vectorises: the bias add after
# a conv, 2-3x faster on PoCL than carrying counters per element).
EMBER_ELEMENTWISE_ROWS_SRC = Template("""
${helpers}
__kernel void ember_elementwise(${params}${shape}${it} n, __global int *flag)
{
    ${it} w = (${it})get_global_id(0), segs = (${last} + EMBER_CHUNK - 1) / EMBER_CHUNK;
    ${it} row = w / segs, lo = w % segs * EMBER_CHUNK, hi = min(lo + EMBER_CHUNK, ${last});
    if (row >= n / ${last}) return;
    int bad = 0;
${init}    for (${it} t = lo; t < hi; t++) {
${index}${loads}    ${store};
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
    ${store};
}
""")

# Rows at least this long (the last collapsed dimension) run EMBER_ELEMENTWISE_ROWS_SRC
# (measured faster from 16 on; shorter rows carry counters: fewer, longer work items).
ROWS_MIN = 16
# An operand: (name in the expression, dtype, CLArray or Python scalar).
Operand = tuple[str, DType, Any]
BOOL = DTYPES_BY_NAME["bool"]
INT64 = DTYPES_BY_NAME["int64"]
INT16 = DTYPES_BY_NAME["int16"]


def store_expr(out: DType, expr: str) -> str:
    if kind(out) == "c":  # OpenCL casts no vector to another vector type: convert_
        return f"convert_{ctype(out)}({expr})"
    return f"(uchar)(({expr}) != 0)" if out.name == "bool" else f"({ctype(out)})({expr})"


def store_helpers(out: DType) -> str:
    """Helper functions that loading and storing ``out`` need (the half-type conversions)."""
    return half_helpers(out)


def _source(
    out: DType,
    expr: str,
    helpers: str,
    sig: tuple[Any, ...],
    rank: int,
    contig: bool,
    it: str,
    native: bool = False,
    rows: bool = False,
) -> runtime.KernelSpec:
    params = [
        f"__global {stype(out, native)} *p_out, {it} off_out"
        + "".join(f", {it} st_out_{d}" for d in range(rank))
    ]
    loads, names, dtypes = [], ["out"], array_dtypes(rank, it)
    for name, dt, scalar in sig:
        if scalar:
            params.append(f"{ctype(dt)} {name}")
            dtypes.append(scalar_np(dt))
        else:
            params.append(array_params(name, stype(dt, native), rank, it))
            if not name.startswith("raw"):  # raw operands are indexed by the expression
                value = load(dt, "p_" + name, "i_" + name, native)
                loads.append(f"    {ctype(dt, native)} {name} = {value};\n")
            names.append(name)
            dtypes += array_dtypes(rank, it)
    np_it = np_index_type(it)
    dtypes += [np_it] * rank + [np_it, None]
    converted = [d for d in (out, *(dt for _, dt, _ in sig)) if not (native and d.name == "float16")]
    template, last = EMBER_ELEMENTWISE_SRC, f"sh_{rank - 1}"
    if rows:
        init, index, advance = _row_start(names, rank, it), "", ""
        index = "".join(f"    {it} i_{v} = b_{v} + t * st_{v}_{rank - 1};\n" for v in names)
        template = EMBER_ELEMENTWISE_ROWS_SRC
    elif rank >= 2:
        (init, advance), index = _walk(names, rank, it), ""
    else:
        init, index, advance = "", index_code(names, rank, contig, it), ""
    src = template.substitute(
        last=last,
        helpers=(FP16_PRAGMA if native else "") + half_helpers(*converted) + helpers,
        params=", ".join(params) + ", ",
        shape=shape_params(rank, it),
        it=it,
        init=init,
        index=index,
        advance=advance,
        loads="".join(loads),
        store=store(out, "p_out", "i_out", store_expr(out, expr), native),
    )
    return src, "ember_elementwise", dtypes


def _row_start(names: list[str], rank: int, it: str) -> str:
    """``b_<name>``: the index of the first element of row ``row`` (all dims but the last)."""
    lines = [f"    {it} ix_r = row, ix_c;\n"] + [f"    {it} b_{v} = off_{v};\n" for v in names]
    for d in range(rank - 2, 0, -1):
        lines.append(f"    ix_c = ix_r % sh_{d}; ix_r /= sh_{d};\n")
        lines += [f"    b_{v} += ix_c * st_{v}_{d};\n" for v in names]
    lines += [f"    b_{v} += ix_r * st_{v}_0;\n" for v in names]
    return "".join(lines)


def _walk(names: list[str], rank: int, it: str) -> tuple[str, str]:
    """(code before a chunk's loop, code ending each iteration) for rank >= 2: the first
    element's index takes the divisions, then a digit counter per dimension is carried by
    hand, so a strided chunk pays no div/mod per element (most of a broadcast bias add's
    time on PoCL)."""
    init = [f"    {it} ix_r = lo;\n"] + [f"    {it} i_{v} = off_{v};\n" for v in names]
    for d in range(rank - 1, 0, -1):
        init.append(f"    {it} ix_d{d} = ix_r % sh_{d}; ix_r /= sh_{d};\n")
        init += [f"    i_{v} += ix_d{d} * st_{v}_{d};\n" for v in names]
    init += [f"    i_{v} += ix_r * st_{v}_0;\n" for v in names]
    last = rank - 1
    step = [f"        i_{v} += st_{v}_{last};\n" for v in names]
    for d in range(last, 0, -1):
        pad = "    " * (2 + last - d)
        step.append(f"{pad}if (++ix_d{d} == sh_{d}) {{\n{pad}    ix_d{d} = 0;\n")
        step += [f"{pad}    i_{v} += st_{v}_{d - 1} - sh_{d} * st_{v}_{d};\n" for v in names]
    step += ["    " * (2 + last - d) + "}\n" for d in range(1, last + 1)]
    return "".join(init), "".join(step)


def native_half(extensions: str, dt: DType) -> bool:
    """Whether a unary/binary kernel over float16 ``dt`` computes in native ``half`` on a
    device with this extension list (cl_khr_fp16), rather than in float."""
    return dt.name == "float16" and has_fp16(extensions)


_FP16_DEVICES: dict[int, bool] = {}


def _native(dev: runtime.Device, dt: DType) -> bool:
    if dt.name != "float16":
        return False
    found = _FP16_DEVICES.get(id(dev))
    if found is None:
        found = _FP16_DEVICES[id(dev)] = has_fp16(dev.dev.extensions)
    return found


def op_source(op: str, dt: DType, extensions: str, binary_op: bool = False) -> str:
    """The OpenCL C source of the contiguous unary (or binary) kernel ``op`` over ``dt`` on a
    device with ``extensions``: what ``unary``/``binary`` would build there."""
    native = native_half(extensions, dt)
    table = BINARY_EXPRS if binary_op else UNARY_EXPRS
    expr, helper, _ = _expr(table, op, dt, native)
    sig = tuple((n, dt, False) for n in (("a", "b") if binary_op else ("a",)))
    return _source(dt, expr, helper, sig, 1, True, "int", native)[0]


def scalar_arg(value: Any, dt: DType) -> Any:
    """A Python scalar as the kernel argument for dtype ``dt`` (float to int truncates)."""
    if kind(dt) == "b":
        return int(bool(value))
    if kind(dt) == "i":
        return int(value)
    if kind(dt) == "c":
        return complex(value)
    return float(value)


def run(
    out: CLArray,
    expr: str,
    helpers: str,
    operands: list[Operand],
    flag_msg: str | None = None,
    flag_exc: type[Exception] = RuntimeError,
    native: bool = False,
) -> CLArray:
    """Evaluate ``expr`` over ``out``'s shape and store into ``out`` (which may be a view).

    Operands named ``raw...`` are not loaded: the expression indexes ``p_raw..`` itself
    (gather). If the kernel sets the error flag, ``flag_exc(flag_msg)`` is raised.
    ``native``: float16 operands are ``half`` in the expression (``native_half``).
    """
    n = out.size
    if n == 0:
        return out
    dev = out.dev
    arrays = [v for _, _, v in operands if isinstance(v, CLArray)]
    shape, strides = collapse(out.shape, [a.strides for a in [out, *arrays]])
    rank = len(shape)
    contig = rank == 1 and all(st[0] == 1 for st in strides)
    rows = rank >= 2 and shape[-1] >= ROWS_MIN
    it = index_type(n, [out, *arrays])
    sig = tuple((name, dt, not isinstance(v, CLArray)) for name, dt, v in operands)
    key = (
        "ew",
        expr,
        helpers,
        out.dtype.name,
        tuple((a, d.name, c) for a, d, c in sig),
        rank,
        contig,
        it,
        native,
        rows,
    )
    knl = runtime.kernel(
        dev, key, lambda: _source(out.dtype, expr, helpers, sig, rank, contig, it, native, rows)
    )
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
    chunks = n // shape[-1] * -(-shape[-1] // runtime.CHUNK) if rows else -(-n // runtime.CHUNK)
    runtime.launch(dev, knl, chunks, args)
    if flag_msg is not None and runtime.check_flag(dev):
        raise flag_exc(flag_msg)
    return out


def _subst(template: str, dt: DType, out: DType | None = None, native: bool = False) -> str:
    real = real_of(dt)
    part = ctype(real_of(out or dt), native)
    return Template(template).substitute(
        T=ctype(dt, native), U=utype(dt), OT=ctype(out or dt, native), R=ctype(real, native), OR=part
    )


def real_of(dt: DType) -> DType:
    """The dtype of a complex dtype's parts (identity for the others)."""
    return DTYPES_BY_NAME[_REAL.get(dt.name, dt.name)]


_REAL = {"complex64": "float32", "complex128": "float64"}
_COMPLEX_TABLES = {id(UNARY_EXPRS): COMPLEX_UNARY, id(BINARY_EXPRS): COMPLEX_BINARY}


def _cexpr(table: dict[str, dict[str, str]], op: str, dt: DType) -> tuple[str, str, str | None]:
    expr = _COMPLEX_TABLES[id(table)].get(op)
    if expr is None:
        raise TypeError(f"{op}: backend 'opencl' has no {dt.name} kernel")
    helper = _subst(COMPLEX_SRC, dt) if "ember_c" in expr else ""
    return expr, helper, None


def _expr(
    table: dict[str, dict[str, str]], op: str, dt: DType, native: bool = False
) -> tuple[str, str, str | None]:
    k = kind(dt)
    if k == "c":
        return _cexpr(table, op, dt)
    exprs = table[op]
    if k not in exprs:
        raise TypeError(f"{op}: backend 'opencl' has no {dt.name} kernel")
    helper = HELPERS.get((op, k), "")
    return _subst(exprs[k], dt, native=native), _subst(helper, dt, native=native), FLAGGED.get((op, k))


def _like(*values: Any) -> CLArray:
    for v in values:
        if isinstance(v, CLArray):
            return v
    raise TypeError("opencl: an elementwise kernel needs at least one array operand")


def unary(op: str) -> Callable[[CLArray], CLArray]:
    def k(x: CLArray) -> CLArray:
        native = _native(x.dev, x.dtype)
        expr, helper, msg = _expr(UNARY_EXPRS, op, x.dtype, native)
        odt = real_of(x.dtype) if op == "abs" else x.dtype  # |complex| is real
        return run(empty(x.dev, x.shape, odt), expr, helper, [("a", x.dtype, x)], msg, native=native)

    k.__name__ = op
    return k


def binary(op: str, mark: bool = True) -> Callable[..., CLArray]:
    """A binary primitive (marked ``writes_out``) or, with ``mark=False``, a binary composite."""

    def k(a: Any, b: Any, out: CLArray | None = None) -> CLArray:
        x = _like(a, b)
        if op == "pow" and kind(x.dtype) == "i" and not isinstance(b, CLArray) and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        native = _native(x.dev, x.dtype)
        expr, helper, msg = _expr(BINARY_EXPRS, op, x.dtype, native)
        if out is None:
            out = empty(x.dev, x.shape, x.dtype)
        elif any(st == 0 and n > 1 for st, n in zip(out.strides, out.shape)):
            # Each work item reads and writes its own element, so out may alias an operand
            # exactly; an expanded view would be written by many items at once.
            raise ValueError(f"{op}: out has elements that share memory (an expanded view)")
        return run(out, expr, helper, [("a", x.dtype, a), ("b", x.dtype, b)], msg, native=native)

    k.__name__ = op
    return writes_out(k) if mark else k


def compare(op: str) -> Callable[[Any, Any], CLArray]:
    def k(a: Any, b: Any) -> CLArray:
        x = _like(a, b)
        out = empty(x.dev, x.shape, BOOL)
        if kind(x.dtype) == "c" and op not in COMPLEX_COMPARE:
            raise TypeError(f"{op}: backend 'opencl' has no {x.dtype.name} kernel (complex has no order)")
        expr = COMPLEX_COMPARE[op] if kind(x.dtype) == "c" else COMPARE_EXPRS[op]
        return run(out, expr, "", [("a", x.dtype, a), ("b", x.dtype, b)])

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


def _bits(x: CLArray) -> CLArray:
    """A half-type array as int16 (its bits), so copies keep every NaN payload exactly."""
    if x.dtype not in HALF_DTYPES:
        return x
    return CLArray(x.buf, x.nelem, x.shape, x.strides, x.offset, INT16, x.dev)


def cast(x: CLArray, dtype: DType) -> CLArray:
    from .backend import check_dtype

    check_dtype(dtype)
    if dtype == x.dtype:
        return clone(x)
    out = empty(x.dev, x.shape, dtype)
    return run(out, _subst(cast_expr(x.dtype, dtype), x.dtype, dtype), "", [("a", x.dtype, x)])


@writes_out
def add_scaled(x: CLArray, y: CLArray, alpha: float, out: CLArray | None = None) -> CLArray:
    """``x + alpha * y`` rounded once (OpenCL's ``fma`` is exact before its one rounding), as
    PyTorch's add with alpha; float32/float64 operands of one shape and dtype."""
    if x.dtype.name not in ("float32", "float64") or y.dtype != x.dtype:
        raise TypeError(
            f"add_scaled: float32 or float64 operands of one dtype, got {x.dtype.name}, {y.dtype.name}"
        )
    if out is None:
        out = empty(x.dev, x.shape, x.dtype)
    elif any(st == 0 and n > 1 for st, n in zip(out.strides, out.shape)):
        raise ValueError("add_scaled: out has elements that share memory (an expanded view)")
    return run(out, "fma(s, b, a)", "", [("a", x.dtype, x), ("b", x.dtype, y), ("s", x.dtype, alpha)])


def clone(x: CLArray) -> CLArray:
    out = empty(x.dev, x.shape, x.dtype)
    b = _bits(x)
    run(_bits(out), "a", "", [("a", b.dtype, b)])
    return out


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
    if src.dtype == dst.dtype:
        run(_bits(dst), "a", "", [("a", _bits(src).dtype, _bits(src))])
        return
    run(dst, _subst(cast_expr(src.dtype, dst.dtype), src.dtype, dst.dtype), "", [("a", src.dtype, src)])


def full(shape: tuple[int, ...], value: Any, dtype: DType, index: int) -> CLArray:
    from .backend import check_dtype

    check_dtype(dtype)
    out = empty(runtime.device(index), tuple(shape), dtype)
    return run(out, "a", "", [("a", dtype, value)])


def arange(start: Any, step: Any, n: int, dtype: DType, index: int) -> CLArray:
    from .backend import check_dtype

    check_dtype(dtype)
    if kind(dtype) == "c":  # PyTorch has no complex arange either
        raise TypeError(f"arange: backend 'opencl' has no {dtype.name} kernel")
    dev = runtime.device(index)
    out = empty(dev, (n,), dtype)
    if n == 0:
        return out
    floating = kind(dtype) == "f"
    st = ("double" if dev.fp64 else "float") if floating else "long"
    np_st = {"double": np.float64, "float": np.float32, "long": np.int64}[st]
    key = ("arange", dtype.name, st)

    def make() -> runtime.KernelSpec:
        # Floats: start + step * i as one fused multiply-add, rounded once (PyTorch's rule).
        value = "fma((${ST})gid, step, start)" if floating else "start + (${ST})gid * step"
        src = Template(EMBER_ARANGE_SRC.safe_substitute(VALUE=value)).substitute(
            OT=stype(dtype), ST=st, store=store(dtype, "out", "gid", store_expr(dtype, "v"))
        )
        src = store_helpers(dtype) + src
        return src, "ember_arange", [None, np_st, np_st, np.int64]

    knl = runtime.kernel(dev, key, make)
    conv = float if floating else int
    runtime.launch(dev, knl, n, [out.buf, conv(start), conv(step), n])
    return out
