"""A compiled callable: per input signature, capture once, then replay.

The signature is what decides which kernels run: tensor shapes, dtypes, devices and
``requires_grad``, the other arguments' values, grad mode and autocast state. Inside a
signature, guards the capture wrote (a module's ``training`` flag, whether a parameter's
``.grad`` is set, an outside tensor's shape) pick one of up to ``CACHE_LIMIT`` plans, or make a
new one. A function that reads a tensor's value on the host and then changes state (a
``.item()`` between ``backward()`` and an in-place update) cannot be replayed: it runs eagerly,
or raises with ``fullgraph=True``.

Two kinds of plan: a *step* (the function ran ``backward()`` itself: forward, backward and the
updates all replay, and returned tensors are detached, as a step's outputs are); and a
*differentiable* forward (outputs require grad, no backward inside): replay is one autograd
node whose backward replays the captured backward, as AOTAutograd gives ``torch.compile``.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Any

from ember._tensor import Tensor, wrap
from ember.autograd import engine
from ember.autograd import grad as autograd_grad
from ember.autograd.function import Function
from ember.autograd.grad_mode import state as grad_state
from ember.backends.graph import values, written

from . import _fuse
from ._capture import _SLOT_DATA, Capture, Ref
from ._codegen import Mismatch, Program, generate, irreversible_at
from ._config import config
from ._disable import capturing

__all__ = ["CACHE_LIMIT", "CompiledFunction", "Unsupported"]

CACHE_LIMIT = 8  # plans per function, as torch._dynamo's cache_size_limit


class Unsupported(RuntimeError):
    """What ``fullgraph=True`` raises where the function cannot be captured whole."""


@dataclass
class _Plan:
    kind: str  # "replay" (no autograd node) or "autograd"
    forward: Program | None
    backward: Program | None
    template: Any  # how to rebuild the Python result from the returned values
    n_out: int = 0  # autograd: values before the saved ones
    out_meta: list[Any] = field(default_factory=list)  # autograd: a tensor like each output
    grad_outs: list[int] = field(default_factory=list)  # autograd: outputs the backward takes
    targets: list[Any] = field(default_factory=list)  # autograd: (in/obj, index) of grad inputs
    why: str | None = None  # set when the function runs eagerly
    mismatches: int = 0
    last_mismatch: str = ""
    single: Any = None  # replay returning one tensor: a tensor like it (the fast path)
    inputs: list[tuple] = field(default_factory=list)  # (shape, dtype, device, requires_grad) per argument


class CompiledFunction:
    """``ember.compile(fn)``: call it as ``fn``."""

    def __init__(self, fn: Any, fullgraph: bool, backend: str) -> None:
        self._fn = fn
        self._fullgraph = fullgraph
        self._backend = backend
        self._cache: dict[tuple, list[_Plan]] = {}
        self._plans = 0
        self._warned = False
        self._warm: dict[tuple, int] = {}
        self.warmup: int | None = None  # eager calls before a capture (None: config.warmup)

    # -- inspection --------------------------------------------------------------------------
    @property
    def code(self) -> str:
        """The generated replay source of the latest plan (empty before the first call)."""
        for plans in reversed(list(self._cache.values())):
            for p in plans:
                if p.forward is not None:
                    return p.forward.source + ("" if p.backward is None else "\n" + p.backward.source)
        return ""

    def explain(self) -> list[str]:
        """Why captured signatures run eagerly, always or on some calls (empty: every call replays)."""
        found = []
        for plans in self._cache.values():
            for p in plans:
                if p.why:
                    found.append(p.why)
                elif p.mismatches:
                    found.append(f"{p.mismatches} call(s) ran eagerly: {p.last_mismatch}")
        return found

    def reset(self) -> None:
        self._cache.clear()
        self._warm.clear()
        self._plans = 0

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._backend == "eager" or _disabled[0] or capturing:  # nested: the outer capture records it
            return self._fn(*args, **kwargs)
        parts: list[Any] = [grad_state.enabled, _autocast_key()]
        tensors: list[Tensor] = []
        for a in args:
            if isinstance(a, Tensor):  # the common case, inline
                tensors.append(a)
                parts.append(a._shape)
                parts.append(id(a.dtype))  # dtypes and devices are interned: ids hash fast
                parts.append(id(a._device))
                parts.append(a._requires_grad or a.grad_fn is not None)
            else:
                _walk(a, parts, tensors)
        if kwargs:
            _walk(kwargs, parts, tensors)
        key = tuple(parts)
        plans = self._cache.get(key)
        if plans is not None:
            for plan in plans:
                if plan.forward is None:
                    return self._fn(*args, **kwargs)
                try:
                    return self._replay(plan, tensors)
                except Mismatch as m:
                    if not m.safe:
                        raise RuntimeError(f"ember.compile: {m} after the step changed state") from None
                    if str(m) == "guard":
                        continue
                    plan.mismatches += 1
                    plan.last_mismatch = str(m)
                    if plan.mismatches > CACHE_LIMIT:
                        plan.forward, plan.why = None, f"{m} on more than {CACHE_LIMIT} calls"
                    return self._fn(*args, **kwargs)
        elif self._warm.get(key, 0) < (config.warmup if self.warmup is None else self.warmup):
            # The first call of a signature runs eagerly, as TinyJit's: state made lazily on a
            # first call (LazyLinear's weights, an optimizer's or scaler's buffers) is made by
            # then, and the capture sees the steady step.
            self._warm[key] = self._warm.get(key, 0) + 1
            return self._fn(*args, **kwargs)
        if self._plans >= config.cache_size_limit:
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"ember.compile: {getattr(self._fn, '__qualname__', self._fn)} was captured "
                    f"{config.cache_size_limit} times (the cache limit); further signatures run eagerly",
                    stacklevel=2,
                )
            return self._fn(*args, **kwargs)
        plan, result = self._capture(args, kwargs, tensors)
        plan.inputs = [(t._shape, t.dtype, t._device, t.requires_grad) for t in tensors]
        self._plans += 1
        self._cache.setdefault(key, []).append(plan)
        return result

    def _replay(self, plan: _Plan, tensors: list[Tensor]) -> Any:
        assert plan.forward is not None
        if plan.kind == "autograd" and grad_state.enabled:
            outs = _Replayed.apply(plan, tensors, *_grad_inputs(plan, tensors))
            values: Any = list(outs if isinstance(outs, tuple) else (outs,))
            return _rebuild(plan.template, values, tensors, plan.forward, True)
        if plan.single is not None:  # one tensor returned: no walk over the template
            (v,) = plan.forward.fn(tensors)
            m = plan.single
            return wrap(v, m._be, m._device, m.dtype, m._shape)
        values = plan.forward.fn(tensors)
        return _rebuild(plan.template, values, tensors, plan.forward, False)

    # -- capturing ---------------------------------------------------------------------------
    def _capture(self, args: tuple, kwargs: dict[str, Any], tensors: list[Tensor]) -> tuple[_Plan, Any]:
        runs = engine.runs[0]
        with Capture(tensors) as cap:
            result = self._fn(*args, **kwargs)
            step = engine.runs[0] != runs
            outs = [] if step or not grad_state.enabled else _differentiable_outputs(cap, result)
            split = len(cap.steps)
            backward = _capture_backward(cap, outs) if outs else None
        _hoist_guards(cap.steps, split)
        split = _hoist_host_checks(cap.steps, split)
        why = cap.unreplayable
        late = irreversible_at(cap.steps, cap.outer)
        for i, s in enumerate(cap.steps[:split]):
            if (
                s.kind in ("host", "guard")
                and late[i]
                and any(
                    t.kind in ("kernel", "set_data", "set_grad", "call") for t in cap.steps[i + 1 : split]
                )
            ):
                why = (
                    why
                    or "a tensor's value is read on the host (.item(), bool(), .tolist()) after the call changed state"
                )
        if backward is not None and any(s.kind not in ("kernel", "read", "const") for s in cap.steps[split:]):
            why = why or "the backward of the captured forward does more than run kernels (a hook?)"
        if why is not None:
            if self._fullgraph:
                raise Unsupported(f"ember.compile(fullgraph=True): {why}")
            return _Plan("replay", None, None, None, why=why), result
        template, returns = _template(cap, result, cap.steps[:split])
        guards = _guards(cap)
        fuse = self._backend != "replay"
        if backward is None:
            keep = {r.n for r in returns}
            steps = _fuse.fuse(cap.steps, keep, cap.arrays) if fuse else cap.steps
            prog = generate(
                steps,
                cap.outer,
                cap.objects,
                cap.arrays,
                params="I",
                given={},
                returns=returns,
                guards=guards,
                remade=_kept(cap),
            )
            plan = _Plan("replay", prog, None, template)
            if template[0] == "tensor" and len(returns) == 1:
                plan.single = template[2]
            return plan, result
        # A differentiable forward: the forward returns its results and what backward needs.
        gouts, grads = backward
        fwd_steps, bwd_steps = cap.steps[:split], cap.steps[split:]
        defined = {n for s in fwd_steps for n in values(s.out)}
        used_by_bwd: list[int] = []
        for s in bwd_steps:
            used_by_bwd += values((s.args, s.kwargs))
        used_by_bwd += values(grads)
        saved = sorted({n for n in used_by_bwd if n in defined})
        position = {r.n: k for k, r in enumerate(returns)}
        grad_outs = [position[cap.values[id(_SLOT_DATA.__get__(t, Tensor))]] for t in outs]
        fwd_returns = list(returns) + [Ref(n) for n in saved]
        keep = {r.n for r in fwd_returns}
        fwd_steps = _fuse.fuse(fwd_steps, keep, cap.arrays) if fuse else fwd_steps
        fwd = generate(
            fwd_steps,
            cap.outer,
            cap.objects,
            cap.arrays,
            params="I",
            given={},
            returns=fwd_returns,
            guards=guards,
            remade=_kept(cap),
        )
        given = {n: f"S[{k}]" for k, n in enumerate(saved)}
        given.update({n: f"G[{i}]" for i, n in enumerate(gouts)})
        bwd_keep = {r.n for r in grads if r is not None}
        bwd_steps = _fuse.fuse(bwd_steps, bwd_keep, cap.arrays) if fuse else bwd_steps
        bwd = generate(
            bwd_steps,
            cap.outer,
            cap.objects,
            cap.arrays,
            params="S, G",
            given=given,
            returns=grads,
            guards=[],
        )
        metas: list[Any] = [None] * len(returns)
        _metas(template, metas)
        plan = _Plan(
            "autograd",
            fwd,
            bwd,
            template,
            n_out=len(returns),
            out_meta=metas,
            grad_outs=grad_outs,
            targets=[cap.target(t) for t in _targets(cap)],
        )
        return plan, result


class _Replayed(Function):
    """The autograd node of a differentiable compiled forward."""

    @staticmethod
    def forward(ctx: Any, plan: _Plan, tensors: list[Tensor], *grad_inputs: Tensor) -> Any:
        assert plan.forward is not None
        values = plan.forward.fn(tensors)
        ctx.plan, ctx.saved, ctx.grad_inputs = plan, values[plan.n_out :], grad_inputs
        return tuple(
            v if m is None else wrap(v, m._be, m._device, m.dtype, m._shape)
            for m, v in zip(plan.out_meta, values[: plan.n_out])
        )

    @staticmethod
    def backward(ctx: Any, *gouts: Any) -> Any:
        plan = ctx.plan
        arrays = []
        for k in plan.grad_outs:
            g = gouts[k]
            arrays.append(_SLOT_DATA.__get__(g, Tensor) if g is not None else _zeros_like(plan.out_meta[k]))
        assert plan.backward is not None
        grads = plan.backward.fn(ctx.saved, arrays)
        out = [
            None if g is None else wrap(g, m._be, m._device, m.dtype, m._shape)
            for g, m in zip(grads, ctx.grad_inputs)
        ]
        if grad_state.enabled:  # create_graph: first-order gradients whose own backward refuses
            anchors = [t for t in ctx.grad_inputs if t.requires_grad]
            out = [None if g is None else _NoDoubleBackward.apply(g, *anchors) for g in out]
        return (None, None, *out)


class _NoDoubleBackward(Function):
    """A compiled forward's gradient under ``create_graph``: differentiating it raises, as
    PyTorch's AOTAutograd does."""

    @staticmethod
    def forward(ctx: Any, g: Tensor, *anchors: Tensor) -> Tensor:
        return g

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError(
            "ember.compile does not currently support double backward: a compiled forward's gradient "
            "cannot be differentiated again; compile with backend='eager' for that"
        )


