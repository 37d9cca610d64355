"""The engine: a topological order and a reversed loop calling each node's rule (STYLE 9)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import anomaly
from .grad_mode import set_grad_enabled
from .graph import AccumulateGrad, Node

__all__ = ["run_backward"]


def _topo_order(roots: list[Node]) -> list[Node]:
    """Nodes reachable from ``roots``, each after every node that feeds it a gradient."""
    order: list[Node] = []
    seen: set[int] = set()
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, it = stack[-1]
            for nxt, _ in it:
                if nxt is not None and id(nxt) not in seen:
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
            g = r
    return g


def _check_shape(node: Node, i: int, g: Any, like: Any) -> None:
    if g._shape != like._shape:
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index {i} - got "
            f"{list(g._shape)} but expected shape compatible with {list(like._shape)}"
        )


def _apply(node: Node, g: Any) -> tuple:
    grads = node.rule(node, g)
    if len(grads) != len(node.next_functions):
        raise RuntimeError(
            f"Function {node.name()} returned an incorrect number of gradients "
            f"(expected {len(node.next_functions)}, got {len(grads)})"
        )
    for hook in node._hooks or ():
        hook(grads, (g,))
    if anomaly.is_anomaly_enabled():
        anomaly.check(node, grads)
    return grads


def _leaf_accumulate(node: AccumulateGrad, g: Any, create_graph: bool) -> None:
    leaf = node.variable

    m = leaf._meta or {}
    for hook in m.get("hooks", ()):
        r = hook(g)
        if r is not None:
            g = r
    if not create_graph:
        g = g.detach()
    if leaf._grad is None:
        leaf._grad = g if create_graph or g._base is None else g.clone()
    elif create_graph:
        leaf._grad = leaf._grad + g
    else:
        leaf._grad.add_(g)
    for hook in m.get("post_acc_hooks", ()):
        hook(leaf)


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
    nodes = [t.grad_fn if t.grad_fn is not None else _leaf_node(t) for t in roots]
    grads: dict[int, Any] = {}
    for n, g in zip(nodes, root_grads):
        _accumulate(grads, n, g)
    captured: list[Any] = [None] * (len(capture) if capture else 0)
    order = _topo_order(nodes)
    with set_grad_enabled(create_graph):
        for node in order:
            g = grads.pop(id(node), None)
            if g is None:
                continue
            g = _run_pre_hooks(node, g)
            if isinstance(node, AccumulateGrad) and g.dtype.is_complex and not node.variable.dtype.is_complex:
                g = g.real  # a real input gets the real part, as in PyTorch
            if capture is not None and id(node) in capture:
                captured[capture[id(node)]] = g
            if isinstance(node, AccumulateGrad):
                if accumulate:
                    _leaf_accumulate(node, g, create_graph)
                continue
            if capture is not None and not accumulate and not _feeds_capture(node, capture):
                continue
            in_grads = _apply(node, g)
            for i, ((nxt, _), ig) in enumerate(zip(node.next_functions, in_grads)):
                if nxt is not None and ig is not None:
                    _accumulate(grads, nxt, ig)
            if not retain_graph:
                node.release()
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
    from .graph import edge

    n, _ = edge(t)
    if n is None:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    return n
