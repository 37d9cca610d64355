"""The engine: a topological order and a reversed loop calling each node's rule (STYLE 9)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from sys import getrefcount
from typing import Any

from .._ops._common import sum_to
from .._tensor import Tensor
from . import anomaly
from .grad_mode import set_grad_enabled
from .graph import AccumulateGrad, Node, edge

_COMPLEX = 3  # DType.category of the complex dtypes (ember.backends.dtypes.COMPLEX)

__all__ = ["check_function_grads", "check_hook_result", "check_root_grad", "run_backward"]


def _topo_order(roots: list[Node], keep: Callable[[Node], bool] | None = None) -> list[Node]:
    """Nodes reachable from ``roots``, each after every node that feeds it a gradient; with
    ``keep``, only through the nodes it accepts (a checkpoint's inner graph)."""
    order: list[Node] = []
    seen: set[int] = set()
    for root in roots:
        if id(root) in seen or (keep is not None and not keep(root)):
            continue
        seen.add(id(root))
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, it = stack[-1]
            for nxt, _ in it:
                if nxt is not None and id(nxt) not in seen and (keep is None or keep(nxt)):
                    seen.add(id(nxt))
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
            else:
                stack.pop()
                order.append(node)
    order.reverse()
    return order


def _accumulate(grads: dict[int, Any], node: Node, g: Any) -> None:
    prev = grads.get(id(node))
    grads[id(node)] = g if prev is None else prev + g


def _run_pre_hooks(node: Node, g: Any) -> Any:
    for hook in node._pre_hooks or ():
        r = hook(g)
        if r is not None:
            g = check_hook_result(hook, g, r)
    return g


def _run_post_hooks(node: Node, grads: tuple, g: Any) -> tuple:
    """``hook(grad_inputs, grad_outputs)`` after a node ran; a returned tuple replaces grad_inputs."""
    for hook in node._hooks or ():
        r = hook(grads, (g,))
        if r is not None:
            grads = _check_hook_tuple(hook, tuple(grads), r)
    return grads


def _apply(node: Node, g: Any) -> tuple:
    # ember's own rules are trusted (their shapes hold by construction): user code that hands
    # gradients back (custom Functions, hooks) is checked where it returns, not here.
    grads = node.rule(node, g)
    if len(grads) != len(node.next_functions):
        raise RuntimeError(
            f"Function {node.name()} returned an incorrect number of gradients "
            f"(expected {len(node.next_functions)}, got {len(grads)})"
        )
    if node._hooks:
        grads = _run_post_hooks(node, grads, g)
    if anomaly.is_anomaly_enabled():
        anomaly.check(node, grads)
    return grads


def _leaf_hooks(hooks: list, g: Any) -> Any:
    """A leaf's tensor hooks, which see and may replace its gradient before it is used."""
    for hook in hooks:
        r = hook(g)
        if r is not None:
            g = check_hook_result(hook, g, r)
    return g


def _stealable(g: Any) -> bool:
    """Whether a leaf may keep ``g`` itself as its ``.grad``: PyTorch's test, by reference
    count. Only the engine holds it (its loop's ``g``, the caller's argument and this call's),
    it is no view and has no graph; a gradient the user holds (a root grad, one a hook kept),
    or that goes to two leaves (``x + y``), has more references and is copied."""
    return getrefcount(g) <= _ENGINE_REFS and g._base is None and g.grad_fn is None and g._meta is None


def _calibrate() -> int:
    """What getrefcount says inside _stealable of a gradient only the engine holds: the same
    chain of frames (run_backward's local, _leaf_accumulate's and _stealable's parameters),
    measured rather than assumed, as interpreters count borrowed references differently."""

    def stealable(g: object) -> int:
        return getrefcount(g)

    def leaf_accumulate(g: object) -> int:
        return stealable(g)

    g = object()
    return leaf_accumulate(g)


_ENGINE_REFS = _calibrate()


def _leaf_accumulate(node: AccumulateGrad, g: Any, create_graph: bool) -> None:
    leaf = node.variable
    if leaf._grad is None:
        if create_graph:
            leaf._grad = g
        elif _stealable(g) and not g._requires_grad:
            leaf._grad = g  # a fresh result nobody else holds: no copy, as PyTorch steals it
        else:
            leaf._grad = g.detach().clone()
        return _post_accumulate(leaf)
    if not create_graph:
        g = g.detach()
    if create_graph:
        leaf._grad = leaf._grad + g
    else:
        leaf._grad.add_(g)
    _post_accumulate(leaf)


def _post_accumulate(leaf: Any) -> None:
    for hook in (leaf._meta or {}).get("post_acc_hooks", ()):
        hook(leaf)


def _reach_leaf(node: AccumulateGrad, g: Any, wanted: bool) -> Any:
    """The gradient a leaf receives: its real part for a real leaf, then the leaf's hooks if it is used."""
    leaf = node.variable
    if g.dtype.is_complex and not leaf.dtype.is_complex:
        g = g.real  # a real input gets the real part, as in PyTorch
    m = leaf._meta
    hooks = m.get("hooks") if wanted and m else None
    return _leaf_hooks(hooks, g) if hooks else g


runs = [0]  # backward passes so far: ember.compile tells a training step from a forward


def run_backward(
    roots: Sequence[Any],
    root_grads: Sequence[Any],
    retain_graph: bool,
    create_graph: bool,
    capture: dict[int, int] | None = None,
    accumulate: bool = True,
) -> list[Any]:
    """Propagate ``root_grads`` from ``roots``' nodes to the leaves.

    ``capture`` maps id(node) -> position: the gradient arriving at those nodes is returned
    (autograd.grad) instead of, or besides, being accumulated into leaves.
    """
    runs[0] += 1
    nodes = [t.grad_fn if t.grad_fn is not None else _leaf_node(t) for t in roots]
    grads: dict[int, Any] = {}
    for n, g in zip(nodes, root_grads):
        _accumulate(grads, n, g)
    captured: list[Any] = [None] * (len(capture) if capture else 0)
    order = _topo_order(nodes)
    anomalous = anomaly.is_anomaly_enabled()
    with set_grad_enabled(bool(create_graph)):
        for node in order:
            g = grads.pop(id(node), None)
            if g is None:
                continue
            if node._pre_hooks:
                g = _run_pre_hooks(node, g)
            if type(node) is AccumulateGrad:  # a leaf: its class is never relabelled
                g = _reach_leaf(node, g, accumulate or (capture is not None and id(node) in capture))
                if capture is not None and id(node) in capture:
                    captured[capture[id(node)]] = g
                if accumulate:
                    _leaf_accumulate(node, g, create_graph)
                continue
            if capture is not None:
                if id(node) in capture:
                    captured[capture[id(node)]] = g
                if not accumulate and not _feeds_capture(node, capture):
                    continue
            nexts = node.next_functions
            in_grads = node.rule(node, g)
            # ember's own rules are trusted (their shapes hold by construction): user code that
            # hands gradients back (custom Functions, hooks) is checked where it returns.
            if len(in_grads) != len(nexts):
                raise RuntimeError(
                    f"Function {node.name()} returned an incorrect number of gradients "
                    f"(expected {len(nexts)}, got {len(in_grads)})"
                )
            if node._hooks:
                in_grads = _run_post_hooks(node, in_grads, g)
            if anomalous:
                anomaly.check(node, in_grads)
            for (nxt, _), ig in zip(nexts, in_grads):
                if nxt is not None and ig is not None:
                    if nxt._real_out and ig.dtype.category == _COMPLEX:
                        ig = ig.real  # a real input gets the real part, as in PyTorch
                    key = id(nxt)
                    prev = grads.get(key)
                    grads[key] = ig if prev is None else prev + ig
            if not retain_graph:
                node.release()
            # Drop the loop's references to the gradients just passed on, so a leaf's
            # reference count says whether anyone but the engine holds its gradient.
            in_grads = ig = None
    return captured


def _feeds_capture(node: Node, capture: dict[int, int], _memo: dict[int, bool] | None = None) -> bool:
    # Cheap pruning for autograd.grad: skip subgraphs that lead to no requested input.
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if id(n) in capture and n is not node:
            return True
        for nxt, _ in n.next_functions:
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                if id(nxt) in capture:
                    return True
                stack.append(nxt)
    return False


def _leaf_node(t: Any) -> Node:
    n, _ = edge(t)
    if n is None:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    return n


# Checks at the boundaries where user code hands gradients to the engine: a custom Function's
# backward, a hook, the grad_outputs of backward()/grad(). Types and messages are PyTorch's.

_COMPLEX_GRAD = (
    "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be true, "
    "but got false.  (Could this error message be improved?  If so, please report an enhancement "
    "request to ember.)"
)
# dtypes that have a legacy tensor-type name (``ember.FloatTensor``); the rest print as ``CPUBoolType``.
_LEGACY = frozenset(("Float", "Double", "Half", "Long", "Int", "Short", "Char", "Byte"))
_BACKEND = {"cpu": "CPU", "cuda": "CUDA", "opencl": "OpenCL"}


def _type_name(t: Any) -> str:
    """PyTorch's name of a tensor's type: ``ember.FloatTensor``, ``ember.cuda.HalfTensor``, ``CPUBoolType``."""
    scalar = t.type()[len("ember.") : -len("Tensor")]  # the one dtype-name table lives behind .type()
    kind = t._device.type
    if scalar in _LEGACY and kind in ("cpu", "cuda"):
        return f"ember.{'' if kind == 'cpu' else 'cuda.'}{scalar}Tensor"
    return f"{_BACKEND.get(kind, kind)}{scalar}Type"


def check_hook_result(hook: Any, original: Any, result: Any) -> Any:
    """What a tensor hook returned in place of ``original``: a Tensor of the same type and size."""
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    name = getattr(hook, "__name__", "<unknown>")
    was, got = _type_name(original), _type_name(result)
    if was != got:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {was} got {got})")
    if result._device != original._device:
        # PyTorch lets cuda:1 pass for cuda:0 here and fails (or not) further on; ember stops it here.
        raise RuntimeError(
            f"hook '{name}' has changed the device of value (was {original._device} got {result._device})"
        )
    if result._shape != original._shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return result


