"""``functional_call`` and ``stack_module_state``: a module run with tensors it does not own.

``functional_call`` puts the given tensors in the module's ``_parameters``/``_buffers`` entries
(or attributes) for one call and puts the originals back after, even when the call raises,
so ``grad`` and ``vmap`` can treat a model's weights as function arguments.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .._ops.join import stack
from .._tensor import Tensor

if TYPE_CHECKING:
    from ..nn.modules.module import Module

__all__ = ["functional_call", "stack_module_state"]

_MISSING = object()


def _owner(module: Module, name: str) -> tuple[Module, str]:
    prefix, _, attr = name.rpartition(".")
    mod = module
    for part in prefix.split(".") if prefix else ():
        sub = mod._modules.get(part)
        if sub is None:
            raise AttributeError(f"{mod._get_name()} has no attribute `{part}`")
        mod = sub
    return mod, attr


def _swap(module: Module, name: str, value: Any) -> Any:
    """Put ``value`` at ``name`` (``_MISSING`` removes it); return what was there."""
    mod, attr = _owner(module, name)
    for table in (mod._parameters, mod._buffers):
        if attr in table:
            old = table[attr]
            if value is _MISSING:
                del table[attr]
            else:
                table[attr] = value
            return old
    old = getattr(mod, attr, _MISSING)
    if old is not _MISSING and old is not None and not isinstance(old, Tensor):
        raise TypeError(f"attribute `{attr}`: {old} is not an instance of ember.Tensor")
    if value is _MISSING:
        if old is not _MISSING:
            object.__delattr__(mod, attr)
    else:
        object.__setattr__(mod, attr, value)
    return old


def _named_tensors(module: Module) -> dict[str, Any]:
    named: dict[str, Any] = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie(module: Module, given: dict[str, Any]) -> dict[str, Any]:
    """``given`` with each tied name's value copied to the names tied to it."""
    groups: dict[int, set[str]] = {}
    for name, t in _named_tensors(module).items():
        groups.setdefault(id(t), set()).add(name)
    tied = {n: g for g in groups.values() if len(g) > 1 for n in g}
    out = dict(given)
    for name, value in given.items():
        names = tied.get(name)
        if names is None:
            continue
        if len(names & set(given)) > 1 and len({id(given[n]) for n in names if n in given}) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                "Consider using tie_weights=False"
            )
        for other in names:
            out[other] = value
    return out


@contextmanager
def _reparametrized(
    module: Module, tensors: dict[str, Any], tie_weights: bool, strict: bool
) -> Iterator[None]:
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        valid = set(_named_tensors(module))
        missing, unexpected = sorted(valid - set(tensors)), sorted(set(tensors) - valid)
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(errors)
            )
    originals: list[tuple[str, Any]] = []
    try:
        for name, value in tensors.items():
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{value} is not an instance of ember.Tensor")
            originals.append((name, _swap(module, name, value)))
        yield
    finally:
        for name, old in reversed(originals):
            _swap(module, name, old)


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: dict[str, Any] | Sequence[dict[str, Any]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with its parameters and buffers replaced by the given ones."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous"
            )
        tensors = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(  # noqa: TRY004 (PyTorch's type)
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
            f"but got {type(parameter_and_buffer_dicts)}"
        )
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrized(module, tensors, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def _stacked_leaf(tensors: tuple, name: str) -> Tensor:
    wants = [t.requires_grad for t in tensors]
    if any(wants) and not all(wants):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack(list(tensors))
    return out.detach().requires_grad_() if all(wants) else out


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """``(params, buffers)``: each model's tensors stacked along a new leading dimension.

    The stacked parameters are new leaves (requiring grad as the originals do), ready for
    ``vmap(functional_call ...)`` over an ensemble.
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers
