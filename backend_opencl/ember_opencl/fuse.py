"""``compile_graph`` (ember.compile's backend hook): each elementwise chain becomes one kernel.

A chain is a set of unary/binary/compare/where/cast calls on arrays of one shape that ends in
one call (its result) and whose other values are used only inside it, or after it (then the
kernel writes them too: a forward's values saved for the backward). A chain never spans a call
that writes into an array, so every read keeps its place relative to the writes. An in-place
write (``add(x, bias, out=x)`` after a matmul or conv) joins a chain when nothing else sees
``x``. The kernel itself: fuse_kernel.py.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ember.backends import DType
from ember.backends.graph import WRITES_FIRST, KernelCall, KernelGraph, Value, values
from ember.backends.ops import ALL_OPS, BINARY, COMPARE

from .fuse_kernel import UNARY_OPS, FusedKernel, _scalar_key

__all__ = ["MAX_ARRAYS", "FusedKernel", "compile_graph"]

_UNARY = UNARY_OPS
_BINARY = frozenset(BINARY) | {"remainder"}
_COMPARE = frozenset(COMPARE)
_FUSABLE = _UNARY | _BINARY | _COMPARE | {"where", "cast"}
_SCALARS = (bool, int, float, complex)
# Kinds of kernels whose result is a new array (never a view of an argument).
_FRESH_KINDS = frozenset({"unary", "binary", "compare", "where", "reduction", "scan", "matmul", "composite"})
# Per chain, at most this many distinct arrays and distinct scalars: PoCL allows 1024 bytes of
# kernel arguments, and an operand of rank 4 with 64-bit indices takes 48 of them.
MAX_ARRAYS = 12
MAX_SCALARS = 12
# Values a chain may also write for later use. None by default: on PoCL a kernel with extra
# stores runs slower than the separate chains (the 102-op tanh chain's step, interleaved medians:
# 0 exports 12.3 ms, 1: 15.8 ms, 12: 25.2 ms), its device time too (8.6, 9.5, 20.5 ms).
MAX_EXPORTS = 0


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
    return c.fn is not None or "out" in c.kwargs or c.op in WRITES_FIRST or c.op not in ALL_OPS


def _kind(op: str) -> str | None:
    d = ALL_OPS.get(op)
    return None if d is None else d.kind


def compile_graph(graph: KernelGraph) -> KernelGraph | None:
    """``graph`` with each elementwise chain replaced by one ``FusedKernel`` call (None: none)."""
    skip: set[int] = set()
    while True:  # each round gives up at least one rename, so this ends
        calls, renamed = _rename_writes(graph.calls, graph.outputs, skip)
        root, members, exported = _chains(calls, graph.outputs)
        # a renamed write must end inside its chain: its new value never leaves the graph
        undo = {i for i in renamed if root.get(i) == i or calls[i].out.n in exported[root[i]]}
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
            out.append(_fused_call([calls[j] for j in sorted(members[r])], exported[r]))
    return KernelGraph(graph.backend, out, graph.inputs, graph.outputs, dict(graph.meta))


def _rename_writes(
    calls: list[KernelCall], outputs: frozenset[int], skip: set[int]
) -> tuple[list[KernelCall], set[int]]:
    """``calls`` with each in-place binary write (``add(x, b, out=x)``: a bias added into a
    matmul's fresh result) into an array only this graph sees, nothing having read it yet,
    turned into a plain call making a new value that later calls read instead; and the indices
    of those calls. Kept only where the call ends inside a chain (its write then never
    happens: nothing reads the array after it), so the new values never leave the graph."""
    top = 1 + max((n for c in calls for n in values((c.args, c.kwargs, c.out))), default=0)
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
            read.update(values(args))
            out.append(KernelCall(c.op, args, {}, new))
            continue
        read.update(values((args, kwargs)))
        if not c.kwargs and c.fn is None and (c.op == "cast" or _kind(c.op) in _FRESH_KINDS):
            fresh.update(values(res))
        out.append(KernelCall(c.op, args, kwargs, res, c.fn))
    return out, renamed


def _chains(
    calls: list[KernelCall], outputs: frozenset[int]
) -> tuple[dict[int, int], dict[int, list[int]], dict[int, set[int]]]:
    """Per fusable call, the last call of its chain; per chain (by that call), its calls and the
    values it exports.

    Walking backwards, a call joins the first chain among its result's users when every other
    user comes after that chain's last call (the result is then exported, as it is when it is
    an output), no write lies between them, and the kernel stays under the argument limits."""
    consumers: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(calls):
        for n in values((c.args, c.kwargs)):
            consumers[n].append(i)
    writes = [i for i, c in enumerate(calls) if _writes(c)]
    root: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    arrays: dict[int, set[int]] = {}  # per chain: values it reads from outside
    scalars: dict[int, set[tuple[type, str]]] = {}
    exported: dict[int, set[int]] = {}
    for i in reversed(range(len(calls))):
        c = calls[i]
        if not _fusable(c):
            continue
        own_arrays = set(values(c.args))
        own_scalars = {_scalar_key(a) for a in c.args if isinstance(a, _SCALARS)}
        v = c.out.n
        users = consumers.get(v, [])
        chains = [root[u] for u in users if u in root]
        r = min(chains) if chains else None
        if r is not None and not any(i < w < r for w in writes):
            others = [u for u in users if root.get(u) != r]
            export = v in outputs or bool(others)
            new_arrays = (arrays[r] - {v}) | own_arrays
            new_scalars = scalars[r] | own_scalars
            if (
                all(u > r for u in others)
                and len(new_arrays) + len(exported[r]) + export <= MAX_ARRAYS
                and len(new_scalars) <= MAX_SCALARS
                and len(exported[r]) + export <= MAX_EXPORTS
            ):
                root[i] = r
                members[r].append(i)
                arrays[r], scalars[r] = new_arrays, new_scalars
                if export:
                    exported[r].add(v)
                continue
        root[i] = i
        members[i] = [i]
        arrays[i], scalars[i], exported[i] = own_arrays, own_scalars, set()
    return root, members, exported


def _fused_call(chain: list[KernelCall], exported: set[int]) -> KernelCall:
    made = {c.out.n for c in chain}
    inputs: list[Value] = []
    for c in chain:
        for a in c.args:
            if isinstance(a, Value) and a.n not in made and a not in inputs:
                inputs.append(a)
    exports = [c.out for c in chain if c.out.n in exported]
    out = (chain[-1].out, *exports) if exports else chain[-1].out
    return KernelCall("fused_elementwise", tuple(inputs), {}, out, fn=FusedKernel(chain, inputs, exports))