def _check_hook_tuple(hook: Any, original: tuple, result: Any) -> tuple:
    """What a node hook returned in place of the tuple ``original``: as many values, each checked."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(original):
        raise RuntimeError(
            f"hook '{getattr(hook, '__name__', '<unknown>')}' has returned an incorrect number of values "
            f"(got {len(result)}, but expected {len(original)})"
        )
    out = list(original)
    for i, (was, r) in enumerate(zip(original, result)):
        if r is None:
            continue
        if was is None:
            raise RuntimeError("can't replace a None gradient with a non-None value")
        out[i] = check_hook_result(hook, was, r)
    return tuple(out)


def _expandable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (then a gradient of shape ``to`` sums back to it)."""
    if len(shape) > len(to):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(to)))


def _conform(g: Any, i: int, dtype: Any, device: Any, prefix: str) -> Any:
    """A gradient cast to its input's dtype and checked to be on its device (PyTorch's validate_outputs)."""
    if not (g.dtype.is_floating_point or dtype.is_complex == g.dtype.is_complex):
        raise RuntimeError(_COMPLEX_GRAD)
    if g.dtype != dtype:
        g = g.to(dtype)
    if g._device != device:
        if g.ndim != 0:  # PyTorch moves a 0-d gradient, whatever its device
            raise RuntimeError(
                f"{prefix}invalid gradient at index {i} - expected device {device} but got {g._device}"
            )
        g = g.to(device)
    return g


