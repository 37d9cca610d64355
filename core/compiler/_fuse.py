"""Offer each straight run of kernel calls to its backend's optional ``compile_graph`` hook
(``ember.backends.graph``), and splice back what it returns."""

from __future__ import annotations

from typing import Any

from ember.backends import registry
from ember.backends.graph import KernelCall, KernelGraph, Value

from ._capture import Step

__all__ = ["fuse"]


def _values(a: Any, out: set[int]) -> None:
    if isinstance(a, Value):
        out.add(a.n)
    elif isinstance(a, (list, tuple)):
        for x in a:
            _values(x, out)
    elif isinstance(a, dict):
        for x in a.values():
            _values(x, out)
    elif hasattr(a, "ref"):  # an eager-only call's fresh tensor
        out.add(a.ref.n)


def _hook(backend: str) -> Any:
    try:
        return getattr(registry.get(backend).backend, "compile_graph", None)
    except Exception:  # noqa: BLE001 - an unavailable backend offers no hook
        return None


def fuse(steps: list[Step], keep: set[int], arrays: list[Any]) -> list[Step]:
    """``steps`` with each run of kernel calls replaced by what its backend's hook returns;
    ``keep``: values used after ``steps`` (returned, or saved for a backward); ``arrays``: each
    value's array at capture (its shape and dtype go to the hook)."""
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(steps):
        if steps[i].kind == "kernel" and steps[i].fn is None and steps[i].op not in ("from_host",):
            j = i
            # reads of a tensor's array and constants do not end a run: they move before it
            while j < len(steps) and (
                steps[j].kind in ("read", "const")
                or (
                    steps[j].kind == "kernel"
                    and steps[j].backend == steps[i].backend
                    and steps[j].op != "from_host"
                )
            ):
                j += 1
            while steps[j - 1].kind != "kernel":  # trailing reads stay where they are
                j -= 1
            if sum(s.kind == "kernel" for s in steps[i:j]) >= 2 and _hook(steps[i].backend) is not None:
                runs.append((i, j))
            i = j
        else:
            i += 1
    if not runs:
        return steps
    out = list(steps)
    for i, j in reversed(runs):
        run = [s for s in steps[i:j] if s.kind == "kernel"]
        hoisted = [s for s in steps[i:j] if s.kind != "kernel"]
        produced: set[int] = set()
        used: set[int] = set()
        inputs: set[int] = set()  # used before the run makes them (a call may write into one)
        for s in run:
            now: set[int] = set()
            _values((s.args, s.kwargs), now)
            inputs |= now - produced
            used |= now
            _values(s.out, produced)
        after: set[int] = set(keep)
        for s in steps[j:]:
            _values((s.args, s.kwargs), after)
        meta = {
            n: (tuple(arrays[n].shape), arrays[n].dtype)
            for n in used | produced
            if hasattr(arrays[n], "dtype")
        }
        graph = KernelGraph(
            run[0].backend,
            [KernelCall(s.op, s.args, s.kwargs, s.out) for s in run],
            frozenset(inputs),
            frozenset(produced & after),
            meta,
        )
        new = _hook(run[0].backend)(graph)
        if new is None:
            continue
        made: set[int] = set()
        for c in new.calls:
            _values(c.out, made)
        missing = graph.outputs - made
        if missing:
            raise RuntimeError(
                f"backend {run[0].backend!r}: compile_graph dropped values the function still uses: {sorted(missing)}"
            )
        out[i:j] = hoisted + [
            Step("kernel", c.op, run[0].backend, c.args, c.kwargs, c.out, fn=c.fn) for c in new.calls
        ]
    return out
