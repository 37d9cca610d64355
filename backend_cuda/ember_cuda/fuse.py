"""``compile_graph`` (ember.compile's backend hook): each elementwise chain becomes one kernel.

A chain is a set of unary/binary/compare/where/cast calls on arrays of one shape that ends in
one call (its result) and whose other values are used only inside it (never after it, never in
``graph.outputs``). A chain never spans a call that writes into an array, so every read keeps
its place relative to the writes. Python scalars become kernel arguments.

The kernel is one ``cupy.ElementwiseKernel`` (the launch path of every elementwise kernel here:
strided and broadcast operands, compiled once per source) whose body is one block per op,
built from the very template eager runs: the CuPy ufunc op CuPy itself picks for those dtypes
(``elementwise._UNARY``/``_BINARY``, ``cupy.where``, ``astype``) or the backend's own named
ElementwiseKernel (floor division, remainder, casts, sigmoid), with CuPy's ``inN_type``
typedefs. Each result is stored in a local of its dtype, so float16/bfloat16/bool
intermediates round exactly as eager's stored arrays; ``--fmad=false`` keeps NVRTC from
contracting a multiply in one op with an add in the next (eager rounds in between).

What the kernel cannot do as eager does (integer division or power that eager checks on the
host, complex casts, operands of mixed shapes or dtypes) runs call by call instead.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import cupy
import numpy as np
from ember.backends import DType
from ember.backends.graph import WRITES_FIRST, KernelCall, KernelGraph, Value, values
from ember.backends.ops import ALL_OPS, BINARY, COMPARE, UNARY

from . import elementwise as ew
from .dtypes import ctype, to_np

__all__ = ["MAX_ARRAYS", "FusedKernel", "Program", "compile_graph"]

_UNARY = frozenset(UNARY) | {"ceil", "trunc", "round", "sign", "sigmoid", "log1p", "expm1"}
_BINARY = frozenset(BINARY) | {"remainder"}
_COMPARE = frozenset(COMPARE)
_FUSABLE = _UNARY | _BINARY | _COMPARE | {"where", "cast"}
_SCALARS = (bool, int, float)
# Per chain, at most this many distinct input arrays and scalars (CUDA's 4 KiB of kernel
# parameters: a CuPy CArray of rank 8 takes 136 bytes).
MAX_ARRAYS = 16
MAX_SCALARS = 16
OPTIONS = ("--fmad=false",)
_HALF_HEADERS = {"float16": "#include <cupy/float16.cuh>\n", "bfloat16": "#include <cupy/bfloat16.cuh>\n"}


def _fusable(c: KernelCall, meta: dict[int, Any]) -> bool:
    if c.fn is not None or c.kwargs or c.op not in _FUSABLE or not isinstance(c.out, Value):
        return False
    if c.op == "cast":
        ok = len(c.args) == 2 and isinstance(c.args[0], Value) and isinstance(c.args[1], DType)
    else:
        want = 1 if c.op in _UNARY else 3 if c.op == "where" else 2
        ok = (
            len(c.args) == want
            and all(isinstance(a, (Value, *_SCALARS)) for a in c.args)
            and any(isinstance(a, Value) for a in c.args)
        )
    shapes = {tuple(meta[n][0]) for n in values((c.args, c.out)) if n in meta}
    return ok and len(shapes) <= 1


def _writes(c: KernelCall) -> bool:
    """Whether ``c`` may write into an array it did not make (a chain must not span it)."""
    return c.fn is not None or "out" in c.kwargs or c.op in WRITES_FIRST or c.op not in ALL_OPS


def compile_graph(graph: KernelGraph) -> KernelGraph | None:
    """``graph`` with each chain of >= 2 elementwise calls as one ``FusedKernel`` call (None: none)."""
    calls = graph.calls
    root = _chains(calls, graph.outputs, graph.meta)
    members: dict[int, list[int]] = defaultdict(list)
    for i, last in root.items():
        members[last].append(i)
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


def _chains(calls: list[KernelCall], outputs: frozenset[int], meta: dict[int, Any]) -> dict[int, int]:
    """Per fusable call, the index of its chain's last call.

    Walking backwards, a call joins the chain of its result's users when they all belong to
    that one chain, the result is not a graph output, no write lies between the call and the
    chain's last call, and the kernel stays under the argument limits."""
    consumers: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(calls):
        for n in values((c.args, c.kwargs)):
            consumers[n].append(i)
    writes = [i for i, c in enumerate(calls) if _writes(c)]
    root: dict[int, int] = {}
    arrays: dict[int, set[int]] = {}  # per chain: values it reads from outside
    scalars: dict[int, set[tuple[type, str]]] = {}
    for i in reversed(range(len(calls))):
        c = calls[i]
        if not _fusable(c, meta):
            continue
        own_arrays = set(values(c.args))
        own_scalars = {(type(a), repr(a)) for a in c.args if isinstance(a, _SCALARS)}
        v = c.out.n
        chains = {root.get(u) for u in consumers.get(v, [])}
        r = next(iter(chains)) if len(chains) == 1 else None
        if r is not None and v not in outputs and not any(i < w < r for w in writes):
            new_arrays = (arrays[r] - {v}) | own_arrays
            new_scalars = scalars[r] | own_scalars
            if len(new_arrays) <= MAX_ARRAYS and len(new_scalars) <= MAX_SCALARS:
                root[i] = r
                arrays[r], scalars[r] = new_arrays, new_scalars
                continue
        root[i] = i
        arrays[i], scalars[i] = own_arrays, own_scalars
    return root


