"""Capture: run a function once, eagerly, while recording what it did at the kernel door.

The recording is a list of steps in the order they happened (``Step`` kinds below): kernel
calls with their arguments as references to earlier results, reads of a tensor's array that
came from outside (an argument, a parameter, an optimizer's buffer), writes of a tensor's array
or ``.grad`` that outlive the call, host reads (``.item()``, ``bool(t)``), draws from a random
generator, and calls of functions marked ``ember.compiler.disable`` (the optimizers' ``step`` and
``zero_grad``, the LR schedulers' ``step``), which replay runs eagerly in their place. Because
every kernel passes the one door (``ember._dispatch``), forward, backward and anything else the
function runs are seen alike; nothing here knows what an op means.

How arrays are told apart: every array a kernel returns gets a value number; an array read
from a tensor that existed before the capture (or is an argument) is a *read* of that tensor,
redone at replay; any other array is a constant held by the plan. A tensor's ``_data`` and
``_grad`` slots are watched while capturing only (the class's slot descriptors are swapped for
properties and put back after), so eager code pays nothing.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ember import _random
from ember._dispatch import DispatchMode
from ember._tensor import Tensor
from ember.backends.graph import Value as Ref
from ember.backends.graph import values, written

from ._disable import capturing

__all__ = ["Capture", "Fresh", "Obj", "Ref", "Rng", "Step", "active"]

# Kernels whose result's shape depends on the data (replay checks the shape is the one captured).
_DATA_SHAPED = frozenset({"nonzero"})

_SLOT_DATA = Tensor.__dict__["_data"]
_SLOT_GRAD = Tensor.__dict__["_grad"]


@dataclass(frozen=True)
class Rng:
    """A Philox key or counter drawn from generator ``gen`` (an object index) at replay."""

    gen: int
    words: int
    part: int  # 0: key, 1: counter


@dataclass(frozen=True)
class Obj:
    """An argument of an eager-only call: held object ``j`` (or argument ``j`` when ``arg``)."""

    j: int
    arg: bool = False


@dataclass(frozen=True)
class Fresh:
    """An argument of an eager-only call: a tensor made in the call, value ``ref``, shaped like
    held object ``j``."""

    ref: Ref
    j: int


@dataclass
class Step:
    """One recorded event. ``kind`` is one of:

    - ``kernel``: ``op`` on ``backend`` with ``args``/``kwargs`` (Refs, Rngs, constants), result
      ``out`` (the same structure with new Refs);
    - ``read``: value ``out`` is the array of ``target`` at this point;
    - ``const``: value ``out`` is the array ``args[0]`` (held by the plan);
    - ``set_data`` / ``set_grad``: ``target``'s array becomes ``args[0]`` (a Ref) / its ``.grad``
      becomes ``args[0]`` (a target or None);
    - ``host``: value ``out`` is ``args[0]`` copied to the host (``note``: what capture saw); with
      ``op == "test"``, the result of the check ``args[1]`` on it (replay compares the result);
    - ``guard``: ``target``'s ``.grad`` is held object ``note`` (or None when ``note`` is None);
    - ``call``: an eager-only function ``args[0]`` called with ``args[1]``/``kwargs`` (``note``:
      whether it is idempotent).
    """

    kind: str
    op: str = ""
    backend: str = ""
    args: Any = ()
    kwargs: Any = field(default_factory=dict)
    out: Any = None
    target: Any = None
    note: Any = None  # host: the array capture saw; a data-shaped kernel: its result's shape
    fn: Any = None  # a backend's fused callable in place of op's kernel (``compile_graph``)


_active: list[Capture] = capturing  # shared with ``_disable``, which must stay import-light


def active() -> Capture | None:
    """The capture running now, or None."""
    return _active[-1] if _active else None


class Capture(DispatchMode):
    """Records one call; use as ``with Capture(inputs) as cap: result = fn(...)``."""

    def __init__(self, inputs: list[Tensor]) -> None:
        self.steps: list[Step] = []
        self.values: dict[int, int] = {}  # id(array) -> value number
        self.arrays: list[Any] = []  # every value's array, alive so ids stay unique
        # id(array) -> the tensor it was last read from (weakly: a held gradient would no
        # longer be the engine's to steal, and capture would record copies eager does not make)
        self.reader: dict[int, weakref.ref[Tensor]] = {}
        self.inputs = {id(t): i for i, t in enumerate(inputs)}
        self.inputs_list = inputs
        self.objects: list[Any] = []  # tensors, generators, modules, functions the plan holds
        self._object_ids: dict[int, int] = {}
        # Tensors made while capturing, and those an eager-only call made (ids: a reused id is
        # another tensor made while capturing, as every older object is still alive).
        self.created: set[int] = set()
        self.from_callback: set[int] = set()
        self.outer: set[int] = set()  # values from outside the call: reads and constants
        # Values that depend on the call's data (reads, random draws, and what kernels make of
        # them); a host read of any other value sees the same thing every call: no guard.
        self.varying: set[int] = set()
        self.tracked: set[int] = set()  # made while capturing, yet reachable after (a .grad)
        self.grad_guarded: set[int] = set()  # tensors whose .grad replay checks (once each)
        self.modules: dict[int, Any] = {}  # modules called: their training flag is guarded
        self.paused = 0
        self.thread = threading.get_ident()  # other threads' work (a loader's) is not recorded
        self.irreversible = False  # a step changed state that lives past the call
        self.unreplayable: str | None = None
        self.backward_runs = 0
        self._rng: dict[tuple, tuple[int, int]] = {}

    # -- entering ----------------------------------------------------------------------------
    def __enter__(self) -> Capture:  # noqa: PYI034 - typing.Self needs Python 3.11
        _note_array_types()
        super().__enter__()
        _active.append(self)
        _install()
        return self

    def __exit__(self, *exc: object) -> None:
        _active.pop()
        if not _active:
            _uninstall()
        super().__exit__(*exc)

    # -- values ------------------------------------------------------------------------------
    def _new_value(self, array: Any) -> Ref:
        n = len(self.arrays)
        self.arrays.append(array)
        self.values[id(array)] = n
        return Ref(n)

    def obj(self, o: Any) -> int:
        """The index of ``o`` among the objects the plan holds."""
        i = self._object_ids.get(id(o))
        if i is None:
            i = self._object_ids[id(o)] = len(self.objects)
            self.objects.append(o)
        return i

    def target(self, t: Tensor) -> tuple[str, int]:
        """How replay finds tensor ``t``: the i-th argument, or a held object."""
        i = self.inputs.get(id(t))
        return ("in", i) if i is not None else ("obj", self.obj(t))

    def _outside(self, t: Tensor) -> bool:
        """Whether ``t`` lives past the call: it came from outside, or was attached to one that did."""
        return id(t) not in self.created or id(t) in self.tracked

    def ref(self, a: Any) -> Ref:
        """The value of array ``a`` (a read or a constant when no step made it)."""
        n = self.values.get(id(a))
        if n is not None:
            return Ref(n)
        w = self.reader.get(id(a))
        t = None if w is None else w()
        if t is not None and id(t) in self.from_callback:
            self._refuse("a tensor made by an eager-only function (ember.compiler.disable) feeds the graph")
        r = self._new_value(a)
        self.outer.add(r.n)
        if t is not None and self._outside(t) and _SLOT_DATA.__get__(t, Tensor) is a:
            self.varying.add(r.n)
            self.steps.append(Step("read", out=r, target=self.target(t)))
        else:
            self.steps.append(Step("const", args=(a,), out=r))
        return r

    def spec(self, a: Any) -> Any:
        """``a`` with arrays replaced by Refs (nested lists and tuples kept)."""
        if isinstance(a, (list, tuple)):
            return type(a)(self.spec(x) for x in a)
        if _is_array(a):
            return self.ref(a)
        return a

    def define(self, a: Any) -> Any:
        """Number the new arrays of a kernel's result (arrays seen before keep their value)."""
        if isinstance(a, (list, tuple)):
            return type(a)(self.define(x) for x in a)
        if _is_array(a):
            n = self.values.get(id(a))
            return Ref(n) if n is not None else self._new_value(a)
        return a

    def _refuse(self, why: str) -> None:
        if self.unreplayable is None:
            self.unreplayable = why

    # -- the door ----------------------------------------------------------------------------
    def __ember_dispatch__(self, op: str, backend: str, run: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        if self.paused or threading.get_ident() != self.thread or kwargs.get("structural"):
            return run(*args, **kwargs)
        if op == "philox":
            drawn = self._rng.pop((args[1], args[2]), None)
            sargs: Any = self.spec(args)
            if drawn is not None:
                gen, words = drawn
                sargs = (sargs[0], Rng(gen, words, 0), Rng(gen, words, 1), *sargs[3:])
        else:
            sargs = self.spec(args)
        skw = {k: self.spec(v) for k, v in kwargs.items()}
        self._note_writes(op, args, kwargs)
        varies = self._varies(sargs) or self._varies(skw)
        out = run(*args, **kwargs)
        if op == "to_host":
            seen = np.array(out, copy=True)
            r = self.define(out)
            self.steps.append(
                Step("host", backend=backend, args=sargs, kwargs={"varies": varies}, out=r, note=seen)
            )
            if varies:
                self.varying.add(r.n)
            return out
        if op == "host_test":  # only the test's result matters: guard on it
            self.steps.append(Step("host", "test", backend, sargs, kwargs={"varies": varies}, note=out))
            return out
        step = Step("kernel", op, backend, sargs, skw, self.define(out))
        if varies:
            self.varying.update(values(step.out))
            self.varying.update(values(self.spec(written(op, args, kwargs))))
        if op in _DATA_SHAPED:
            step.note = tuple(out.shape)
        self.steps.append(step)
        return out

    def _varies(self, spec: Any) -> bool:
        return any(n in self.varying for n in values(spec)) or _has_rng(spec)

    def _note_writes(self, op: str, args: tuple, kwargs: dict[str, Any]) -> None:
        target = written(op, args, kwargs)
        for a in target if isinstance(target, (list, tuple)) else (target,):
            if _is_array(a):
                n = self.values.get(id(a))
                if n is None or n in self.outer:  # a write that outlives the call
                    self.irreversible = True

    # -- watched slots -----------------------------------------------------------------------
    def on_get_data(self, t: Tensor, a: Any) -> None:
        self.reader[id(a)] = weakref.ref(t)
        if id(a) not in self.values and self._outside(t):
            self.ref(a)  # the read happens here, before the tensor may be given a new array

    def on_set_data(self, t: Tensor, a: Any, fresh: bool) -> None:
        if fresh:
            self.created.add(id(t))
            if self.paused:
                self.from_callback.add(id(t))
            return
        if self.paused or not self._outside(t):
            return
        r = self.ref(a)
        self.steps.append(Step("set_data", args=(r,), target=self.target(t)))
        self.irreversible = True

    def on_get_grad(self, t: Tensor, g: Any) -> None:
        if self.paused or id(t) in self.created or id(t) in self.grad_guarded:
            return
        self.grad_guarded.add(id(t))
        self.steps.append(Step("guard", target=self.target(t), note=None if g is None else self.obj(g)))

    def on_set_grad(self, t: Tensor, g: Any) -> None:
        if self.paused or not self._outside(t):
            return
        self.grad_guarded.add(id(t))
        if g is not None and not self._outside(g):
            self.tracked.add(id(g))
            self.steps.append(
                Step("set_data", args=(self.ref(_SLOT_DATA.__get__(g, Tensor)),), target=self.target(g))
            )
        self.steps.append(
            Step("set_grad", args=(None if g is None else self.target(g),), target=self.target(t))
        )
        self.irreversible = True

    # -- eager-only calls, random draws, modules ---------------------------------------------
    def call_eagerly(self, fn: Any, args: tuple, kwargs: dict[str, Any], idempotent: bool = False) -> Any:
        """Record a call replay makes in place of what ``fn`` does, and run it unrecorded
        (``idempotent``: running it twice is running it once, as ``zero_grad``)."""
        sargs = tuple(self._call_arg(a) for a in args)
        skw = {k: self._call_arg(v) for k, v in kwargs.items()}
        self.steps.append(Step("call", args=(self.obj(fn), sargs), kwargs=skw, note=idempotent))
        self.irreversible = self.irreversible or not idempotent
        self.paused += 1
        try:
            return fn(*args, **kwargs)
        finally:
            self.paused -= 1

    def _call_arg(self, a: Any) -> Any:
        if isinstance(a, Tensor):
            if self._outside(a):
                where, j = self.target(a)
                return Obj(j, arg=where == "in")
            return Fresh(self.ref(_SLOT_DATA.__get__(a, Tensor)), self.obj(a))
        if isinstance(a, (list, tuple)):
            return type(a)(self._call_arg(x) for x in a)
        return Obj(self.obj(a))

    def on_take(self, gen: Any, words: int, key: tuple, counter: tuple) -> None:
        if not self.paused:
            self._rng[(key, counter)] = (self.obj(gen), words)

    def on_module_call(self, module: Any) -> None:
        if not self.paused:
            self.modules.setdefault(id(module), module)


def _has_rng(a: Any) -> bool:
    if isinstance(a, Rng):
        return True
    if isinstance(a, (list, tuple)):
        return any(_has_rng(x) for x in a)
    if isinstance(a, dict):
        return any(_has_rng(x) for x in a.values())
    return False


def _is_array(a: Any) -> bool:
    """A native array of a loaded backend (or a host array): what gets a value number."""
    return isinstance(a, _array_types[0]) and not isinstance(a, (np.generic, Tensor, type))


_array_types: list[tuple[type, ...]] = [(np.ndarray,)]


def _note_array_types() -> None:
    from ember.backends import registry

    kinds = {
        np.ndarray,
        *(getattr(lb.backend, "array_type", np.ndarray) for lb in list(registry._loaded.values())),
    }
    _array_types[0] = tuple(kinds)


# -- the watched slots, installed while a capture runs ---------------------------------------
def _get_data(t: Tensor) -> Any:
    a = _SLOT_DATA.__get__(t, Tensor)
    cap = _active[-1]
    if not cap.paused and threading.get_ident() == cap.thread:
        cap.on_get_data(t, a)
    return a


def _set_data(t: Tensor, a: Any) -> None:
    try:
        _SLOT_DATA.__get__(t, Tensor)
        fresh = False
    except AttributeError:
        fresh = True
    _SLOT_DATA.__set__(t, a)
    cap = _active[-1]
    if threading.get_ident() == cap.thread:
        cap.on_set_data(t, a, fresh)
    elif fresh:  # made by another thread while capturing: never an outside tensor of this call
        cap.created.add(id(t))


def _get_grad(t: Tensor) -> Any:
    g = _SLOT_GRAD.__get__(t, Tensor)
    cap = _active[-1]
    if threading.get_ident() == cap.thread:
        cap.on_get_grad(t, g)
    return g


def _set_grad(t: Tensor, g: Any) -> None:
    try:
        _SLOT_GRAD.__get__(t, Tensor)
    except AttributeError:  # wrap() initialising a fresh tensor
        _SLOT_GRAD.__set__(t, g)
        return
    _SLOT_GRAD.__set__(t, g)
    cap = _active[-1]
    if threading.get_ident() == cap.thread:
        cap.on_set_grad(t, g)


_saved_take: Any = None
_saved_call: Any = None


def _take(self: Any, n: int) -> Any:
    key, counter = _saved_take(self, n)
    if threading.get_ident() == _active[-1].thread:
        _active[-1].on_take(self, n, key, counter)
    return key, counter


def _install() -> None:
    global _saved_take, _saved_call
    from ember.nn.modules.module import Module

    Tensor._data = property(_get_data, _set_data)  # type: ignore[assignment]
    Tensor._grad = property(_get_grad, _set_grad)  # type: ignore[assignment]
    _saved_take = _random.Generator.take
    _random.Generator.take = _take  # type: ignore[method-assign]
    _saved_call = Module.__call__

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _active and threading.get_ident() == _active[-1].thread:
            _active[-1].on_module_call(self)
        return _saved_call(self, *args, **kwargs)

    Module.__call__ = call  # type: ignore[method-assign]


def _uninstall() -> None:
    from ember.nn.modules.module import Module

    Tensor._data = _SLOT_DATA  # type: ignore[misc]
    Tensor._grad = _SLOT_GRAD  # type: ignore[misc]
    _random.Generator.take = _saved_take  # type: ignore[method-assign]
    Module.__call__ = _saved_call  # type: ignore[method-assign]