# -- helpers -------------------------------------------------------------------------------
_disabled = [False]  # ember.compiler's switch: every compiled function runs eagerly


_amp_tls: list[Any] = []


def _autocast_key() -> Any:
    if not _amp_tls:
        from ember.amp.autocast_mode import _tls

        _amp_tls.append(_tls)
    enabled = getattr(_amp_tls[0], "enabled", None)
    if not enabled or not any(enabled.values()):
        return None
    return tuple(sorted(enabled.items()))


def _walk(a: Any, parts: list[Any], tensors: list[Tensor], depth: int = 0) -> None:
    """Add argument ``a`` to the signature: tensors by shape, dtype, device and requires_grad
    (and to ``tensors``, which replay reads); containers (tuples, lists, dicts, namedtuples,
    dataclasses) by type and content; a user's plain object by type and the tensors in its
    attributes (so ``batch.x = new`` is read afresh); anything else by value, or by identity."""
    if isinstance(a, Tensor):
        tensors.append(a)
        parts.append((a._shape, id(a.dtype), id(a._device), a._requires_grad or a.grad_fn is not None))
    elif isinstance(a, (tuple, list)):
        parts.append(type(a))
        parts.append(len(a))
        for x in a:
            _walk(x, parts, tensors, depth)
    elif isinstance(a, dict):
        parts.append(type(a))
        for k, v in a.items():
            parts.append(k)
            _walk(v, parts, tensors, depth)
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        parts.append(type(a))
        for f in dataclasses.fields(a):
            parts.append(f.name)
            _walk(getattr(a, f.name), parts, tensors, depth)
    elif depth < 2 and _plain_object(a):
        parts.append(type(a))
        for k, v in vars(a).items():
            if isinstance(v, (Tensor, tuple, list, dict)):
                parts.append(k)
                _walk(v, parts, tensors, depth + 1)
    else:
        try:
            hash(a)
            parts.append(a)
        except TypeError:
            parts.append(id(a))


