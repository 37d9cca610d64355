"""An OpInfo-style table of ember's differentiable public ops (issue 13, item 4).

``TABLE`` holds one or more entries per differentiable op; ``NOT_DIFFERENTIABLE`` names
every other public callable with a one-word reason; ``KNOWN_BROKEN`` names entries whose
gradient rule is wrong today (strict xfail in ``tests/test_opinfo_gradients.py``).
``public_ops`` enumerates what the two lists must cover between them.
"""

from __future__ import annotations

import inspect
from typing import Any

import ember

from . import table_elementwise, table_linalg, table_nn, table_reduce, table_shape
from .table_nondiff import NOT_DIFFERENTIABLE
from .table_spec import PREFIXES, A, Entry

__all__ = ["DUNDERS", "KNOWN_BROKEN", "NOT_DIFFERENTIABLE", "TABLE", "public_ops", "uncovered"]

# operators with a behaviour of their own (not a call of a public function)
DUNDERS = {"Tensor.__getitem__", "Tensor.__setitem__"}

TABLE: list[Entry] = [
    *table_elementwise.ENTRIES,
    *table_reduce.ENTRIES,
    *table_shape.ENTRIES,
    *table_nn.ENTRIES,
    *table_linalg.ENTRIES,
]

# entry id (gradcheck) or ``id/gradgrad`` (gradgradcheck) -> what is wrong today; strict xfail
KNOWN_BROKEN: dict[str, str] = {}


def _inplace(e: Entry, meth: str) -> Entry:
    """``Tensor.<name>_`` checked on a clone of the out-of-place entry's first input."""
    rest, kwargs = e.args[1:], e.kwargs

    def run(x: ember.Tensor, *xs: ember.Tensor) -> Any:
        it = iter(xs)
        return getattr(x.clone(), meth)(*(next(it) if isinstance(a, A) else a for a in rest), **kwargs)

    return Entry(f"Tensor.{meth}", e.args, {}, run, e.gradgrad, e.case, e.atol, e.rtol, e.eps)


def _inplace_entries(table: list[Entry]) -> list[Entry]:
    by_name: dict[str, Entry] = {}
    for e in table:
        if e.fn is None and e.args and isinstance(e.args[0], A) and "." not in e.name:
            by_name.setdefault(e.name, e)
    return [
        _inplace(by_name[n[:-1]], n)
        for n in dir(ember.Tensor)
        if n.endswith("_") and f"Tensor.{n}" in public_ops() and n[:-1] in by_name
    ]


def _modules() -> dict[str, Any]:
    import importlib

    return {p: importlib.import_module(m) for p, m in PREFIXES.items()}


def public_ops() -> dict[str, Any]:
    """Every public callable by table name: module functions and Tensor methods.

    Names that are one object (``ember.special.erf`` is ``ember.erf``) are all listed: one
    of them in the table covers the others. A method named like a function (``x.exp()``
    calls ``ember.exp``) is that function's alias and is not listed.
    """
    out: dict[str, Any] = {}
    for prefix, mod in _modules().items():
        for n in mod.__all__:
            obj = getattr(mod, n)
            if callable(obj) and not inspect.isclass(obj):
                out[prefix + n] = obj
    functions = {n.split(".")[-1] for n in out}
    for n in dir(ember.Tensor):
        if n.startswith("_") or n in functions:
            continue
        obj = getattr(ember.Tensor, n)
        if callable(obj) and not isinstance(obj, type):
            out[f"Tensor.{n}"] = obj
    return out


def uncovered() -> list[str]:
    """Public names that neither list covers, directly or through an alias (the same object)."""
    pub = public_ops()
    named = {e.name for e in TABLE} | set(NOT_DIFFERENTIABLE)
    covered = {id(pub[n]) for n in named if n in pub and not n.startswith("Tensor.")}
    return sorted(n for n, obj in pub.items() if n not in named and id(obj) not in covered)


TABLE += _inplace_entries(TABLE)
