"""The kernel of one fused chain (fuse.py): generated from the ops' own expression templates.

Each op of the chain is one block of a generated helper function, built from the template the
eager kernel uses (``elementwise._expr``, ``cast_expr``) and stored and reloaded through the
dtype's ``store``/``load``, so every intermediate rounds exactly as eager's stored array does
(float16, bfloat16, bool); with ``FP_CONTRACT OFF`` (runtime.py) results are eager's, bit for bit.
The kernel is one ``elementwise.run``: it walks strided and expanded operands, and caches the
program per (expression, dtypes, rank) as every elementwise kernel is cached (runtime.kernel,
progcache). Locals are named by position, so chains of one form share one program. Values the
chain also exports (used after it) are written through ``raw`` operands of ``run`` (indexed
like the others, not loaded), exactly as eager's ``store`` would write them.

What the kernel cannot do as eager does (a kernel that may raise: integer floordiv, a negative
integer power; operands of mixed shapes; too many kernel arguments) runs call by call instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ember.backends import DType
from ember.backends.graph import KernelCall, Value
from ember.backends.ops import COMPARE, UNARY

from .cexprs import COMPLEX_COMPARE
from .clarray import CLArray, empty
from .dtypes import HALF_DTYPES, ctype, half_helpers, kind, load, store, stype
from .elementwise import BOOL, _expr, _native, _scalar_dtype, _subst, real_of, run, store_expr
from .exprs import BINARY_EXPRS, COMPARE_EXPRS, UNARY_EXPRS, cast_expr

__all__ = ["UNARY_OPS", "FusedKernel"]

UNARY_OPS = frozenset(UNARY) | {"ceil", "trunc", "round", "sign", "sigmoid", "log1p", "expm1"}
_COMPARE = frozenset(COMPARE)
_FUNC = re.compile(r"static\s+\w+\s+(\w+)\s*\(")


def _scalar_key(x: Any) -> tuple[type, str]:
    return type(x), repr(x)  # repr: -0.0 and 0.0 differ


@dataclass
class _Program:
    """One chain's kernel for one set of input dtypes: ``run``'s arguments, ready."""

    expr: str
    helpers: str
    out: DType
    native: bool
    # name, dtype, where the argument comes from: ("in", j) input j, ("ex", j) export j, ("k", scalar)
    operands: list[tuple[str, DType, str, Any]]
    exports: list[DType]


class _Eager(Exception):
    """The chain runs call by call (what the generated kernel cannot reproduce)."""


class FusedKernel:
    """The callable of a fused chain: takes the chain's input arrays, returns its result (and
    the values it exports, as a tuple, when there are any)."""

    def __init__(self, chain: list[KernelCall], inputs: list[Value], exports: list[Value]) -> None:
        self.chain = chain
        self.inputs = inputs
        self.exports = exports
        self._programs: dict[tuple[Any, ...], _Program | None] = {}
        self.__name__ = "fused_" + "_".join(c.op for c in chain[:8]) + ("_etc" if len(chain) > 8 else "")

    def __repr__(self) -> str:
        return f"<opencl fused kernel: {' '.join(c.op for c in self.chain)}>"

    def __call__(self, *arrays: CLArray) -> Any:
        first = arrays[0]
        dev, shape = first.dev, first.shape
        if any(a.shape != shape or a.dev is not dev for a in arrays):
            return self.eager(arrays)
        key = (*(a.dtype for a in arrays), len(shape), dev.index)
        try:
            prog = self._programs[key]
        except KeyError:
            prog = self._programs[key] = self._program(arrays)
        if prog is None:
            return self.eager(arrays)
        made = [empty(dev, shape, d) for d in prog.exports]
        sources = {"in": arrays, "ex": made}
        operands = [(n, d, sources[w][j] if w != "k" else j) for n, d, w, j in prog.operands]
        out = run(empty(dev, shape, prog.out), prog.expr, prog.helpers, operands, native=prog.native)
        return (out, *made) if made else out

    def eager(self, arrays: tuple[CLArray, ...] | list[CLArray]) -> Any:
        """The chain call by call with the backend's own kernels (same results, more launches)."""
        from .kernels import KERNELS

        env: dict[int, Any] = {v.n: a for v, a in zip(self.inputs, arrays)}
        for c in self.chain:
            args = [env[a.n] if isinstance(a, Value) else a for a in c.args]
            env[c.out.n] = KERNELS[c.op](*args)
        out = env[self.chain[-1].out.n]
        return (out, *(env[v.n] for v in self.exports)) if self.exports else out

    def _program(self, arrays: tuple[CLArray, ...]) -> _Program | None:
        try:
            return _build(self.chain, self.inputs, self.exports, arrays)
        except _Eager:
            return None
        except TypeError:  # an op with no kernel for this dtype: eager raises its error
            return None


