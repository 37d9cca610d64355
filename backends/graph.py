"""The graph a backend may compile: a run of kernel calls ``ember.compile`` captured.

A backend that declares the optional member ``compile_graph(graph) -> KernelGraph | None``
receives each straight run of kernel calls of a captured function (calls on that backend, in
the order they ran, with no Python side effect between them) and may return a graph that
computes the same ``outputs`` from the same ``inputs`` in fewer calls: typically one generated
kernel for a chain of elementwise ops and reductions. Returning ``None`` keeps the calls as
they are (plain replay). A backend without the member gets plain replay.

Values are ``Value(n)``: each is one native array. ``KernelCall.args``/``kwargs`` hold Values
where the captured call had arrays, and plain Python parameters elsewhere, exactly as the
kernel in ``ops.py`` takes them; ``out`` is the result with new Values in place of arrays.
A call of the returned graph either names an op (``fn is None``: the backend's own kernel
for it runs) or carries ``fn``, any callable taking ``args``/``kwargs`` with Values replaced by
arrays and returning ``out``'s structure. Calls that write into an argument (``assign``, the
optimizer updates, ``out=``) must keep their order relative to every read of that array.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WRITES_FIRST", "KernelCall", "KernelGraph", "Value", "values", "written"]


@dataclass(frozen=True)
class Value:
    """One native array of the graph."""

    n: int


@dataclass
class KernelCall:
    """One call: ``op``'s kernel (or ``fn``) on ``args``/``kwargs``, giving ``out``."""

    op: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    out: Any
    fn: Callable[..., Any] | None = None


@dataclass
class KernelGraph:
    """A straight run of kernel calls on one backend.

    ``inputs``: values defined before the run (arrays read from tensors, constants, results of
    earlier calls); ``outputs``: values the rest of the function uses after the run, which the
    returned graph must still produce (the other results are the backend's to drop or fuse).
    """

    backend: str
    calls: list[KernelCall]
    inputs: frozenset[int]
    outputs: frozenset[int]
    meta: dict[int, Any] = field(default_factory=dict)  # value -> (shape, dtype) where known


# Kernels that write into their first argument (``ops.py``); any kernel given ``out=`` writes there.
WRITES_FIRST = frozenset(
    {
        "assign",
        "index_put",
        "sgd_update",
        "adam_update",
        "sgd_update_foreach",
        "adam_update_foreach",
        "mul_foreach",
    }
)


def written(op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What a call writes into: its ``out=``, or the first argument of a writing kernel, else None."""
    return kwargs.get("out", args[0] if op in WRITES_FIRST and args else None)


def values(obj: Any) -> list[int]:
    """The numbers of the Values in ``obj`` (nested tuples, lists and dict values), in order."""
    if isinstance(obj, Value):
        return [obj.n]
    if isinstance(obj, (list, tuple)):
        return [n for x in obj for n in values(x)]
    if isinstance(obj, dict):
        return [n for x in obj.values() for n in values(x)]
    return []