def check_function_grads(name: str, inputs: tuple, grads: tuple) -> tuple:
    """A custom Function's gradients against its inputs' ``(shape, dtype, device)`` (falsy: not differentiated).

    A gradient broadcastable from the input's shape is summed down to it, as in PyTorch.
    """
    out = list(grads)
    for i, (meta, g) in enumerate(zip(inputs, grads)):
        if not meta or g is None:
            continue
        shape, dtype, device = meta
        if g._shape != shape:
            if not _expandable(shape, g._shape):
                raise RuntimeError(
                    f"Function {name} returned an invalid gradient at index {i} - got {list(g._shape)} "
                    f"but expected shape compatible with {list(shape)}"
                )
            g = sum_to(g, shape)
        out[i] = _conform(g, i, dtype, device, f"Function {name} returned an ")
    return tuple(out)


def check_root_grad(i: int, g: Any, out: Any) -> Any:
    """``grad_outputs[i]`` (or ``gradient``) for output ``out``, checked once per call and cast to its dtype."""
    if not isinstance(g, Tensor):
        raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    if g._shape != out._shape:
        raise RuntimeError(
            f"Mismatch in shape: grad_output[{i}] has a shape of ember.Size({list(g._shape)}) and "
            f"output[{i}] has a shape of ember.Size({list(out._shape)})."
        )
    if g.dtype.is_complex != out.dtype.is_complex:
        raise RuntimeError(
            "For complex Tensors, both grad_output and output are required to have the same dtype. "
            f"Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] has a dtype of "
            f"{out.dtype}."
        )
    return _conform(g, i, out.dtype, out._device, "")
