"""Activation checkpointing: keep a segment's inputs, not its activations, and rerun it in backward.

Both of PyTorch's variants rerun the function on the saved inputs when its gradient is needed,
with the random state of the forward restored (so dropout draws the same mask) and autocast as
it was. ember has no saved-tensor hooks, so both rerun the segment as a whole from one node that
holds only the inputs:

* ``use_reentrant=True`` (PyTorch's ``CheckpointFunction``, a custom ``Function``): forward under
  ``no_grad``; backward reruns the function under ``enable_grad`` and calls ``backward`` on it,
  so parameters used inside accumulate their ``.grad`` directly, as PyTorch's does.
* ``use_reentrant=False``: forward runs once recording, to find where the segment's graph meets
  the rest (parameters, captured tensors); its own nodes are then released and one
  ``CheckpointBackward`` node takes their place, with an edge to each of those meeting points
  (``_checkpoint_graph``). Its backward reruns the function and hands every gradient to the
  engine, so ``autograd.grad``, ``backward(inputs=...)``, keyword arguments, inputs that do not
  require grad and double backward work as in PyTorch.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .._random import get_rng_state, set_rng_state
from .._tensor import Tensor
from ..amp import autocast_mode as _amp
from ..autograd.engine import run_backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad, state
from ..autograd.graph import edge
from . import _checkpoint_graph as _graph
from ._checkpoint_graph import CheckpointError

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
]

_REENTRANT_DEFAULT = (
    "ember.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
    "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False "
    "is recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two variants."
)
_SEQUENTIAL_DEFAULT = (
    "ember.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
    "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
    "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
    "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
    "two variants."
)
_ALLOWED_CHECKS = ["default", "none"]


def noop_context_fn() -> tuple[contextlib.AbstractContextManager, contextlib.AbstractContextManager]:
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: Any) -> tuple:
    """Each tensor detached, keeping its ``requires_grad``; other values as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(  # noqa: TRY004 - PyTorch's type
            f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}"
        )
    return tuple(_detached(x) for x in inputs)


def _detached(x: Any) -> Any:
    if not isinstance(x, Tensor):
        return x
    d = x.detach()
    d.requires_grad_(x.requires_grad)
    return d


def check_backward_validity(inputs: Iterable[Any]) -> None:
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


class _Replay:
    """What a rerun needs: the function, its non-tensor arguments, and the RNG and autocast state."""

    def __init__(self, function: Callable, preserve: bool, args: tuple, kwargs: dict) -> None:
        self.function, self.preserve, self.kwargs = function, preserve, kwargs
        self.slots = [None if isinstance(a, Tensor) else a for a in args]
        self.rng = get_rng_state() if preserve else None
        types = {"cpu", *(a._device.type for a in args if isinstance(a, Tensor))}
        self.autocast = [(d, _amp.is_autocast_enabled(d), _amp.get_autocast_dtype(d)) for d in sorted(types)]

    @enable_grad()
    def bind(self, tensors: Iterable[Any], connected: bool, force: bool = True) -> tuple[tuple, None]:
        """The arguments for a run: tensors detached, each floating one requiring grad (``force``:
        the non-reentrant variant finds its own nodes by them), or for a double backward
        (``connected``) aliases still joined to the originals."""
        args = list(self.slots)
        it = iter(tensors)
        for i, a in enumerate(args):
            if a is None:
                t = next(it)
                if connected and t.requires_grad:
                    args[i] = t.view_as(t)
                elif force and (t.dtype.is_floating_point or t.dtype.is_complex):
                    args[i] = _Input.apply(t.detach().requires_grad_(True))
                else:
                    args[i] = _detached(t)
        return tuple(args), None

    def run(self, args: tuple, context: Any = None) -> Any:
        """The function on ``args`` under ``enable_grad``, with the forward's RNG and autocast state."""
        saved = get_rng_state() if self.preserve else None
        try:
            if self.rng is not None:
                set_rng_state(self.rng)
            with contextlib.ExitStack() as stack:
                stack.enter_context(enable_grad())
                for dev, on, dtype in self.autocast:
                    stack.enter_context(_amp.autocast(dev, dtype=dtype, enabled=on))
                if context is not None:
                    stack.enter_context(context)
                return self.function(*args, **self.kwargs)
        finally:
            if saved is not None:
                set_rng_state(saved)


class _Input(Function):
    """An input as the segment sees it: the caller's data behind a node of this call, not a leaf
    (so an in-place op on it works, as on PyTorch's non-reentrant input)."""

    @staticmethod
    def forward(ctx: Any, t: Tensor) -> Tensor:
        return _graph.cut(t, share_version=True)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return g


def _as_tuple(out: Any) -> tuple:
    return out if isinstance(out, tuple) else (out,)


