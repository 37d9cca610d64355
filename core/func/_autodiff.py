"""The machinery the gradient transforms share: argnums, fresh inputs, nesting, unwrapping.

Every transform runs ``func`` on *fresh* inputs: a new leaf for a tensor outside any graph,
a ``view_as`` alias (a new node) for one already in a graph, so ``autograd.grad`` taken
with respect to it sees only the paths through this call. Nested transforms (``grad(grad(f))``)
build their gradients with ``create_graph=True``, so the outer one differentiates the inner
one's result. At the outermost transform, results are detached unless they depend on a
tensor from outside (a closure or an input that requires grad), as PyTorch's are.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import AccumulateGrad, meta

__all__ = [
    "check_float_outputs",
    "fresh",
    "is_nested",
    "level",
    "reaches_outside",
    "release",
    "release_aux",
    "slice_argnums",
    "zeros_for",
]

_depth = [0]


def is_nested() -> bool:
    """True inside another gradient transform's call."""
    return _depth[0] > 0


@contextmanager
def level() -> Iterator[None]:
    """One gradient transform's call: grad mode on (even under no_grad, as PyTorch)."""
    _depth[0] += 1
    try:
        with enable_grad():
            yield
    finally:
        _depth[0] -= 1


def fresh(x: Any) -> Tensor:
    """A new differentiable stand-in for ``x`` (see the module docstring)."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")  # noqa: TRY004 (PyTorch's type)
    if x.requires_grad:
        t = x.view_as(x)
    else:
        t = x.detach().requires_grad_(True)
    meta(t)["func_input"] = True
    return t


def _outside_leaf(node: Any) -> bool:
    return isinstance(node, AccumulateGrad) and not (node.variable._meta or {}).get("func_input")


def reaches_outside(t: Any) -> bool:
    """Whether ``t`` depends on a tensor that requires grad and is no transform's input."""
    if not isinstance(t, Tensor) or not t.requires_grad:
        return False
    if t.grad_fn is None:
        return not (t._meta or {}).get("func_input")
    stack, seen = [t.grad_fn], {id(t.grad_fn)}
    while stack:
        n = stack.pop()
        if _outside_leaf(n):
            return True
        for nxt, _ in n.next_functions:
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    return False


def release(x: Any) -> Any:
    """Detach ``x`` at the outermost transform unless it depends on something outside."""
    if is_nested() or not isinstance(x, Tensor) or not x.requires_grad:
        return x
    return x if reaches_outside(x) else x.detach()


def release_aux(aux: Any) -> Any:
    """``release`` over the aux tree, whose leaves must be tensors (PyTorch's check)."""
    from ._pytree import tree_map

    def one(x: Any) -> Any:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")  # noqa: TRY004 (PyTorch's type)
        return release(x)

    return tree_map(one, aux)


def zeros_for(g: Any, x: Tensor) -> Tensor:
    from .._creation import zeros_like

    return zeros_like(x) if g is None else g


def _argnum(a: Any, n: int) -> int:
    if not isinstance(a, int):
        raise RuntimeError(f"argnum must be int, got: {type(a)}")  # noqa: TRY004 (PyTorch's type)
    if 0 <= a < n:
        return a
    if -n <= a < 0:
        return a + n
    raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")


def slice_argnums(args: tuple, argnums: Any) -> Any:
    """Validated argnums (int or tuple of ints, non-negative), PyTorch's errors otherwise."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")  # noqa: TRY004 (PyTorch's type)
    if isinstance(argnums, int):
        return _argnum(argnums, len(args))
    wrapped = tuple(_argnum(a, len(args)) for a in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return wrapped


def check_float_outputs(outs: list, api: str) -> None:
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(  # noqa: TRY004 (PyTorch's type)
                f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}"
            )
    for o in outs:
        if not (o.dtype.is_floating_point or o.dtype.is_complex):
            raise RuntimeError(
                "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                f"got Tensor with dtype {o.dtype}"
            )
