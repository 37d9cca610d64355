"""Code generation: a recording (``_capture``) becomes one Python function of straight-line
kernel calls, the replay.

Each value is a local variable; each kernel call is one line that looks its kernel up in the
backend's resolved table (so a dispatch mode entered later, e.g. the profiler, still sees the
calls, and ``use_deterministic_algorithms`` still applies); a value is deleted after its last
use, so replay holds no more memory than eager does. The source is kept: ``.code`` of a
compiled function shows it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ember import _dispatch
from ember.backends import registry
from ember.backends.graph import values, written

from ._capture import _DATA_SHAPED, Fresh, Obj, Ref, Rng, Step

__all__ = ["Mismatch", "Program", "generate", "irreversible_at"]


class Mismatch(Exception):
    """Replay saw something capture did not (a guard, a host value, a data-dependent shape).

    ``safe`` says whether nothing that outlives the call has happened yet (then the call can
    run eagerly instead)."""

    def __init__(self, why: str, safe: bool = True) -> None:
        super().__init__(why)
        self.safe = safe


@dataclass
class Program:
    """A generated function and what it needs."""

    fn: Any
    source: str
    kernels: int  # kernel calls per replay
    names: dict[str, Any] = field(default_factory=dict)


def irreversible_at(steps: list[Step], outer: set[int]) -> list[bool]:
    """For each step, whether something that outlives the call happened before it."""
    flags, done = [], False
    for s in steps:
        flags.append(done)
        done = (
            done
            or s.kind in ("set_data", "set_grad")
            or (s.kind == "call" and not s.note)
            or (s.kind == "kernel" and any(n in outer for n in values(written(s.op, s.args, s.kwargs))))
        )
    return flags


def _uses(a: Any, out: list[int]) -> None:
    if isinstance(a, Ref):
        out.append(a.n)
    elif isinstance(a, Fresh):
        out.append(a.ref.n)
    elif isinstance(a, (list, tuple)):
        for x in a:
            _uses(x, out)
    elif isinstance(a, dict):
        for x in a.values():
            _uses(x, out)


class _Writer:
    def __init__(self, objects: list[Any], arrays: list[Any]) -> None:
        self.objects = objects
        self.arrays = arrays
        self.ns: dict[str, Any] = {
            "_to_host": _dispatch.to_host,
            "_same": _same,
            "_like": _like,
            "Mismatch": Mismatch,
        }
        self.names: dict[int, str] = {}  # value -> expression
        self.backends: dict[str, str] = {}
        self.lines: list[str] = []
        self.kernels = 0
        self._rng = 0
        self.fresh: set[int] = set()  # objects a capture made and kept (a .grad): made anew per replay
        self.made: set[int] = set()  # ... those made so far in the replay being written

    def const(self, value: Any) -> str:
        if value is None or isinstance(value, (bool, int, str)):
            return repr(value)
        if isinstance(value, float) and math.isfinite(value):
            return repr(value)
        if isinstance(value, (tuple, list)) and all(
            v is None or isinstance(v, (bool, int, str)) or (isinstance(v, float) and math.isfinite(v))
            for v in value
        ):
            return repr(value)
        name = f"c{len(self.ns)}"
        self.ns[name] = value
        return name

    def obj(self, j: int) -> str:
        name = f"o{j}"
        self.ns[name] = self.objects[j]
        return name

    def target(self, t: tuple[str, int]) -> str:
        if t[0] == "in":
            return f"I[{t[1]}]"
        return f"t{t[1]}" if t[1] in self.made else self.obj(t[1])

    def table(self, backend: str) -> str:
        name = self.backends.get(backend)
        if name is None:
            name = self.backends[backend] = f"K{len(self.backends)}"
            self.ns[name] = registry.get(backend).k
            self.ns["L" + name[1:]] = registry.get(backend)
        return name

    def expr(self, a: Any, draws: dict[tuple[int, int], str]) -> str:
        if isinstance(a, Ref):
            return self.names[a.n]
        if isinstance(a, Rng):
            return f"{draws[(a.gen, a.words)]}[{a.part}]"
        if isinstance(a, tuple):
            inner = ", ".join(self.expr(x, draws) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(self.expr(x, draws) for x in a) + "]"
        return self.const(a)

    def bind(self, out: Any, fresh: set[int]) -> str | None:
        """The left-hand side that names a kernel result's new values (None: nothing new)."""
        if isinstance(out, Ref):
            if out.n in fresh:
                self.names[out.n] = f"v{out.n}"
                return f"v{out.n}"
            return None
        if isinstance(out, (list, tuple)) and any(isinstance(x, Ref) and x.n in fresh for x in out):
            parts = []
            for x in out:
                if isinstance(x, Ref) and x.n in fresh:
                    self.names[x.n] = f"v{x.n}"
                    parts.append(f"v{x.n}")
                else:
                    parts.append("_")
            return ", ".join(parts) + ("," if len(parts) == 1 else "")
        return None


