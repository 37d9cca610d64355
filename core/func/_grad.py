"""``grad``, ``grad_and_value``, ``vjp`` and ``jvp`` over ember's reverse-mode autograd.

jvp has no forward-mode machinery behind it: it is the double-vjp trick (differentiate the
vjp ``u -> J^T u`` with respect to ``u``, at the tangent), so it costs two backward passes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._creation import zeros_like
from .._tensor import Tensor
from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import meta
from ._autodiff import (
    check_float_outputs,
    fresh,
    is_nested,
    level,
    reaches_outside,
    release,
    release_aux,
    slice_argnums,
)
from ._pytree import pprint, tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "jvp", "vjp"]


def _replace(args: tuple, argnums: int | tuple[int, ...], new: Any) -> tuple:
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    by = dict(zip(argnums, new))
    return tuple(by.get(i, a) for i, a in enumerate(args))


def _split_aux(out: Any, has_aux: bool, api: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out[0], out[1]


def _grads(outs: list, ins: list, cts: list, create_graph: bool) -> list:
    """d(outs . cts)/d(ins), zeros where an input is unused (no None)."""
    pairs = [(o, c) for o, c in zip(outs, cts) if o.requires_grad]
    got: Any = [None] * len(ins)
    if pairs:
        with enable_grad():
            got = _autograd_grad(
                [o for o, _ in pairs],
                ins,
                [c for _, c in pairs],
                retain_graph=True,
                create_graph=create_graph,
                allow_unused=True,
            )
    return [zeros_like(x) if g is None else g for g, x in zip(got, ins)]


def grad_and_value(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable:
    """``(gradient, value)`` of a scalar-valued ``func`` with respect to ``args[argnums]``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = slice_argnums(args, argnums)
        diff = args[nums] if isinstance(nums, int) else tuple(args[i] for i in nums)
        outer = is_nested()
        with level():
            fresh_diff = tree_map(fresh, diff)
            output = func(*_replace(args, nums, fresh_diff), **kwargs)
            output, aux = _split_aux(output, has_aux, "grad_and_value(f)(*args)")
            api = "grad_and_value(f)(*args): Expected f(*args) "
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{api}to return a Tensor, got {type(output)}")  # noqa: TRY004 (PyTorch's type)
            if output.dim() != 0:
                raise RuntimeError(
                    f"{api}to return a scalar Tensor, got tensor with {output.dim()} dims. "
                    "Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
            flat_in, spec = tree_flatten(fresh_diff)
            create = outer or reaches_outside(output)
            gs = _grads([output], flat_in, [None], create)
        g = tree_unflatten([release(x) for x in gs], spec)
        value = release(output)
        if has_aux:
            return g, (value, release_aux(aux))
        return g, value

    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar-valued ``func``: ``grad(f)(x)``; composes (``grad(grad(f))``)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` returns one gradient per primal.

    ``vjp_fn`` may be called many times (its graph is retained).
    """
    outer = is_nested()
    with level():
        fresh_primals = tree_map(fresh, primals)
        out = func(*fresh_primals)
        out, aux = _split_aux(out, has_aux, "vjp(f, *primals)")
        flat_out, out_spec = tree_flatten(out)
        check_float_outputs(flat_out, "vjp(f, *primals)")
    flat_in, in_spec = tree_flatten(fresh_primals)
    keep = outer or any(reaches_outside(o) for o in flat_out)

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None) -> tuple:
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                f"to the function. cotangents: {pprint(ct_spec)}, primal output: {pprint(out_spec)}"
            )
        for i, (c, o) in enumerate(zip(flat_ct, flat_out)):
            if isinstance(c, Tensor) and c.shape != o.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of ember.Size({list(c.shape)}) and "
                    f"output[{i}] has a shape of ember.Size({list(o.shape)})."
                )
        cg = create_graph
        if cg is None:
            cg = keep or is_nested() or any(isinstance(c, Tensor) and c.requires_grad for c in flat_ct)
        gs = _grads(flat_out, flat_in, flat_ct, cg)
        return tree_unflatten([release(g) for g in gs], in_spec)

    result = tree_unflatten([release(o) for o in flat_out], out_spec)
    if has_aux:
        return result, vjp_fn, release_aux(aux)
    return result, vjp_fn


_JVP = "jvp(f, primals, tangents)"


def jvp(
    func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False
) -> tuple:
    """``(func(*primals), J @ tangents)``, by the double-vjp trick (see the module docstring)."""
    if not isinstance(primals, tuple):
        raise RuntimeError(  # noqa: TRY004 (PyTorch's type)
            f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{_JVP}: Expected primals and tangents to have the same python structure. For example, if "
            "primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
            f"{p_spec} and tangents with structure {t_spec}"
        )
    for what, leaves in (("primals", flat_p), ("tangents", flat_t)):
        if not leaves:
            raise RuntimeError(f"{_JVP}: Expected {what} to contain at least one Tensor.")
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(f"{_JVP}: Expected {what} to only contain Tensors, got {type(leaf)}")  # noqa: TRY004 (PyTorch's type)
    for p, t in zip(flat_p, flat_t):
        if p.shape != t.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the original "
                f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                f"forward gradient is of size {list(t.shape)}."
            )
    outer = is_nested()
    with level():
        fp = [fresh(p) for p in flat_p]
        out = func(*tree_unflatten(fp, p_spec))
        out, aux = _split_aux(out, has_aux, _JVP)
        flat_o, o_spec = tree_flatten(out)
        for o in flat_o:
            if not isinstance(o, Tensor):
                raise RuntimeError(  # noqa: TRY004 (PyTorch's type)
                    f"{_JVP}: expected f(*primals) to return only tensors, got unsupported type {type(o)}"
                )
        cg = outer or any(reaches_outside(o) for o in flat_o) or any(t.requires_grad for t in flat_t)
        jv: list[Any] = [None] * len(flat_o)
        live = [i for i, o in enumerate(flat_o) if o.requires_grad]
        if live:
            us = []
            for i in live:
                u = zeros_like(flat_o[i]).requires_grad_(True)
                meta(u)["func_input"] = True
                us.append(u)
            g = _autograd_grad([flat_o[i] for i in live], fp, us, create_graph=True, allow_unused=True)
            pairs = [(gi, ti) for gi, ti in zip(g, flat_t) if gi is not None and gi.requires_grad]
            if pairs:
                got = _autograd_grad(
                    [gi for gi, _ in pairs], us, [ti for _, ti in pairs], create_graph=cg, allow_unused=True
                )
                for i, j in zip(live, got):
                    jv[i] = j
        if strict and any(j is None for j in jv):
            raise RuntimeError(
                "jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                "This is not allowed with strict=True."
            )
        tangents_out = [zeros_like(o) if j is None else j for j, o in zip(jv, flat_o)]
    primal_out = tree_unflatten([release(o) for o in flat_o], o_spec)
    tangent_out = tree_unflatten([release(t) for t in tangents_out], o_spec)
    if has_aux:
        return primal_out, tangent_out, release_aux(aux)
    return primal_out, tangent_out
