"""A small pytree: tuples, lists, dicts and namedtuples are nodes; anything else (``None`` too) a leaf.

The transforms flatten their inputs and outputs with it, and its spec prints as PyTorch's
``TreeSpec`` does, because PyTorch's error messages quote those specs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LEAF", "Spec", "broadcast_prefix", "pprint", "tree_flatten", "tree_map", "tree_unflatten"]


class Spec:
    """The shape of a tree: its node type, context (dict keys), and children's specs."""

    __slots__ = ("children", "context", "kind", "num_leaves")

    def __init__(self, kind: type | None, context: Any, children: list[Spec]) -> None:
        self.kind = kind
        self.context = context
        self.children = children
        self.num_leaves: int = 1 if kind is None else sum(c.num_leaves for c in children)

    def is_leaf(self) -> bool:
        return self.kind is None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Spec)
            and self.kind is other.kind
            and self.context == other.context
            and self.children == other.children
        )

    def __hash__(self) -> int:
        return hash((self.kind, len(self.children)))

    def __repr__(self) -> str:
        return self._repr(0)

    def _repr(self, indent: int) -> str:
        if self.kind is None:
            return "*"
        inner = ""
        if self.children:
            indent += 2
            inner = self.children[0]._repr(indent)
            for c in self.children[1:]:
                inner += ",\n" + " " * indent + c._repr(indent)
        return f"TreeSpec({self.kind.__name__}, {self.context}, [{inner}])"


LEAF = Spec(None, None, [])


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node(x: Any) -> tuple[type, Any, list] | None:
    """(type, context, children) of a node, or None for a leaf."""
    if isinstance(x, (tuple, list)) and (type(x) in (tuple, list) or _is_namedtuple(x)):
        return type(x), None, list(x)
    if isinstance(x, dict):
        keys = list(x)
        return type(x), keys, [x[k] for k in keys]
    return None


def tree_flatten(tree: Any) -> tuple[list, Spec]:
    leaves: list = []

    def walk(x: Any) -> Spec:
        n = _node(x)
        if n is None:
            leaves.append(x)
            return LEAF
        kind, ctx, kids = n
        return Spec(kind, ctx, [walk(k) for k in kids])

    return leaves, walk(tree)


def tree_unflatten(leaves: list, spec: Spec) -> Any:
    it = iter(leaves)

    def build(s: Spec) -> Any:
        if s.kind is None:
            return next(it)
        kids = [build(c) for c in s.children]
        if issubclass(s.kind, dict):
            return s.kind(zip(s.context, kids))
        if s.kind is tuple or s.kind is list:
            return s.kind(kids)
        return s.kind(*kids)  # a namedtuple

    return build(spec)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix: Any, spec: Spec) -> list | None:
    """``prefix`` (a tree whose leaves stand for whole subtrees) spread over ``spec``'s
    leaves, or None when it is not a prefix of ``spec``."""
    out: list = []

    def walk(p: Any, s: Spec) -> bool:
        n = _node(p)
        if n is None:
            out.extend([p] * s.num_leaves)
            return True
        kind, ctx, kids = n
        if s.kind is None or kind is not s.kind or len(kids) != len(s.children):
            return False
        if ctx is not None and list(ctx) != list(s.context):
            return False
        return all(walk(k, c) for k, c in zip(kids, s.children))

    return out if walk(prefix, spec) else None


class _Star:
    def __repr__(self) -> str:
        return "*"


def pprint(spec: Spec) -> str:
    """The tree with ``*`` for each leaf: ``(*, *)``, ``{'a': *}``."""
    return repr(tree_unflatten([_Star()] * spec.num_leaves, spec))
