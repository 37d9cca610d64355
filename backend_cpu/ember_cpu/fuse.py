"""``compile_graph``: what the CPU backend does with a run of kernel calls ``ember.compile``
captured (``ember.backends.graph``).

Each stretch of small elementwise calls (float32/float64 arrays under the threading size, no
``out=``) becomes one generated Python function calling the NumPy ufuncs directly: the same
ufuncs on the same operands as the kernels would (Python scalars pinned to the array's dtype,
which is what NumPy does with a weak scalar), so results are bit-identical, minus the kernel
wrappers' checks per call. Larger arrays keep their kernels, which split work over threads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ember.backends.graph import KernelCall, KernelGraph, Value, values

from .kernels import KERNELS, LARGE

__all__ = ["compile_graph"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_MIN_RUN = 3  # shorter stretches are not worth a function of their own


def _array_dtype(call: KernelCall, meta: dict[int, Any]) -> Any:
    """The one float dtype of the call's array operands when it can run as a bare ufunc."""
    if call.kwargs or not hasattr(KERNELS.get(call.op), "ufunc"):
        return None
    found = None
    for a in call.args:
        if isinstance(a, Value):
            m = meta.get(a.n)
            if m is None or m[1] not in _FLOATS or int(np.prod(m[0])) >= LARGE:
                return None
            if found is not None and m[1] != found:
                return None
            found = m[1]
        elif type(a) not in (int, float):
            return None
    return found


def compile_graph(graph: KernelGraph) -> KernelGraph | None:
    meta = graph.meta
    dtypes = [_array_dtype(c, meta) for c in graph.calls]
    calls: list[KernelCall] = []
    changed = False
    i = 0
    while i < len(graph.calls):
        if dtypes[i] is None:
            calls.append(graph.calls[i])
            i += 1
            continue
        j = i
        while j < len(graph.calls) and dtypes[j] is not None:
            j += 1
        if j - i >= _MIN_RUN:
            calls.append(_fuse(graph.calls[i:j], dtypes[i:j], graph, graph.calls[j:]))
            changed = True
        else:
            calls.extend(graph.calls[i:j])
        i = j
    return KernelGraph(graph.backend, calls, graph.inputs, graph.outputs, meta) if changed else None


def _fuse(run: list[KernelCall], dtypes: list[Any], graph: KernelGraph, rest: list[KernelCall]) -> KernelCall:
    produced: list[int] = []
    used: list[int] = []
    for c in run:
        used.extend(a.n for a in c.args if isinstance(a, Value))
        produced.append(c.out.n)
    inputs = sorted(set(used) - set(produced))
    later = {n for c in rest for n in values((c.args, c.kwargs))}
    outputs = [n for n in produced if n in graph.outputs or n in later]
    ns: dict[str, Any] = {}
    lines = []
    for c, dt in zip(run, dtypes):
        uf = KERNELS[c.op].ufunc  # type: ignore[union-attr]
        name = "u_" + uf.__name__
        ns[name] = uf
        args = []
        for a in c.args:
            if isinstance(a, Value):
                args.append(f"v{a.n}")
            else:
                const = f"c{len(ns)}"
                ns[const] = dt.type(a)  # a weak Python scalar, cast as NumPy casts it
                args.append(const)
        lines.append(f"    v{c.out.n} = {name}({', '.join(args)}, out=...)")
    params = ", ".join(f"v{n}" for n in inputs)
    ret = "".join(f"v{n}, " for n in outputs)
    src = f"def fused({params}):\n" + "\n".join(lines) + f"\n    return ({ret})\n"
    exec(compile(src, "<ember_cpu.fuse>", "exec"), ns)  # noqa: S102 - generated from the graph
    fn = ns["fused"]
    fn.source = src
    return KernelCall("fused", tuple(Value(n) for n in inputs), {}, tuple(Value(n) for n in outputs), fn=fn)