class CheckpointFunction(Function):
    """The reentrant variant: ``apply(function, preserve_rng_state, *args)``."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        check_backward_validity(args)
        ctx.replay = _Replay(run_function, preserve_rng_state, args, {})
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        inputs, _ = ctx.replay.bind(ctx.saved_tensors, connected=False, force=False)
        out = ctx.replay.run(inputs)
        outs = _as_tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        run_backward([o for o, _ in pairs], [g for _, g in pairs], False, False)
        return (None, None, *(x.grad if isinstance(x, Tensor) else None for x in inputs))


def _meta(t: Any) -> Any:
    return (tuple(t.shape), t.dtype, t.device) if isinstance(t, Tensor) else None


def _check_metadata(metas: list, outs: tuple) -> None:
    now = [_meta(o) for o in outs]
    if len(now) != len(metas):
        raise CheckpointError(
            "ember.utils.checkpoint: A different number of tensors was saved during the original forward "
            f"and recomputation.\nNumber of tensors saved during forward: {len(metas)}\n"
            f"Number of tensors saved during recomputation: {len(now)}."
        )
    bad = [i for i, (a, b) in enumerate(zip(metas, now)) if a != b]
    if bad:
        lines = "".join(
            f"tensor at position {i}:\nsaved metadata: {_describe(metas[i])}\n"
            f"recomputed metadata: {_describe(now[i])}\n"
            for i in bad
        )
        raise CheckpointError(
            "ember.utils.checkpoint: Recomputed values for the following tensors have different metadata "
            f"than during the forward pass.\n{lines}"
        )


def _describe(meta: Any) -> str:
    if meta is None:
        return "None"
    shape, dtype, device = meta
    return f"{{'shape': ember.Size({list(shape)}), 'dtype': {dtype}, 'device': {device}}}"


def _non_reentrant(
    function: Callable,
    preserve: bool,
    context_fn: Callable,
    determinism_check: str,
    args: tuple,
    kwargs: dict,
) -> Any:
    if determinism_check not in _ALLOWED_CHECKS:
        raise ValueError(f"determinism_check should be one of {_ALLOWED_CHECKS}, but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    if not state.enabled:
        with forward_context:
            return function(*args, **kwargs)
    replay = _Replay(function, preserve, args, kwargs)
    tensors = tuple(a for a in args if isinstance(a, Tensor))
    versions = tuple(t._vc[0] for t in tensors)
    inner_args, _ = replay.bind(tensors, connected=False)
    with forward_context:
        out = function(*inner_args, **kwargs)
    outs = _as_tuple(out)
    inputs = _input_nodes(inner_args)
    inner, bounds, paths = _graph.plan(outs, inputs)
    for node in inner:
        node.release()  # the activations go now, not when the garbage collector finds their cycles
    cut = tuple(_graph.cut(o) if isinstance(o, Tensor) and o.requires_grad else o for o in outs)
    edges = (*(edge(t) for t in tensors), *((b, 0) for b in bounds))
    if any(n is not None for n, _ in edges):
        metas = [_meta(o) for o in outs]
        check = determinism_check == "default"

        def rule(grads: list) -> tuple:
            return _recompute(replay, recompute_context, tensors, grads, paths, metas if check else None)

        _graph.attach(cut, edges, tensors, versions, rule)
    return cut if isinstance(out, tuple) else cut[0]


def _input_nodes(args: Any) -> dict[int, int]:
    """id(node) of each tensor input requiring grad -> its index among the tensor inputs."""
    found: dict[int, int] = {}
    for i, t in enumerate(a for a in args if isinstance(a, Tensor)):
        node = edge(t)[0]
        if node is not None:
            found.setdefault(id(node), i)
    return found


def _recompute(
    replay: _Replay, context: Any, tensors: tuple, grads: list, paths: list, metas: list | None
) -> tuple:
    """The checkpoint node's gradients: rerun the segment and run its inner nodes backward."""
    args, _ = replay.bind(tensors, connected=state.enabled)
    out = replay.run(args, context)
    outs = _as_tuple(out)
    if metas is not None:
        _check_metadata(metas, outs)
    got = _graph.backward_through(outs, grads, _input_nodes(args), len(tensors), paths)
    n = len(tensors)
    return tuple(got[i] if i < n and tensors[i].requires_grad else None for i in range(n)) + tuple(got[n:])


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)``, keeping only its inputs for backward, which reruns it."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_DEFAULT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    return _non_reentrant(function, preserve, context_fn, determinism_check, args, kwargs)


def checkpoint_sequential(
    functions: Any, segments: int, input: Any, use_reentrant: bool | None = None, **kwargs: Any
) -> Any:
    """Run ``functions`` (a list or ``nn.Sequential``) in ``segments`` chunks, all but the last checkpointed."""
    if use_reentrant is None:
        warnings.warn(_SEQUENTIAL_DEFAULT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn.modules.container import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start: int, end: int) -> Callable:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
