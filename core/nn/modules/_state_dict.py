"""``Module.state_dict`` / ``load_state_dict`` helpers, with PyTorch's error texts."""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Any

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["IncompatibleKeys", "collect", "load_into"]


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys that did not match."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"

    __str__ = __repr__


def collect(module: Any, destination: OrderedDict, prefix: str, keep_vars: bool) -> None:
    """Add ``module``'s own parameters and persistent buffers, then its children's."""
    for name, p in module._parameters.items():
        if p is not None:
            destination[prefix + name] = p if keep_vars else p.detach()
    for name, b in module._buffers.items():
        if b is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = b if keep_vars else b.detach()
    for name, child in module._modules.items():
        if child is not None:
            collect(child, destination, prefix + name + ".", keep_vars)


def _load_own(module: Any, state: dict, prefix: str, missing: list, errors: list, assign: bool) -> None:
    local = {k: v for k, v in module._parameters.items() if v is not None}
    local.update(
        {
            k: v
            for k, v in module._buffers.items()
            if v is not None and k not in module._non_persistent_buffers_set
        }
    )
    for name, param in local.items():
        key = prefix + name
        if key not in state:
            # BatchNorm's step counter may be absent from old checkpoints: PyTorch keeps its own.
            if name not in getattr(module, "_optional_state", ()):
                missing.append(key)
            continue
        value = state[key]
        if not isinstance(value, Tensor):
            errors.append(
                f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                f"object from checkpoint but received {type(value)}"
            )
            continue
        if value._shape != param._shape:
            errors.append(
                f"size mismatch for {key}: copying a param with shape {_size(value)} from checkpoint, "
                f"the shape in current model is {_size(param)}."
            )
            continue
        if assign:
            _assign(module, name, param, value)
        else:
            with no_grad():
                param.copy_(value)


def _assign(module: Any, name: str, param: Tensor, value: Tensor) -> None:
    from ..parameter import Parameter

    if name in module._parameters:
        module._parameters[name] = Parameter(value.detach(), param.requires_grad)
    else:
        module._buffers[name] = value


def _size(t: Tensor) -> str:
    return f"torch.Size({list(t._shape)})"


def load_into(module: Any, state_dict: Any, strict: bool, assign: bool) -> IncompatibleKeys:
    """Copy ``state_dict`` into ``module`` recursively; raise on mismatch when ``strict``."""
    if not isinstance(state_dict, dict):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing: list[str] = []
    errors: list[str] = []
    unexpected: list[str] = []
    expected: set[str] = set()
    state_dict = OrderedDict(state_dict)  # pre-hooks may rename keys; the caller's dict stays as is
    for prefix, m in module.named_modules(remove_duplicate=False):
        p = prefix + "." if prefix else ""
        for hook in list(m.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            hook(m, state_dict, p, {}, strict, missing, unexpected, errors)
        _load_own(m, state_dict, p, missing, errors, assign)
        expected.update(p + k for k, v in m._parameters.items() if v is not None)
        expected.update(
            p + k for k, v in m._buffers.items() if v is not None and k not in m._non_persistent_buffers_set
        )
    unexpected += [k for k in state_dict if k not in expected]
    if strict:
        if unexpected:
            errors.insert(
                0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected))
            )
        if missing:
            errors.insert(
                0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing))
            )
    if errors:
        raise RuntimeError(
            "Error(s) in loading state_dict for {}:\n\t{}".format(type(module).__name__, "\n\t".join(errors))
        )
    return IncompatibleKeys(missing, unexpected)
