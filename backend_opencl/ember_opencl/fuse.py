"""``compile_graph``: each chain of elementwise calls ``ember.compile`` captured becomes one kernel.

A chain is a set of unary/binary/compare/where/cast calls whose intermediate values are used
only inside it and are not among the graph's outputs; it has one result (its last call). Its
kernel is one ``elementwise.run`` whose expression calls a generated helper function: each op of
the chain is one block there, built from the op's own expression template (``elementwise._expr``,
``cast_expr``: what eager kernels use) and stored and reloaded through the dtype's
``store``/``load``, so every intermediate rounds exactly as eager's stored array does (float16,
bfloat16, bool). With ``FP_CONTRACT OFF`` (runtime.py) the result is eager's, bit for bit.
``run`` walks strided and expanded operands and caches the program per (expression, dtypes,
rank) as every elementwise kernel is cached (runtime.kernel, progcache). An in-place write
(``add(x, bias, out=x)`` after a matmul or conv) joins a chain when nothing else sees ``x``.

What the generated kernel cannot do the same way as eager (a kernel that may raise: integer
floordiv, a negative integer power; operands of mixed shapes; too many kernel parameters) runs
eagerly instead, call by call, with the same kernels as before. A chain never spans a call that
writes into an array, so every read keeps its place relative to the writes.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ember.backends import DType
from ember.backends.graph import KernelCall, KernelGraph, Value
from ember.backends.ops import ALL_OPS, BINARY, COMPARE, UNARY

from .cexprs import COMPLEX_COMPARE
from .clarray import CLArray, empty
from .dtypes import HALF_DTYPES, ctype, half_helpers, kind, load, store, stype
from .elementwise import BOOL, _expr, _native, _scalar_dtype, _subst, real_of, run, store_expr
from .exprs import BINARY_EXPRS, COMPARE_EXPRS, UNARY_EXPRS, cast_expr

__all__ = ["FusedKernel", "compile_graph"]

_UNARY = frozenset(UNARY) | {"ceil", "trunc", "round", "sign", "sigmoid", "log1p", "expm1"}
_BINARY = frozenset(BINARY) | {"remainder"}
_COMPARE = frozenset(COMPARE)
_FUSABLE = _UNARY | _BINARY | _COMPARE | {"where", "cast"}
_WRITES_FIRST = frozenset(
    {"assign", "index_put", "sgd_update", "adam_update", "sgd_update_foreach", "adam_update_foreach"}
)
_SCALARS = (bool, int, float, complex)
# Kinds of kernels whose result is a new array (never a view of an argument).
_FRESH_KINDS = frozenset({"unary", "binary", "compare", "where", "reduction", "scan", "matmul", "composite"})
# Per chain, at most this many distinct arrays and distinct scalars: PoCL allows 1024 bytes of
# kernel arguments, and an operand of rank 4 with 64-bit indices takes 48 of them.
MAX_ARRAYS = 12
MAX_SCALARS = 12
_FUNC = re.compile(r"static\s+\w+\s+(\w+)\s*\(")


def _values(a: Any) -> list[int]:
    if isinstance(a, Value):
        return [a.n]
    if isinstance(a, (list, tuple)):
        return [n for x in a for n in _values(x)]
    if isinstance(a, dict):
        return [n for x in a.values() for n in _values(x)]
    return []


def _fusable(c: KernelCall) -> bool:
    if c.fn is not None or c.kwargs or c.op not in _FUSABLE or not isinstance(c.out, Value):
        return False
    if c.op == "cast":
        return len(c.args) == 2 and isinstance(c.args[0], Value) and isinstance(c.args[1], DType)
    if not all(isinstance(a, (Value, *_SCALARS)) for a in c.args):
        return False
    want = 1 if c.op in _UNARY else 3 if c.op == "where" else 2
    return len(c.args) == want and any(isinstance(a, Value) for a in c.args)


def _writes(c: KernelCall) -> bool:
    """Whether ``c`` may write into an array it did not make (a chain must not span it)."""
    return c.fn is not None or "out" in c.kwargs or c.op in _WRITES_FIRST or c.op not in ALL_OPS


def _kind(op: str) -> str | None:
    d = ALL_OPS.get(op)
    return None if d is None else d.kind


def _scalar_key(x: Any) -> tuple[type, str]:
    return type(x), repr(x)  # repr: -0.0 and 0.0 differ


def compile_graph(graph: KernelGraph) -> KernelGraph | None:
    """``graph`` with each elementwise chain replaced by one ``FusedKernel`` call (None: none)."""
    skip: set[int] = set()
    while True:  # each round gives up at least one rename, so this ends
        calls, renamed = _rename_writes(graph.calls, graph.outputs, skip)
        root, members = _chains(calls, graph.outputs)
        undo = {i for i in renamed if root.get(i) == i}
        if not undo:
            break
        skip |= undo
    if all(len(m) < 2 for m in members.values()):
        return None
    out: list[KernelCall] = []
    for i, c in enumerate(calls):
        r = root.get(i)
        if r is None or len(members[r]) < 2:
            out.append(c)
        elif r == i:
            out.append(_fused_call([calls[j] for j in sorted(members[r])]))
    return KernelGraph(graph.backend, out, graph.inputs, graph.outputs, dict(graph.meta))


def _rename_writes(
    calls: list[KernelCall], outputs: frozenset[int], skip: set[int]
) -> tuple[list[KernelCall], set[int]]:
    """``calls`` with each in-place binary write (``add(x, b, out=x)``: a bias added into a
    matmul's fresh result) into an array only this graph sees, nothing having read it yet,
    turned into a plain call making a new value that later calls read instead; and the indices
    of those calls. Kept only where the call ends inside a chain (its write then never
    happens: nothing reads the array after it), so the new values never leave the graph."""
    top = 1 + max((n for c in calls for n in _values((c.args, c.kwargs, c.out))), default=0)
    fresh: set[int] = set()  # values made by a call of this graph into a new array
    origin: dict[int, int] = {}  # a new value -> the captured value it stands for
    read: set[int] = set()
    current: dict[int, Value] = {}
    out: list[KernelCall] = []
    renamed: set[int] = set()
    for i, c in enumerate(calls):

        def sub(a: Any) -> Any:
            if isinstance(a, Value):
                return current.get(a.n, a)
            if isinstance(a, (list, tuple)):
                return type(a)(sub(x) for x in a)
            return a

        args, kwargs, res = sub(c.args), {k: sub(v) for k, v in c.kwargs.items()}, sub(c.out)
        w = kwargs.get("out")
        if (
            i not in skip
            and c.op in _BINARY
            and set(kwargs) == {"out"}
            and isinstance(w, Value)
            and args[0] == w
            and res == w
            and w.n in fresh
            and w.n not in read
            and origin.get(w.n, w.n) not in outputs
        ):
            new = Value(top)
            top += 1
            origin[new.n] = origin.get(w.n, w.n)
            current[c.out.n] = new
            fresh.add(new.n)
            renamed.add(i)
            read.update(_values(args))
            out.append(KernelCall(c.op, args, {}, new))
            continue
        read.update(_values((args, kwargs)))
        if not c.kwargs and c.fn is None and (c.op == "cast" or _kind(c.op) in _FRESH_KINDS):
            fresh.update(_values(res))
        out.append(KernelCall(c.op, args, kwargs, res, c.fn))
    return out, renamed


def _chains(calls: list[KernelCall], outputs: frozenset[int]) -> tuple[dict[int, int], dict[int, list[int]]]:
    """Per fusable call, the last call of its chain; per chain (by that call), its calls.

    Walking backwards, a call joins the chain of its result's users when they all are in one
    chain, the result is not an output, no write lies between them, and the chain's kernel
    stays under the argument limits."""
    consumers: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(calls):
        for n in _values((c.args, c.kwargs)):
            consumers[n].append(i)
    writes = [i for i, c in enumerate(calls) if _writes(c)]
    root: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    arrays: dict[int, set[int]] = {}  # per chain: values it reads from outside
    scalars: dict[int, set[tuple[type, str]]] = {}
    for i in reversed(range(len(calls))):
        c = calls[i]
        if not _fusable(c):
            continue
        own_arrays = set(_values(c.args))
        own_scalars = {_scalar_key(a) for a in c.args if isinstance(a, _SCALARS)}
        users = consumers.get(c.out.n, [])
        roots = {root.get(u) for u in users}
        r = next(iter(roots)) if len(roots) == 1 else None
        if r is not None and c.out.n not in outputs and not any(i < w < r for w in writes):
            new_arrays = (arrays[r] - {c.out.n}) | own_arrays
            new_scalars = scalars[r] | own_scalars
            if len(new_arrays) <= MAX_ARRAYS and len(new_scalars) <= MAX_SCALARS:
                root[i] = r
                members[r].append(i)
                arrays[r], scalars[r] = new_arrays, new_scalars
                continue
        root[i] = i
        members[i] = [i]
        arrays[i], scalars[i] = own_arrays, own_scalars
    return root, members


def _fused_call(chain: list[KernelCall]) -> KernelCall:
    made = {c.out.n for c in chain}
    inputs: list[Value] = []
    for c in chain:
        for a in c.args:
            if isinstance(a, Value) and a.n not in made and a not in inputs:
                inputs.append(a)
    fn = FusedKernel(chain, inputs)
    return KernelCall("fused_elementwise", tuple(inputs), {}, chain[-1].out, fn=fn)


@dataclass
class _Program:
    """One chain's kernel for one set of input dtypes: ``run``'s arguments, ready."""

    expr: str
    helpers: str
    out: DType
    native: bool
    operands: list[tuple[str, DType, int | None, Any]]  # name, dtype, input index or None, scalar


class _Eager(Exception):
    """The chain runs call by call (what the generated kernel cannot reproduce)."""


class FusedKernel:
    """The callable of a fused chain: takes the chain's input arrays, returns its result."""

    def __init__(self, chain: list[KernelCall], inputs: list[Value]) -> None:
        self.chain = chain
        self.inputs = inputs
        self._programs: dict[tuple[Any, ...], _Program | None] = {}
        self.__name__ = "fused_" + "_".join(c.op for c in chain[:8]) + ("_etc" if len(chain) > 8 else "")

    def __repr__(self) -> str:
        return f"<opencl fused kernel: {' '.join(c.op for c in self.chain)}>"

    def __call__(self, *arrays: CLArray) -> CLArray:
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
        operands = [(name, dt, arrays[j] if j is not None else s) for name, dt, j, s in prog.operands]
        return run(empty(dev, shape, prog.out), prog.expr, prog.helpers, operands, native=prog.native)

    def eager(self, arrays: tuple[CLArray, ...] | list[CLArray]) -> Any:
        """The chain call by call with the backend's own kernels (same results, more launches)."""
        from .kernels import KERNELS

        env: dict[int, Any] = {v.n: a for v, a in zip(self.inputs, arrays)}
        for c in self.chain:
            args = [env[a.n] if isinstance(a, Value) else a for a in c.args]
            env[c.out.n] = KERNELS[c.op](*args)
        return env[self.chain[-1].out.n]

    def _program(self, arrays: tuple[CLArray, ...]) -> _Program | None:
        try:
            return _build(self.chain, self.inputs, arrays)
        except _Eager:
            return None
        except TypeError:  # an op with no kernel for this dtype: eager raises its error
            return None


def _build(chain: list[KernelCall], inputs: list[Value], arrays: tuple[CLArray, ...]) -> _Program:
    dev = arrays[0].dev
    dtypes: dict[int, DType] = {v.n: a.dtype for v, a in zip(inputs, arrays)}
    # Native half when the chain holds float16 on a device with cl_khr_fp16 (elementwise.py).
    # (float16 enters a chain through its inputs or a cast)
    casts = [c.args[1] for c in chain if c.op == "cast"]
    native = any(_native(dev, d) for d in (*dtypes.values(), *casts))
    names: dict[int, str] = {v.n: f"x{j}" for j, v in enumerate(inputs)}
    operands: list[tuple[str, DType, int | None, Any]] = [
        (f"x{j}", a.dtype, j, None) for j, a in enumerate(arrays)
    ]
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
                    operands.append((name, adt, None, a))
                decls.append(f"{ctype(adt)} {local} = {name};")
        dtypes[c.out.n], names[c.out.n] = odt, f"t{t}"
        put = store(odt, "m", "0", store_expr(odt, expr), native)
        blocks.append(
            f"    {ctype(odt, native)} t{t};\n    {{\n        {' '.join(decls)}\n"
            f"        {stype(odt, native)} m[1];\n        {put};\n"
            f"        t{t} = {load(odt, 'm', '0', native)};\n    }}\n"
        )
    _check_helpers(helpers)
    out = dtypes[chain[-1].out.n]
    params = ", ".join(
        f"{ctype(dt, native)} {name}" if j is not None else f"{ctype(dt)} {name}"
        for name, dt, j, _ in operands
    )
    func = (
        f"static {ctype(out, native)} ember_fused({params})\n{{\n"
        + "".join(blocks)
        + f"    return t{len(chain) - 1};\n}}\n"
    )
    # run() adds the half conversions its own operands and result need; the intermediates'
    # dtypes may need more.
    have = {d.name for d in (out, *(o[1] for o in operands)) if not (native and d.name == "float16")}
    extra = [d for d in set(dtypes.values()) if d.name not in have and not (native and d.name == "float16")]
    # Kernel arguments (upper bound: 64-bit indices, no dims merged) must fit the device's limit.
    rank = len(arrays[0].shape)
    size = (len(arrays) + 1) * 8 * (2 + rank) + 16 * len(consts) + 8 * rank + 16
    if size > _max_parameter_size(dev):
        raise _Eager
    expr = "ember_fused(" + ", ".join(o[0] for o in operands) + ")"
    return _Program(expr, half_helpers(*extra) + "".join(helpers) + func, out, native, operands)


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
    table = UNARY_EXPRS if c.op in _UNARY else BINARY_EXPRS
    expr, helper, msg = _expr(table, c.op, dt, _native(dev, dt))
    if msg is not None:
        raise _Eager  # the kernel reports bad input through the error flag
    if c.op == "pow" and kind(dt) == "i" and not isinstance(c.args[1], Value) and c.args[1] < 0:
        raise _Eager  # eager raises on the host
    if c.op in _UNARY:
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