def _fused_call(chain: list[KernelCall]) -> KernelCall:
    made = {c.out.n for c in chain}
    inputs: list[Value] = []
    for c in chain:
        for a in c.args:
            if isinstance(a, Value) and a.n not in made and a not in inputs:
                inputs.append(a)
    return KernelCall("fused_elementwise", tuple(inputs), {}, chain[-1].out, fn=FusedKernel(chain, inputs))


class _Eager(Exception):
    """The chain runs call by call (what the generated kernel cannot reproduce)."""


@dataclass
class Program:
    """One chain's kernel for one tuple of input dtypes."""

    kernel: Any  # cupy.ElementwiseKernel
    out: np.dtype
    scalars: list[tuple[Any, np.dtype]]  # each scalar argument and the dtype eager gives it
    # per device: the scalars as eager makes them (bfloat16: a 0-d array on that device)
    values: dict[int, list[Any]] = field(default_factory=dict)

    @property
    def scalar_names(self) -> frozenset[str]:
        return frozenset(f"k{j}" for j in range(len(self.scalars)))


class FusedKernel:
    """The callable of a fused chain: takes the chain's input arrays, returns its result."""

    def __init__(self, chain: list[KernelCall], inputs: list[Value]) -> None:
        self.chain = chain
        self.inputs = inputs
        self._programs: dict[tuple[np.dtype, ...], Program | None] = {}
        self.__name__ = "fused_" + "_".join(c.op for c in chain[:8]) + ("_etc" if len(chain) > 8 else "")

    def __repr__(self) -> str:
        return f"<cuda fused kernel: {' '.join(c.op for c in self.chain)}>"

    def program(self, dtypes: tuple[np.dtype, ...]) -> Program | None:
        """The kernel for inputs of ``dtypes`` (None: run call by call); needs no device."""
        key = tuple(np.dtype(d) for d in dtypes)
        if key not in self._programs:
            try:
                self._programs[key] = _build(self.chain, self.inputs, key)
            except (_Eager, TypeError, KeyError):  # KeyError/TypeError: eager raises its own error
                self._programs[key] = None
        return self._programs[key]

    def __call__(self, *arrays: Any) -> Any:
        first = arrays[0]
        if any(not isinstance(a, cupy.ndarray) or a.shape != first.shape for a in arrays):
            return self.eager(arrays)
        key = tuple(a.dtype for a in arrays)
        prog = self.program(key)
        if prog is None:
            return self.eager(arrays)
        with first.device:
            values = prog.values.get(first.device.id)
            if values is None:
                values = [ew._operand(v, SimpleNamespace(dtype=d)) for v, d in prog.scalars]
                prog.values[first.device.id] = values
            y = cupy.empty(first.shape, prog.out)
            try:
                prog.kernel(*arrays, *values, y)
            except cupy.cuda.compiler.CompileException:  # never expected: tests compile the forms
                self._programs[key] = None
                return self.eager(arrays)
        return y

    def eager(self, arrays: tuple[Any, ...]) -> Any:
        """The chain call by call with the backend's own kernels (same results, more launches)."""
        from .kernels import KERNELS

        env: dict[int, Any] = {v.n: a for v, a in zip(self.inputs, arrays)}
        for c in self.chain:
            args = [env[a.n] if isinstance(a, Value) else a for a in c.args]
            env[c.out.n] = KERNELS[c.op](*args)
        return env[self.chain[-1].out.n]


