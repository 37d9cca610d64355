"""``ember.autograd.functional``: jacobian, hessian, vjp, jvp, hvp, vhp built on ``grad``.

jvp uses the double-vjp trick (differentiate a vjp with respect to its cotangent), so it
needs no forward-mode machinery and works on every backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _tuple(x: Any) -> tuple[Any, bool]:
    return (x, True) if isinstance(x, tuple) else ((x,), False)


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    return tuple(
        x.detach().requires_grad_(True) if not x.requires_grad or not create_graph else x for x in inputs
    )


def _grads(outputs: tuple, inputs: tuple, grad_outputs: tuple, create_graph: bool) -> tuple:
    from .._creation import zeros_like
    from . import grad

    gs = grad(outputs, inputs, grad_outputs, create_graph=True, allow_unused=True)
    return tuple(zeros_like(x) if g is None else g for g, x in zip(gs, inputs))


def vjp(
    func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), v^T J)``."""
    ins, is_tuple = _tuple(inputs)
    ins = _prepare(ins, create_graph)
    out = func(*ins)
    outs, out_tuple = _tuple(out)
    if v is None:
        from .._creation import ones_like

        if any(o.numel() != 1 for o in outs):
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single Tensor with a single element."
            )
        vs = tuple(ones_like(o) for o in outs)
    else:
        vs, _ = _tuple(v)
    g = _grads(outs, ins, vs, create_graph)
    res = g if is_tuple else g[0]
    o = out if create_graph else (tuple(x.detach() for x in outs) if out_tuple else outs[0].detach())
    return o, (res if create_graph else _detach(res))


def _detach(x: Any) -> Any:
    return tuple(t.detach() for t in x) if isinstance(x, tuple) else x.detach()


def jvp(
    func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), J v)`` through the double-vjp trick."""
    from .._creation import ones_like, zeros_like

    ins, _ = _tuple(inputs)
    ins = _prepare(ins, True)
    vs = tuple(ones_like(x) for x in ins) if v is None else _tuple(v)[0]
    out = func(*ins)
    outs, out_tuple = _tuple(out)
    dummies = tuple(zeros_like(o).requires_grad_(True) for o in outs)
    g = _grads(outs, ins, dummies, True)
    from . import grad

    jv = grad(g, dummies, vs, create_graph=create_graph, allow_unused=True)
    jv = tuple(zeros_like(o) if j is None else j for j, o in zip(jv, outs))
    o = tuple(x.detach() for x in outs) if out_tuple else outs[0].detach()
    res = jv if out_tuple else jv[0]
    return o, (res if create_graph else _detach(res))


def jacobian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian: for one input and one output, shape ``out.shape + in.shape``."""
    from .._creation import zeros_like
    from .._ops.join import stack

    ins, is_tuple = _tuple(inputs)
    ins = _prepare(ins, True)
    out = func(*ins)
    outs, out_tuple = _tuple(out)
    table = []
    for o in outs:
        rows: list[list[Any]] = [[] for _ in ins]
        flat = o.reshape(-1)
        for k in range(flat.numel()):
            from . import grad

            gs = grad(flat[k], ins, retain_graph=True, create_graph=create_graph, allow_unused=True)
            for j, (g, x) in enumerate(zip(gs, ins)):
                rows[j].append(zeros_like(x) if g is None else g)
        per_in = []
        for j, x in enumerate(ins):
            if rows[j]:
                jac = stack(rows[j], 0).reshape(o.shape + x.shape)
            else:
                jac = zeros_like(x).reshape((0,) + tuple(x.shape)).reshape(o.shape + x.shape)
            per_in.append(jac if create_graph else jac.detach())
        table.append(tuple(per_in) if is_tuple else per_in[0])
    return tuple(table) if out_tuple else table[0]


def hessian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    _, is_tuple = _tuple(inputs)

    def gradient(*xs: Any) -> Any:
        from . import grad

        out = func(*xs)
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        from .._creation import zeros_like

        gs = tuple(zeros_like(x) if g is None else g for g, x in zip(gs, xs))
        return gs if is_tuple else gs[0]

    return jacobian(gradient, inputs, create_graph=create_graph)


def vhp(
    func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), v^T H)``."""
    from . import grad

    ins, is_tuple = _tuple(inputs)
    ins = _prepare(ins, True)
    out = func(*ins)
    gs = grad(out, ins, create_graph=True, allow_unused=True)
    vs = _tuple(v)[0]
    hv = grad(gs, ins, vs, create_graph=create_graph, allow_unused=True)
    from .._creation import zeros_like

    hv = tuple(zeros_like(x) if h is None else h for h, x in zip(hv, ins))
    res = hv if is_tuple else hv[0]
    return out.detach(), (res if create_graph else _detach(res))


def hvp(
    func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), H v)``; equal to vhp for the symmetric Hessians of smooth functions."""
    return vhp(func, inputs, v, create_graph, strict)
