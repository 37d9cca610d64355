"""Activation checkpointing: keep a segment's inputs, not its activations, and rerun it in backward.

Both of PyTorch's variants rerun the function on the saved inputs when its gradient is needed,
with the random state of the forward restored (so dropout draws the same mask) and autocast as
it was. ember has no saved-tensor hooks, so both are built on a custom ``Function`` whose node
holds only the inputs:

* ``use_reentrant=True`` (PyTorch's ``CheckpointFunction``): forward under ``no_grad``; backward
  reruns the function under ``enable_grad`` and calls ``backward`` on it, so parameters used
  inside accumulate their ``.grad`` directly, as PyTorch's reentrant backward does.
* ``use_reentrant=False``: forward runs once recording, to learn which leaves (parameters,
  captured tensors) the outputs depend on; that graph is then dropped and the checkpoint node
  takes those leaves as inputs besides the arguments. Its backward reruns the function and hands
  the leaves' gradients to the engine, so ``autograd.grad``, ``backward(inputs=...)``, keyword
  arguments, inputs that do not require grad and double backward all work, as in PyTorch.
  (A non-leaf tensor captured by the function's closure gets its gradient through the
  checkpoint for ``backward()``, but is not a target of ``autograd.grad``.)
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .._random import get_rng_state, set_rng_state
from .._tensor import Tensor, wrap
from ..amp import autocast_mode as _amp
from ..autograd.engine import run_backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad, state
from ..autograd.graph import AccumulateGrad, Node, edge

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


class CheckpointError(RuntimeError):
    """The rerun in backward did not produce what the forward did."""


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

    def rerun(
        self, tensors: Iterable[Any], context: Any = None, connected: bool = False
    ) -> tuple[tuple, Any]:
        """The inputs and the function's outputs, recomputed under ``enable_grad``. The inputs are
        detached, or (``connected``, for a double backward) aliases still joined to the originals."""
        args = list(self.slots)
        it = iter(tensors)
        for i, a in enumerate(args):
            if a is None:
                t = next(it)
                if connected and t.requires_grad:
                    with enable_grad():
                        args[i] = t.view_as(t)
                else:
                    args[i] = _detached(t)
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
                out = self.function(*args, **self.kwargs)
        finally:
            if saved is not None:
                set_rng_state(saved)
        return tuple(args), out


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
        inputs, out = ctx.replay.rerun(ctx.saved_tensors)
        outs = _as_tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        run_backward([o for o, _ in pairs], [g for _, g in pairs], False, False)
        return (None, None, *(x.grad if isinstance(x, Tensor) else None for x in inputs))


def _leaves(outs: tuple) -> list[Tensor]:
    """The leaf tensors requiring grad that ``outs``' graph reaches, in a fixed order."""
    found: list[Tensor] = []
    seen: set[int] = set()
    stack: list[Node] = [o.grad_fn for o in outs if isinstance(o, Tensor) and o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            found.append(node.variable)
            continue
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return found


class Checkpoint(Function):
    """The non-reentrant variant's node: inputs are the tensor arguments, then the inner leaves."""

    @staticmethod
    def forward(info: dict, *tensors: Any) -> Any:  # type: ignore[override]
        return info.pop("outputs")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        ctx.info = inputs[0]
        ctx.save_for_backward(*inputs[1:])

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        info = ctx.info
        replay: _Replay = info["replay"]
        n = info["n_args"]
        tensors = ctx.saved_tensors
        inputs, out = replay.rerun(tensors[:n], info["recompute_context"], connected=state.enabled)
        outs = _as_tuple(out)
        if info["check"]:
            _check_metadata(info["metas"], outs)
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad]
        targets = [x for x in inputs if isinstance(x, Tensor)] + list(tensors[n:])
        grads_in: list[Any] = [None] * len(targets)
        if pairs:
            capture: dict[int, int] = {}
            slot = {
                i: capture.setdefault(id(_acc(t)), len(capture))
                for i, t in enumerate(targets)
                if t.requires_grad
            }
            roots, root_grads = [o for o, _ in pairs], [g for _, g in pairs]
            with _leaf_hooks_held(tensors[n:]):
                got = run_backward(roots, root_grads, True, state.enabled, capture, accumulate=False)
            for i, k in slot.items():
                grads_in[i] = got[k]
        return (None, *grads_in)


@contextlib.contextmanager
def _leaf_hooks_held(leaves: Iterable[Tensor]) -> Iterator[None]:
    """The leaves' tensor hooks, set aside while the recomputation's gradients are gathered:
    they run once, when the engine hands the leaf its gradient from the checkpoint node."""
    held = [(t._meta, t._meta.pop("hooks")) for t in leaves if t._meta and "hooks" in t._meta]
    try:
        yield
    finally:
        for m, hooks in held:
            m["hooks"] = hooks


def _cut(t: Tensor) -> Tensor:
    return wrap(t._data, t._be, t._device, t.dtype, t._shape)


def _acc(t: Tensor) -> Node:
    node, _ = edge(t)
    assert node is not None
    return node


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
    replay = _Replay(function, preserve, args, kwargs)
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not state.enabled:
        with forward_context:
            return function(*args, **kwargs)
    inner = [_detached(a) for a in args]
    with forward_context:
        out = function(*inner, **kwargs)
    outs = _as_tuple(out)
    mine = {id(t) for t in inner if isinstance(t, Tensor)}
    leaves = [t for t in _leaves(outs) if id(t) not in mine]
    if not leaves and not any(t.requires_grad for t in tensors):
        return out  # nothing inside requires grad: no graph was recorded
    # Fresh tensors around the same data: neither a grad_fn nor a view's base keeps the graph alive.
    detached = tuple(_cut(o) if isinstance(o, Tensor) and o.requires_grad else o for o in outs)
    info = {
        "outputs": detached if isinstance(out, tuple) else detached[0],
        "replay": replay,
        "n_args": len(tensors),
        "recompute_context": recompute_context,
        "check": determinism_check == "default",
        "metas": [_meta(o) for o in outs],
    }
    del out, outs  # the recorded graph and its activations go here
    return Checkpoint.apply(info, *tensors, *leaves)


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