def _plain_object(a: Any) -> bool:
    """A user's own object holding data (a batch), not a module, optimizer, function or class
    (those are held by identity: their tensors are outside tensors, read and guarded)."""
    t = type(a)
    if (
        not hasattr(a, "__dict__")
        or callable(a)
        or isinstance(a, type)
        or t.__module__.startswith(("ember", "builtins"))
    ):
        return False
    from ember.nn.modules.module import Module
    from ember.optim.optimizer import Optimizer

    return not isinstance(a, (Module, Optimizer))


def _flat_tensors(obj: Any) -> list[Tensor]:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for x in obj for t in _flat_tensors(x)]
    if isinstance(obj, dict):
        return [t for x in obj.values() for t in _flat_tensors(x)]
    return []


def _differentiable_outputs(cap: Capture, result: Any) -> list[Tensor]:
    seen: set[int] = set()
    outs = []
    for t in _flat_tensors(result):
        if id(t) in cap.created and t.requires_grad and id(t) not in seen:
            seen.add(id(t))
            outs.append(t)
    return outs


def _targets(cap: Capture) -> list[Tensor]:
    """The tensors a differentiable forward's gradients flow to: arguments and outside tensors
    (parameters) that require grad, in first-read order."""
    found: list[Tensor] = []
    seen: set[int] = set()
    for s in cap.steps:
        if s.kind == "read":
            t = cap.inputs_list[s.target[1]] if s.target[0] == "in" else cap.objects[s.target[1]]
            if t.requires_grad and id(t) not in seen:
                seen.add(id(t))
                found.append(t)
    return found