@dataclass
class _Template:
    """One op's code as eager compiles it: typedefs, its operands' and result's locals, routine."""

    routine: str
    preamble: str
    typedefs: list[tuple[str, np.dtype]]
    ins: list[tuple[str, np.dtype]]
    out: tuple[str, np.dtype]


def _ufunc(u: Any, dts: tuple[np.dtype, ...]) -> _Template:
    """The op CuPy's ufunc ``u`` runs for inputs of ``dts`` (CuPy's own choice)."""
    op = u._ops._guess_routine_from_in_types(dts)
    if op is None or op.routine is None:
        raise _Eager  # CuPy raises (no loop for these dtypes, e.g. negative on bool)
    ins = [(f"in{j}", np.dtype(t)) for j, t in enumerate(op.in_types)]
    out = ("out0", np.dtype(op.out_types[0]))
    return _Template(op.routine, u._preamble, [(f"{n}_type", t) for n, t in (*ins, out)], ins, out)


def _kernel(k: Any, dts: tuple[np.dtype, ...]) -> _Template:
    """The operation of one of the backend's named ElementwiseKernels, its type letters bound
    to ``dts`` in order of first appearance (as CuPy binds them)."""
    letters: dict[str, np.dtype] = {}
    for p in k.in_params + k.out_params:
        if p.dtype is None and p.ctype not in letters:
            letters[p.ctype] = dts[len(letters)]

    def dt(p: Any) -> np.dtype:
        return np.dtype(p.dtype) if p.dtype is not None else letters[p.ctype]

    ins = [(p.name, dt(p)) for p in k.in_params]
    out_p = k.out_params[0]
    return _Template(k.operation, k.preamble, list(letters.items()), ins, (out_p.name, dt(out_p)))


def _template(c: KernelCall, dts: tuple[np.dtype, ...], scalar: list[bool]) -> tuple[_Template, np.dtype]:
    """(template, stored result dtype) of one call with operands of ``dts``, as the eager
    kernel in elementwise.py chooses them."""
    op, d = c.op, dts[-1] if c.op == "where" else dts[0]
    if c.op == "cast":
        dst = to_np(c.args[1])
        if d.kind == "c" or dst.kind == "c":
            raise _Eager  # complex casts (eager takes .real first): call by call
        if dst.kind == "b":
            return _kernel(ew.EMBER_CAST_BOOL, (d,)), dst
        if d.kind == "f" and dst.kind in "iu":
            return _kernel(ew.EMBER_CAST_TRUNC, (d, dst)), dst
        return _ufunc(cupy._core.core.elementwise_copy, (d,)), dst  # astype: stored as dst
    if op == "where":
        if dts[0] != np.bool_ or dts[1] != dts[2] or all(scalar[1:]):
            raise _Eager
        from cupy._sorting.search import _where_ufunc

        return _ufunc(_where_ufunc, dts), dts[1]  # eager: .astype(a.dtype) (bfloat16 has no loop)
    if len(set(dts)) > 1:
        raise _Eager  # the convention's operands share a dtype; CuPy would promote
    if op in _UNARY:
        if op in ("floor", "ceil", "trunc", "round", "sign") and d.kind in ("iub" if op != "sign" else "b"):
            return _Template("out0 = in0", "", [], [("in0", d)], ("out0", d)), d  # eager copies
        if op == "sigmoid":
            t = _kernel(ew.EMBER_SIGMOID, (d,))
        elif op == "erf":  # eager: half types through float32 and back
            from cupyx.scipy.special import erf

            half = d in ew.HALF
            t = _ufunc(erf, (np.dtype(np.float32),) if half else (d,))
            return t, d if half else t.out[1]
        else:
            t = _ufunc(ew._UNARY[op], (d,))
        return t, t.out[1]
    exact = d.kind in "iub"
    if exact and op in ("floordiv", "remainder", "pow"):
        # eager checks the divisor for zero / the exponent for negatives on the host
        if not scalar[1] or d.kind == "b":
            raise _Eager
        with np.errstate(all="ignore"):
            b = np.asarray(c.args[1]).astype(d)
        if (b == 0) if op != "pow" else (b < 0):
            raise _Eager
    if op in ("floordiv", "remainder"):
        name = ("EMBER_FLOORDIV" if op == "floordiv" else "EMBER_REMAINDER") + ("_INT" if exact else "_FLOAT")
        t = _kernel(getattr(ew, name), (d,))
    else:
        t = _ufunc(cupy.power if op == "pow" else ew._BINARY[op], dts)
    return t, t.out[1]