def _build(
    chain: list[KernelCall], inputs: list[Value], exports: list[Value], arrays: tuple[CLArray, ...]
) -> _Program:
    dev = arrays[0].dev
    dtypes: dict[int, DType] = {v.n: a.dtype for v, a in zip(inputs, arrays)}
    # Native half when the chain holds float16 on a device with cl_khr_fp16 (elementwise.py).
    # (float16 enters a chain through its inputs or a cast)
    casts = [c.args[1] for c in chain if c.op == "cast"]
    native = any(_native(dev, d) for d in (*dtypes.values(), *casts))
    names: dict[int, str] = {v.n: f"x{j}" for j, v in enumerate(inputs)}
    operands: list[tuple[str, DType, str, Any]] = [(f"x{j}", a.dtype, "in", j) for j, a in enumerate(arrays)]
    exported = {v.n: j for j, v in enumerate(exports)}
    export_dts: list[DType] = []
    pointers: list[str] = []  # the helper's output pointer parameters
    consts: dict[tuple[Any, ...], str] = {}
    helpers: list[str] = []
    blocks: list[str] = []
    for t, c in enumerate(chain):  # locals t0, t1, ...: one program serves every chain of this form
        odt, expr, helper, operand_dts = _op(c, dtypes, dev)
        if helper and helper not in helpers:
            helpers.append(helper)
        decls = []
        for local, a, adt in zip("cab" if c.op == "where" else "ab", c.args, operand_dts):
            if isinstance(a, Value):
                if dtypes[a.n] is not adt:
                    raise _Eager  # an operand of another dtype: not the convention's call
                decls.append(f"{ctype(adt, native)} {local} = {names[a.n]};")
            else:  # a Python scalar: a kernel argument of the operand's dtype, as eager's
                k = (*_scalar_key(a), adt)
                name = consts.get(k)
                if name is None:
                    name = consts[k] = f"k{len(consts)}"
                    operands.append((name, adt, "k", a))
                decls.append(f"{ctype(adt)} {local} = {name};")
        dtypes[c.out.n], names[c.out.n] = odt, f"t{t}"
        put = store(odt, "m", "0", store_expr(odt, expr), native)
        j = exported.get(c.out.n)
        if j is not None:  # the stored bits, as eager's array holds them
            put += f"; *o{j} = m[0]"
            export_dts.append(odt)
            pointers.append(f"__global {stype(odt, native)} *o{j}")
        blocks.append(
            f"    {ctype(odt, native)} t{t};\n    {{\n        {' '.join(decls)}\n"
            f"        {stype(odt, native)} m[1];\n        {put};\n"
            f"        t{t} = {load(odt, 'm', '0', native)};\n    }}\n"
        )
    _check_helpers(helpers)
    out = dtypes[chain[-1].out.n]
    params = ", ".join(
        [f"{ctype(dt, native)} {name}" if w == "in" else f"{ctype(dt)} {name}" for name, dt, w, _ in operands]
        + pointers
    )
    func = (
        f"static {ctype(out, native)} ember_fused({params})\n{{\n"
        + "".join(blocks)
        + f"    return t{len(chain) - 1};\n}}\n"
    )
    # run() adds the half conversions its own operands and result need; the intermediates'
    # dtypes may need more.
    # run's operands: the inputs, the scalars, then each export as a raw (indexed, unloaded) array
    args = [o[0] for o in operands] + [
        f"(__global {stype(d, native)} *)p_raw{j} + i_raw{j}" for j, d in enumerate(export_dts)
    ]
    operands += [(f"raw{j}", d, "ex", j) for j, d in enumerate(export_dts)]
    have = {d.name for d in (out, *(o[1] for o in operands)) if not (native and d.name == "float16")}
    extra = [d for d in set(dtypes.values()) if d.name not in have and not (native and d.name == "float16")]
    # Kernel arguments (upper bound: 64-bit indices, no dims merged) must fit the device's limit.
    rank = len(arrays[0].shape)
    size = (len(arrays) + len(exports) + 1) * 8 * (2 + rank) + 16 * len(consts) + 8 * rank + 16
    if size > _max_parameter_size(dev):
        raise _Eager
    expr = "ember_fused(" + ", ".join(args) + ")"
    return _Program(expr, half_helpers(*extra) + "".join(helpers) + func, out, native, operands, export_dts)