def _capture_backward(cap: Capture, outs: list[Tensor]) -> tuple[list[int], list[Any]] | None:
    """Record the backward of ``outs`` into ``cap``: (values of the output gradients, Refs of the
    target gradients)."""
    targets = _targets(cap)
    if not targets:
        return None
    gouts, arrays = [], []
    cap.paused += 1
    try:
        from ember import ones_like

        ones = [ones_like(o) for o in outs]
    finally:
        cap.paused -= 1
    for g in ones:
        a = _SLOT_DATA.__get__(g, Tensor)
        cap.from_callback.discard(id(g))
        arrays.append(a)
        gouts.append(cap._new_value(a).n)
    grads = autograd_grad(outs, targets, grad_outputs=ones, allow_unused=True, retain_graph=True)
    refs = [None if g is None else cap.ref(_SLOT_DATA.__get__(g, Tensor)) for g in grads]
    return gouts, refs


def _grad_inputs(plan: _Plan, tensors: list[Tensor]) -> list[Tensor]:
    assert plan.forward is not None
    ns = plan.forward.names
    return [tensors[j] if where == "in" else ns[f"o{j}"] for where, j in plan.targets]


def _metas(t: Any, out: list[Any]) -> None:
    """The tensor each returned position stands for (None: a host value)."""
    if t[0] == "tensor":
        out[t[1]] = t[2]
    elif t[0] == "seq":
        for x in t[2]:
            _metas(x, out)
    elif t[0] == "dict":
        for x in t[2].values():
            _metas(x, out)