def _merge(preambles: list[str], p: str) -> None:
    """Add ``p`` unless one already there holds it (sigmoid's ember_wide is in floor division's)."""
    if not p or any(p in q for q in preambles):
        return
    preambles[:] = [q for q in preambles if q not in p] + [p]


def _build(chain: list[KernelCall], inputs: list[Value], dtypes: tuple[np.dtype, ...]) -> Program:
    names: dict[int, str] = {v.n: f"x{j}" for j, v in enumerate(inputs)}
    types: dict[int, np.dtype] = {v.n: d for v, d in zip(inputs, dtypes)}
    params = [f"{d.name} x{j}" for j, d in enumerate(dtypes)]
    consts: dict[tuple[Any, ...], str] = {}
    scalars: list[tuple[Any, np.dtype]] = []
    preambles: list[str] = []
    body: list[str] = []
    for t, c in enumerate(chain):  # locals t0, t1, ...: chains of one form share one source
        args = c.args[:1] if c.op == "cast" else c.args
        arr = [types[a.n] for a in args if isinstance(a, Value)]
        like = arr[-1]  # a scalar takes its partner array's dtype (where: the value operand's)
        dts = tuple(types[a.n] if isinstance(a, Value) else like for a in args)
        tmpl, store = _template(c, dts, [not isinstance(a, Value) for a in args])
        _merge(preambles, tmpl.preamble)
        srcs = []
        for a, dt in zip(args, dts):
            if isinstance(a, Value):
                srcs.append(names[a.n])
            else:  # a kernel argument of the operand's dtype, made as eager makes it
                key = (type(a), repr(a), dt)
                if key not in consts:
                    consts[key] = f"k{len(consts)}"
                    scalars.append((a, dt))
                    params.append(f"{dt.name} {consts[key]}")
                srcs.append(consts[key])
        lines = [f"typedef {ctype(d)} {n};" for n, d in tmpl.typedefs]
        lines += [f"{ctype(d)} {n} = static_cast<{ctype(d)}>({s});" for (n, d), s in zip(tmpl.ins, srcs)]
        lines += [f"{ctype(tmpl.out[1])} {tmpl.out[0]};", tmpl.routine.strip() + ";"]
        lines.append(f"t{t} = static_cast<{ctype(store)}>({tmpl.out[0]});")
        body.append(f"{ctype(store)} t{t};\n{{\n" + "\n".join("    " + s for s in lines) + "\n}")
        types[c.out.n], names[c.out.n] = store, f"t{t}"
    out = types[chain[-1].out.n]
    # CuPy includes a half type's header only for a parameter of that type; a cast may make one
    for d in sorted({ctype(d) for d in types.values()} & _HALF_HEADERS.keys()):
        _merge(preambles, _HALF_HEADERS[d])
    body.append(f"ember_out = t{len(chain) - 1};")
    kernel = cupy.ElementwiseKernel(
        ", ".join(params),
        f"{out.name} ember_out",
        "\n".join(body),
        "ember_fused",
        preamble="\n".join(preambles),
        options=OPTIONS,
    )
    return Program(kernel, out, scalars)
