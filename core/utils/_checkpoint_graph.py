"""The non-reentrant checkpoint's graph work: where a segment's graph meets the rest, the node
that stands for the segment, and the backward through its recomputation.

The forward runs the segment once recording, on detached inputs that require grad. A node of
that graph is the segment's own ("inner") when it leads to one of those inputs: such a node was
made by this call, since the inputs were. Every other node it reaches (a parameter's
AccumulateGrad, the node of a tensor the function captured, or a part computed from parameters
only) is a boundary: the checkpoint node gets an edge to each, and the inner nodes are released,
freeing the activations at once (their reference cycles would otherwise wait for the garbage
collector). Each boundary is remembered by its path of edge indices from an output, so the
recomputed graph, built by the same code, finds the matching node; backward runs the inner
nodes of the recomputation only and hands each boundary its gradient through the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor, wrap
from ..autograd.engine import _apply, _run_pre_hooks, _topo_order
from ..autograd.function import _Grads, _pass
from ..autograd.graph import Node, edge, node_class

__all__ = ["CheckpointError", "attach", "backward_through", "cut", "plan"]


class CheckpointError(RuntimeError):
    """The rerun in backward did not produce what the forward did."""


def _reaching(roots: list[Node], inputs: dict[int, int]) -> dict[int, bool]:
    """For each node reachable from ``roots``: does it lead to an input node? (post-order walk)"""
    memo: dict[int, bool] = {}
    for root in roots:
        if id(root) in memo:
            continue
        memo[id(root)] = id(root) in inputs
        if memo[id(root)]:
            continue
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, it = stack[-1]
            for nxt, _ in it:
                if nxt is not None and id(nxt) not in memo:
                    memo[id(nxt)] = id(nxt) in inputs
                    if not memo[id(nxt)]:
                        stack.append((nxt, iter(nxt.next_functions)))
                        break
            else:
                stack.pop()
                memo[id(node)] = any(n is not None and memo[id(n)] for n, _ in node.next_functions)
    return memo


def _roots(outs: tuple) -> list[tuple[int, Node]]:
    return [(k, edge(o)[0]) for k, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]  # type: ignore[misc]


def plan(outs: tuple, inputs: dict[int, int]) -> tuple[list[Node], list[Node], list[tuple[int, ...]]]:
    """The inner nodes, the boundary nodes, and each boundary's path (output index, edge indices)."""
    roots = _roots(outs)
    reach = _reaching([r for _, r in roots], inputs)
    inner: list[Node] = []
    bounds: list[Node] = []
    paths: list[tuple[int, ...]] = []
    seen: set[int] = set()
    stack: list[tuple[Node, tuple[int, ...]]] = [(r, (k,)) for k, r in reversed(roots)]
    while stack:
        node, path = stack.pop()
        if id(node) in seen or id(node) in inputs:
            continue
        seen.add(id(node))
        if not reach[id(node)]:
            bounds.append(node)
            paths.append(path)
            continue
        inner.append(node)
        stack.extend((n, (*path, i)) for i, (n, _) in enumerate(node.next_functions) if n is not None)
    return inner, bounds, paths


def cut(t: Tensor, share_version: bool = False) -> Tensor:
    """A fresh tensor around the same data: no grad_fn, and no view base that holds the graph;
    ``share_version``: an in-place write through it counts as a write to ``t``."""
    out = wrap(t._data, t._be, t._device, t.dtype, t._shape)
    if share_version:
        out._vc = t._vc
    return out


def attach(outs: tuple, edges: tuple, saved: tuple, versions: tuple, rule: Callable[[list], tuple]) -> None:
    """One ``CheckpointBackward`` node for the differentiable outputs; ``rule`` maps the outputs'
    gradients (a list, None where an output got none) to one gradient per edge. The saved inputs
    are checked against their ``versions`` from before the forward: an input changed in place,
    inside the segment or after it, fails the backward as in PyTorch."""
    diff = [
        k
        for k, o in enumerate(outs)
        if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)
    ]

    def node_rule(node: Any, g: Any) -> tuple:
        node.ctx  # noqa: B018 - refuses once freed, or once a saved input was modified in place
        if isinstance(g, _Grads):
            return rule(g.gs)
        gs: list = [None] * len(outs)
        gs[diff[0]] = g
        return rule(gs)

    node = node_class("CheckpointBackward")(node_rule, edges, saved)
    node._versions = tuple(zip(saved, versions))
    targets = (
        [(node, k) for k in diff]
        if len(diff) == 1
        else [(node_class("CheckpointBackward")(_pass(k, len(outs)), ((node, 0),), None), k) for k in diff]
    )
    for n, k in targets:
        o = outs[k]
        o.grad_fn = n
        n._out_id = id(o)
        n._real_out = not o.dtype.is_complex
        o._requires_grad = True


def _follow(outs: tuple, path: tuple[int, ...]) -> Node:
    o = outs[path[0]] if path[0] < len(outs) else None
    node = edge(o)[0] if isinstance(o, Tensor) else None
    for i in path[1:]:
        nexts = node.next_functions if node is not None else ()
        node = nexts[i][0] if i < len(nexts) else None
    if node is None:
        raise CheckpointError("ember.utils.checkpoint: the recomputed graph differs from the forward's")
    return node


def backward_through(
    outs: tuple, grads: list, inputs: dict[int, int], n_in: int, paths: list[tuple[int, ...]]
) -> list:
    """Gradients for the inputs (by index) then the boundaries (in ``paths`` order), running only
    the recomputation's inner nodes."""
    slot = dict(inputs)
    for j, path in enumerate(paths):
        slot.setdefault(id(_follow(outs, path)), n_in + j)
    result: list[Any] = [None] * (n_in + len(paths))
    pending: dict[int, Any] = {}
    nodes: dict[int, Node] = {}

    def give(node: Node, g: Any) -> None:
        key = id(node)
        if key in slot:
            i = slot[key]
            result[i] = g if result[i] is None else result[i] + g
        else:
            nodes[key] = node
            pending[key] = g if key not in pending else pending[key] + g

    roots = [(r, grads[k]) for k, r in _roots(outs) if grads[k] is not None]
    for r, g in roots:
        give(r, g)
    reach = _reaching([r for r, _ in roots], inputs)
    for node in _inner_order([r for r, _ in roots], reach, slot):
        g = pending.pop(id(node), None)
        if g is None:
            continue
        g = _run_pre_hooks(node, g)
        for (nxt, _), ig in zip(node.next_functions, _apply(node, g)):
            if nxt is None or ig is None:
                continue
            if nxt._real_out and ig.dtype.is_complex:
                ig = ig.real
            if id(nxt) not in slot and not reach.get(id(nxt)):
                raise CheckpointError(
                    "ember.utils.checkpoint: the recomputed graph differs from the forward's"
                )
            give(nxt, ig)
    return result


def _inner_order(roots: list[Node], reach: dict[int, bool], stop: dict[int, int]) -> list[Node]:
    """The inner nodes below ``roots``, each after every inner node that feeds it a gradient."""
    return _topo_order(roots, lambda n: id(n) not in stop and bool(reach.get(id(n))))