def _zeros_like(m: Tensor) -> Any:
    from ember import zeros_like

    return _SLOT_DATA.__get__(zeros_like(m), Tensor)


def _hoist_guards(steps: list[Any], split: int) -> None:
    """Move each ``.grad`` guard up to just after the last step that could change that
    ``.grad`` (an eager-only call, or a write of it), so a failing guard is met before the
    call changes anything that outlives it."""
    for i in range(split):
        s = steps[i]
        if s.kind != "guard":
            continue
        j = i
        while j > 0:
            prev = steps[j - 1]
            if prev.kind == "call" or (prev.kind == "set_grad" and prev.target == s.target):
                break
            j -= 1
        if j < i:
            steps.insert(j, steps.pop(i))


def _hoist_host_checks(steps: list[Any], split: int) -> int:
    """Move each host check of a tensor read straight from an argument or outside tensor (the
    loss's target check) up with its read, to before anything that outlives the call (a
    batch norm's running statistics): a changed value then falls back to eager safely."""
    i = 0
    while i < split:
        s = steps[i]
        if s.kind == "host" and s.args and isinstance(s.args[0], Ref):
            n = s.args[0].n
            r = next((k for k in range(i) if steps[k].kind == "read" and steps[k].out.n == n), None)
            if r is not None and not any(_may_change(t, n, steps[r].target) for t in steps[r + 1 : i]):
                target = steps[r].target
                j = r
                while j > 0:
                    prev = steps[j - 1]
                    if (prev.kind == "call" and not prev.note) or (
                        prev.kind == "set_data" and prev.target == target
                    ):
                        break
                    j -= 1
                if j < r:
                    read, check = steps[r], steps[i]
                    del steps[i]
                    del steps[r]
                    steps[j:j] = [read, check]
        i += 1
    return split