def generate(
    steps: list[Step],
    outer: set[int],
    objects: list[Any],
    arrays: list[Any],
    *,
    params: str,
    given: dict[int, str],
    returns: list[Any],
    guards: list[str],
    keep: set[int] = frozenset(),  # type: ignore[assignment]
    remade: set[int] = frozenset(),  # type: ignore[assignment]
) -> Program:
    """Write ``def replay(<params>)`` running ``steps``; values in ``given`` are expressions
    over the parameters; ``returns`` are Refs (or tuples ``("host", Ref)``) returned in order."""
    w = _Writer(objects, arrays)
    w.fresh = set(remade)
    w.names.update(given)
    for j, o in enumerate(objects):
        w.ns[f"o{j}"] = o
    late = irreversible_at(steps, outer)
    tail = len(steps)
    while tail > 0 and steps[tail - 1].kind in ("host", "read", "const"):
        tail -= 1
    # Last use of each value, so it can be freed after.
    last: dict[int, int] = {}
    for i, s in enumerate(steps):
        used: list[int] = []
        _uses(s.args, used)
        _uses(s.kwargs, used)
        for n in used:
            last[n] = i
    ret_values: list[int] = []
    _uses(returns, ret_values)
    pinned = set(ret_values) | set(keep) | set(given)
    body = w.lines
    body.extend(guards)
    owner: dict[int, str] = {}  # a read value -> the tensor it was read from
    for i, s in enumerate(steps):
        fresh: set[int] = set()
        if s.kind == "const":
            n = s.out.n
            name = f"a{n}"
            w.ns[name] = s.args[0]
            w.names[n] = name
            continue
        if s.kind == "read":
            if s.out.n not in last and s.out.n not in pinned:
                continue  # read but never used by a kernel
            w.names[s.out.n] = f"v{s.out.n}"
            owner[s.out.n] = w.target(s.target)
            body.append(f"v{s.out.n} = {owner[s.out.n]}._data")
            continue
        draws: dict[tuple[int, int], str] = {}
        rngs: list[Rng] = []
        _rngs(s.args, rngs)
        for r in rngs:
            if (r.gen, r.words) not in draws:
                name = draws[(r.gen, r.words)] = f"r{w._rng}"
                w._rng += 1
                body.append(f"{name} = {w.obj(r.gen)}.take({r.words})")
        if s.kind == "kernel":
            _fresh_values(s.out, w.names, fresh)
            args = ", ".join(w.expr(a, draws) for a in s.args)
            kw = "".join(f", {k}={w.expr(v, draws)}" for k, v in s.kwargs.items())
            table = w.table(s.backend)
            if s.fn is not None:
                name = f"f{i}"
                w.ns[name] = s.fn
                call = f"{name}({args}{kw})"
            elif s.op == "from_host":
                call = f"_dispatch_from_host(L{table[1:]}, {args}{kw})"
                w.ns["_dispatch_from_host"] = _dispatch.from_host
            else:
                call = f"{table}[{s.op!r}]({args}{kw})"
            lhs = w.bind(s.out, fresh)
            body.append(f"{lhs} = {call}" if lhs else call)
            w.kernels += 1
            for n in values(
                written(s.op, s.args, s.kwargs)
            ):  # an in-place write moves the tensor's version on, as eager's does
                if n in owner:
                    body.append(f"{owner[n]}._vc[0] += 1")
            if s.op in _DATA_SHAPED and s.note is not None:
                body.append(
                    f"if {w.names[s.out.n]}.shape != {tuple(s.note)!r}: "
                    f"raise Mismatch('a data-dependent shape changed', {not late[i]})"
                )
        elif s.kind == "guard":
            who = w.target(s.target)
            want = "None" if s.note is None else w.obj(s.note)
            body.append(f"if {who}._grad is not {want}: raise Mismatch('guard', {not late[i]})")
        elif s.kind == "host" and not s.kwargs.get("varies", True) and i < tail:
            if s.out is not None and s.out.n in last:  # a constant: computed, never checked
                table = w.table(s.backend)
                w.names[s.out.n] = f"v{s.out.n}"
                body.append(f"v{s.out.n} = _to_host(L{table[1:]}, {w.expr(s.args[0], draws)})")
        elif s.kind == "host" and s.op == "test":
            table = w.table(s.backend)
            w.ns["_host_test"] = _dispatch.host_test
            got = f"_host_test(L{table[1:]}, {w.expr(s.args[0], draws)}, {w.const(s.args[1])})"
            body.append(
                f"if {got} != {w.const(s.note)}: raise Mismatch('a checked value changed', {not late[i]})"
            )
        elif s.kind == "host":
            table = w.table(s.backend)
            n = s.out.n
            w.names[n] = f"v{n}"
            body.append(f"v{n} = _to_host(L{table[1:]}, {w.expr(s.args[0], draws)})")
            if i < tail:  # a value the function went on with: it must be the one captured
                seen = w.const(s.note)
                body.append(
                    f"if not _same(v{n}, {seen}): raise Mismatch('a host value changed', {not late[i]})"
                )
        elif s.kind == "set_data":
            if s.target[0] == "obj" and s.target[1] in w.fresh and s.target[1] not in w.made:
                # a fresh tensor each replay, as eager's backward makes a fresh .grad
                j = s.target[1]
                body.append(f"t{j} = _like({w.obj(j)}, {w.expr(s.args[0], draws)})")
                w.made.add(j)
            else:
                body.append(f"{w.target(s.target)}._data = {w.expr(s.args[0], draws)}")
        elif s.kind == "set_grad":
            g = s.args[0]
            body.append(f"{w.target(s.target)}._grad = {'None' if g is None else w.target(g)}")
        elif s.kind == "call":
            fn, cargs = s.args
            a = ", ".join(_call_expr(w, x) for x in cargs)
            kw = "".join(f", {k}={_call_expr(w, v)}" for k, v in s.kwargs.items())
            body.append(f"{w.obj(fn)}({a}{kw})".replace("(, ", "("))
        dead = sorted(n for n, j in last.items() if j == i and n not in pinned and n in w.names)
        dead = [n for n in dead if w.names[n].startswith("v")]
        if dead:
            body.append("del " + ", ".join(w.names[n] for n in dead))
    body.append("return (" + "".join(_ret_expr(w, r) + ", " for r in returns) + ")")
    src = f"def replay({params}):\n" + "".join(f"    {line}\n" for line in body)
    code = compile(src, "<ember.compile>", "exec")
    exec(code, w.ns)  # noqa: S102 - our own generated source
    fused = "".join(
        f"\n# {name}: fused by the backend\n{fn.source}"
        for name, fn in w.ns.items()
        if name.startswith("f") and name[1:].isdigit() and getattr(fn, "source", None)
    )
    return Program(w.ns["replay"], src + fused, w.kernels, w.ns)