_PARAM_LIMITS: dict[int, int] = {}


def _max_parameter_size(dev: Any) -> int:
    found = _PARAM_LIMITS.get(id(dev))
    if found is None:
        found = _PARAM_LIMITS[id(dev)] = int(dev.dev.max_parameter_size)
    return found


def _op(c: KernelCall, dtypes: dict[int, DType], dev: Any) -> tuple[DType, str, str, tuple[DType, ...]]:
    """(result dtype, expression, helper source, operand dtypes) of one call, as the
    eager kernel (elementwise.unary/binary/compare/where) would choose them."""
    arrs = [dtypes[a.n] for a in c.args if isinstance(a, Value)]
    if c.op == "cast":
        from .backend import declared_dtypes

        src, dst = arrs[0], c.args[1]
        if dst not in declared_dtypes() or (dst is src and src in HALF_DTYPES):
            raise _Eager  # eager refuses the dtype / copies half bits (NaN payloads) exactly
        return dst, "a" if dst is src else _subst(cast_expr(src, dst), src, dst), "", (src,)
    if c.op == "where":
        _, a, b = c.args
        vals = [dtypes[v.n] for v in (a, b) if isinstance(v, Value)]
        dt = vals[0] if vals else _scalar_dtype(a)
        return dt, "c ? a : b", "", (BOOL, dt, dt)
    dt = arrs[0]
    if c.op in _COMPARE:
        if kind(dt) == "c":
            if c.op not in COMPLEX_COMPARE:
                raise _Eager
            return BOOL, COMPLEX_COMPARE[c.op], "", (dt, dt)
        return BOOL, COMPARE_EXPRS[c.op], "", (dt, dt)
    table = UNARY_EXPRS if c.op in UNARY_OPS else BINARY_EXPRS
    expr, helper, msg = _expr(table, c.op, dt, _native(dev, dt))
    if msg is not None:
        raise _Eager  # the kernel reports bad input through the error flag
    if c.op == "pow" and kind(dt) == "i" and not isinstance(c.args[1], Value) and c.args[1] < 0:
        raise _Eager  # eager raises on the host
    if c.op in UNARY_OPS:
        return real_of(dt) if c.op == "abs" else dt, expr, helper, (dt,)
    return dt, expr, helper, (dt, dt)


def _check_helpers(helpers: list[str]) -> None:
    """Two ops' helpers defining one function (float floordiv and remainder): no fusion."""
    seen: set[str] = set()
    for h in helpers:
        names = set(_FUNC.findall(h))
        if names & seen:
            raise _Eager
        seen |= names