def _may_change(s: Any, n: int, target: Any) -> bool:
    """Whether step ``s`` may change value ``n`` (read from ``target``): an eager-only call, a
    kernel writing into it, or the tensor given a new array."""
    if s.kind == "call":
        return not s.note
    if s.kind == "set_data":
        return bool(s.target == target)
    if s.kind == "kernel":
        return n in values(written(s.op, s.args, s.kwargs))
    return False


def _kept(cap: Capture) -> set[int]:
    """Objects the capture made and attached outside (a .grad): replay makes them anew."""
    return {j for j, o in enumerate(cap.objects) if id(o) in cap.tracked}


def _guards(cap: Capture) -> list[str]:
    """Checks at the top of a replay, as torch.compile's guards: each module the call ran has
    the same training flag, parameters and submodules (none replaced by assignment); each
    outside tensor it read has the same shape, dtype and requires_grad (nobody froze it)."""
    lines = []
    for m in cap.modules.values():
        j = cap.obj(m)
        lines.append(f"if o{j}.training is not {bool(m.training)}: raise Mismatch('guard')")
        params = tuple(id(p) for p in m._parameters.values())
        children = tuple(id(c) for c in m._modules.values())
        if params:
            lines.append(
                f"if tuple(map(id, o{j}._parameters.values())) != {params!r}: raise Mismatch('guard')"
            )
        if children:
            lines.append(
                f"if tuple(map(id, o{j}._modules.values())) != {children!r}: raise Mismatch('guard')"
            )
    seen: set[int] = set()
    for s in cap.steps:
        if s.kind == "read" and s.target[0] == "obj" and s.target[1] not in seen:
            j = s.target[1]
            seen.add(j)
            t = cap.objects[j]
            lines.append(
                f"if o{j}._shape != {t._shape!r} or o{j}.dtype.name != {t.dtype.name!r} "
                f"or o{j}._requires_grad is not {bool(t._requires_grad)}: raise Mismatch('guard')"
            )
    return lines


def _template(cap: Capture, result: Any, steps: list[Any]) -> tuple[Any, list[Ref]]:
    """The result's shape with each tensor and host value replaced by its place among the
    values replay returns."""
    returns: list[Ref] = []
    tail_hosts = []
    for s in reversed(steps):
        if s.kind in ("read", "const"):
            continue
        if s.kind != "host":
            break
        tail_hosts.append(s)

    def walk(o: Any) -> Any:
        if isinstance(o, Tensor):
            if id(o) in cap.inputs:
                return ("in", cap.inputs[id(o)])
            if id(o) not in cap.created or id(o) in cap.tracked:
                return ("same", o)
            returns.append(cap.ref(_SLOT_DATA.__get__(o, Tensor)))
            return ("tensor", len(returns) - 1, o)
        if type(o) in (tuple, list):
            return ("seq", type(o), [walk(x) for x in o])
        if isinstance(o, dict):
            return ("dict", type(o), {k: walk(v) for k, v in o.items()})
        if isinstance(o, (bool, int, float)):
            for s in tail_hosts:
                seen = s.note
                if seen.size == 1 and type(seen.item()) is type(o) and seen.item() == o:
                    returns.append(s.out)
                    return ("item", len(returns) - 1)
        if isinstance(o, list):
            pass
        return ("const", o)

    return walk(result), returns


def _rebuild(t: Any, values: Any, tensors: list[Tensor], prog: Program, replayed_node: bool) -> Any:
    tag = t[0]
    if tag == "tensor":
        v = values[t[1]]
        if isinstance(v, Tensor):
            return v
        m = t[2]
        return wrap(v, m._be, m._device, m.dtype, m._shape)
    if tag == "seq":
        items = [_rebuild(x, values, tensors, prog, replayed_node) for x in t[2]]
        return items if t[1] is list else t[1](items)
    if tag == "dict":
        return t[1]((k, _rebuild(v, values, tensors, prog, replayed_node)) for k, v in t[2].items())
    if tag == "item":
        return values[t[1]].item()
    if tag == "same":
        return t[1]
    if tag == "in":
        return tensors[t[1]]
    return t[1]
