"""``vmap``: map a function over a dimension of its inputs.

ember has no batching rules: vmap runs ``func`` once per batch element (a Python loop over
``select``-ed slices) and stacks the results along ``out_dims``. The values are PyTorch's, and
so are the argument checks and their messages; the cost is one call per element. The
differences this leaves are in the docstring of ``vmap``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._ops.join import stack
from .._random import default_generator
from .._tensor import Tensor
from ._pytree import Spec, broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]


def _name(func: Any) -> str:
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


_RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
    "'different' randomness flags on vmap or perform the randomness operation out of vmap"
)


def _flat_in_dims(func: Any, in_dims: Any, args: tuple) -> tuple[list, list, Spec]:
    head = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): "
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(  # noqa: TRY004 (PyTorch's type)
            f"{head}expected `in_dims` to be int or a (potentially nested) tuple matching the structure "
            f"of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
            "trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat, spec = tree_flatten(args)
    dims = broadcast_prefix(in_dims, spec)
    if dims is None:
        raise ValueError(
            f"{head}in_dims is not compatible with the structure of `inputs`. in_dims has structure "
            f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}."
        )
    for i, (a, d) in enumerate(zip(flat, dims)):
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"{head}Got in_dim={d} for an input but in_dim must be either an integer dimension or None."
            )
        if d is not None and not isinstance(a, Tensor):
            raise ValueError(
                f"{head}Got in_dim={d} for an input but the input is of type {type(a)}. We cannot vmap over "
                "non-Tensor arguments, please use None as the respective in_dim"
            )
        if d is not None and not -a.dim() <= d < a.dim():
            raise ValueError(
                f"{head}Got in_dim={d} for some input, but that input is a Tensor of dimensionality {a.dim()} "
                f"so expected in_dim to satisfy -{a.dim()} <= in_dim < {a.dim()}."
            )
        if d is not None and d < 0:
            dims[i] = d % a.dim()
    return flat, dims, spec


def _batch_size(flat: list, dims: list) -> int:
    sizes = [a.shape[d] for a, d in zip(flat, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, "
            f"got sizes {sizes} for the mapped dimension"
        )
    return sizes[0]


def _check_out_dims(func: Any, out_dims: Any) -> None:
    leaves = [out_dims] if isinstance(out_dims, int) else tree_flatten(out_dims)[0]
    for d in leaves:
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                "collection of ints representing where in the outputs the vmapped dimension should appear."
            )


def _flat_out_dims(func: Any, out_dims: Any, first: Any, spec: Spec) -> list:
    dims: list | None
    if isinstance(first, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            dims = list(out_dims)
        else:
            dims = None
    else:
        dims = broadcast_prefix(out_dims, spec)
    if dims is None:
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
            f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs has "
            f"structure {spec}."
        )
    return dims


def _same_everywhere(values: list) -> bool:
    first = values[0]
    for v in values[1:]:
        if v is first:
            continue
        if not isinstance(v, Tensor) or not isinstance(first, Tensor):
            if isinstance(v, Tensor) or isinstance(first, Tensor) or v != first:
                return False
            continue
        if v.shape != first.shape or v.dtype != first.dtype or not bool((v == first).all()):
            return False
    return True


def _join(func: Any, per_elem: list[list], dims: list) -> list:
    name = _name(func)
    out = []
    for k, d in enumerate(dims):
        values = [leaves[k] for leaves in per_elem]
        if d is None:
            if not _same_everywhere(values):
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
                )
            out.append(values[0])
            continue
        if not isinstance(values[0], Tensor):
            raise ValueError(  # noqa: TRY004 (PyTorch's type)
                f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(values[0])}. "
                "Did you mean to set out_dims= to None for output?"
            )
        out.append(stack(values, d))
    return out


def _run(
    func: Callable, flat: list, dims: list, spec: Spec, size: int, randomness: str, kwargs: dict
) -> list:
    """``func`` on each batch element: a list of ``(flat outputs, spec)``.

    Random ops are seen through the default generator's (seed, offset): ``'same'`` rewinds it
    for each element; ``'error'`` raises when an element's call moved it.
    """
    gen = default_generator
    start = (gen._seed, gen._offset)
    results = []
    empty = size == 0
    for b in range(max(size, 1)):
        if randomness == "same":
            gen._seed, gen._offset = start
        before = (gen._seed, gen._offset)
        if empty:  # one call on zeros of an element's shape, for the outputs' shapes
            sliced = [
                a if d is None else a.new_zeros(a.shape[:d] + a.shape[d + 1 :]) for a, d in zip(flat, dims)
            ]
        else:
            sliced = [a if d is None else a.select(d, b) for a, d in zip(flat, dims)]
        results.append(tree_flatten(func(*tree_unflatten(sliced, spec), **kwargs)))
        if randomness == "error" and (gen._seed, gen._offset) != before:
            raise RuntimeError(_RANDOM_ERROR)
    return results


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """Map ``func`` over dimension ``in_dims`` of its inputs; outputs gain it at ``out_dims``.

    A loop over the batch (ember has no batching rules): the results are PyTorch's, one call
    per element. Differences left: ``.item()`` and data-dependent control flow work inside
    instead of raising; an output with ``out_dims=None`` is accepted when every element gives
    the same value (PyTorch asks whether it depends on a batched input). ``randomness='same'``
    replays the default generator's state for each element; ``'error'`` raises after the first
    element whose call drew from the default generator; ``chunk_size`` is checked and changes nothing (the loop runs one element at a time).
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _check_out_dims(func, out_dims)
        flat, dims, spec = _flat_in_dims(func, in_dims, args)
        size = _batch_size(flat, dims)
        results = _run(func, flat, dims, spec, size, randomness, kwargs)
        first, out_spec = results[0]
        single = first[0] if out_spec.is_leaf() else None
        dims_out = _flat_out_dims(func, out_dims, single, out_spec)
        joined = _join(func, [leaves for leaves, _ in results], dims_out)
        if size == 0:
            joined = [t.narrow(d, 0, 0) if d is not None else t for t, d in zip(joined, dims_out)]
        return tree_unflatten(joined, out_spec)

    return wrapper
