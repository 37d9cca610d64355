"""``jacrev``, ``jacfwd`` and ``hessian``.

Both Jacobians are built in reverse mode, one vjp per output element (ember has no forward
mode), so ``jacfwd`` gives ``jacrev``'s values and costs what it costs; only its argument
checks and error messages are those of PyTorch's forward-mode ``jacfwd``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._creation import zeros
from .._ops.join import stack
from .._tensor import Tensor
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
from ._grad import _grads, _replace, _split_aux
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["hessian", "jacfwd", "jacrev"]


def _no_complex(api: str, leaves: list, what: str) -> None:
    for i, t in enumerate(leaves):
        if isinstance(t, Tensor) and t.dtype.is_complex:
            raise RuntimeError(
                f"{api}: Expected all {what}s to be real but received complex tensor at flattened {what} idx: {i}"
            )


def _one_hot_rows(outs: list, ins: list, create: bool) -> list[list[Any]]:
    """``rows[j][i]``: the Jacobian of output ``j`` with respect to input ``i``."""
    table: list[list[Any]] = []
    for j, o in enumerate(outs):
        n = o.numel()
        per_in: list[list[Any]] = [[] for _ in ins]
        for k in range(n):
            basis = [zeros(p.shape, dtype=p.dtype, device=p.device) for p in outs]
            basis[j].view(-1)[k] = 1
            for i, g in enumerate(_grads(outs, ins, basis, create)):
                per_in[i].append(g)
        row = []
        for i, x in enumerate(ins):
            shape = tuple(o.shape) + tuple(x.shape)
            if n:
                row.append(stack(per_in[i], 0).reshape(shape))
            else:
                row.append(zeros(shape, dtype=x.dtype, device=x.device))
        table.append(row)
    return table


def _jacobian(
    func: Callable[..., Any], argnums: int | tuple[int, ...], has_aux: bool, api: str, fwd: bool
) -> Callable:
    out_api = "jvp(f, primals, tangents)" if fwd else "vjp(f, *primals)"

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        _no_complex(api, tree_flatten(args)[0], "input")
        nums = slice_argnums(args, argnums)
        diff = args[nums] if isinstance(nums, int) else tuple(args[i] for i in nums)
        outer = is_nested()
        with level():
            fresh_diff = tree_map(fresh, diff)
            out = func(*_replace(args, nums, fresh_diff))
            out, aux = _split_aux(out, has_aux, out_api)
            flat_out, out_spec = tree_flatten(out)
            check_float_outputs(flat_out, out_api)
            _no_complex(api, flat_out, "output")
            flat_in, _ = tree_flatten(fresh_diff)
            create = outer or any(reaches_outside(o) for o in flat_out)
            table = _one_hot_rows(flat_out, flat_in, create)
        per_out = []
        for row in table:
            row = [release(j) for j in row]
            if isinstance(nums, int):
                per_out.append(tree_unflatten(row, tree_flatten(fresh_diff)[1]))
            else:
                parts, at = [], 0
                for d in fresh_diff:
                    leaves, spec = tree_flatten(d)
                    parts.append(tree_unflatten(row[at : at + len(leaves)], spec))
                    at += len(leaves)
                per_out.append(tuple(parts))
        jac = tree_unflatten(per_out, out_spec)
        return (jac, release_aux(aux)) if has_aux else jac

    return wrapper


def jacrev(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable:
    """The Jacobian of ``func`` with respect to ``args[argnums]``, one vjp per output element.

    Shapes are ``out.shape + in.shape`` for each (output, input) pair of leaves.
    """
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux, "jacrev", fwd=False)


def jacfwd(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable:
    """PyTorch's ``jacfwd``, computed in reverse mode as ``jacrev`` (ember has no forward mode).

    The values are the same; the cost is one vjp per output element instead of one jvp per
    input element. ``randomness`` is accepted for PyTorch's signature: nothing is vmapped.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )
    return _jacobian(func, argnums, has_aux, "jacfwd", fwd=True)


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable:
    """``jacfwd(jacrev(func, argnums), argnums)``, as PyTorch defines it."""
    return jacfwd(jacrev(func, argnums), argnums)