def _fresh_values(out: Any, names: dict[int, str], fresh: set[int]) -> None:
    if isinstance(out, Ref):
        if out.n not in names:
            fresh.add(out.n)
    elif isinstance(out, (list, tuple)):
        for x in out:
            _fresh_values(x, names, fresh)


def _rngs(a: Any, out: list[Rng]) -> None:
    if isinstance(a, Rng):
        out.append(a)
    elif isinstance(a, (list, tuple)):
        for x in a:
            _rngs(x, out)


def _call_expr(w: _Writer, a: Any) -> str:
    if isinstance(a, Obj):
        return f"I[{a.j}]" if a.arg else w.obj(a.j)
    if isinstance(a, Fresh):
        return f"_like({w.obj(a.j)}, {w.names[a.ref.n]})"
    if isinstance(a, list):
        return "[" + ", ".join(_call_expr(w, x) for x in a) + "]"
    if isinstance(a, tuple):
        return "(" + "".join(_call_expr(w, x) + ", " for x in a) + ")"
    return w.const(a)


def _ret_expr(w: _Writer, r: Any) -> str:
    if isinstance(r, Ref):
        return w.names[r.n]
    return "None"


def _same(got: Any, seen: Any) -> bool:
    return bool(got.shape == seen.shape and np.array_equal(got, seen, equal_nan=got.dtype.kind in "fc"))


def _like(t: Any, data: Any) -> Any:
    """A fresh tensor with ``t``'s metadata around ``data`` (shapes are the capture's: a
    backend's arrays need not carry one)."""
    from ember._tensor import wrap

    return wrap(data, t._be, t._device, t.dtype, t._shape)
