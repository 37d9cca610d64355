"""``ember.nn.utils.parametrize``: tensors computed from other parameters on every access.

``register_parametrization(m, "weight", P())`` moves ``m.weight`` to
``m.parametrizations.weight.original`` and makes ``m.weight`` a property returning
``P()(original)``. As in PyTorch, the property lives on a subclass made for this one module
(``ParametrizedLinear``), so the module's class and other instances are untouched.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside this context each parametrized tensor is computed once and reused.

    Example: ``with parametrize.cached(): y = rnn(x)`` evaluates ``weight`` once per module.
    """
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_tensor(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _replace(holder: Module, name: str, value: Tensor) -> None:
    """Write ``value`` into ``holder.name`` in place, or swap the tensor when shapes differ."""
    old = getattr(holder, name)
    if old.shape == value.shape and old.dtype == value.dtype:
        old.copy_(value)
    elif isinstance(old, Parameter):
        holder.register_parameter(name, Parameter(value.detach().clone(), old.requires_grad))
    else:
        holder.register_buffer(name, value.detach().clone())


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original tensor(s)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    # a right_inverse that cannot run at registration counts as the identity
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError(  # noqa: TRY004 (PyTorch raises ValueError)
                f"'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if isinstance(new, Tensor):
            if not unsafe and (new.dtype != original.dtype or new.shape != original.shape):
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype or shape.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}\n"
                    f"original.shape: {tuple(original.shape)}\nright_inverse(original).shape: {tuple(new.shape)}"
                )
            if new is not original:
                with no_grad():
                    if new.shape == original.shape and new.dtype == original.dtype:
                        original.copy_(new)
                    else:
                        original = _like(original, new)
            _register_tensor(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(  # noqa: TRY004 (PyTorch raises ValueError)
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        f"(list, tuple...). Got element {i} of type {type(part).__name__}"
                    )
                part = _like(original, part)
                _register_tensor(self, f"original{i}", part)

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` by running each parametrization's ``right_inverse``, last first."""
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                _replace(self, "original", value)
            else:
                if len(value) != self.ntensors:
                    raise ValueError(
                        f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                        f"Got a sequence of length {len(value)}"
                    )
                for i, part in enumerate(value):
                    _replace(self, f"original{i}", part)

    def forward(self) -> Tensor:
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in mods[1:]:
            x = module(x)
        return x


def _like(original: Tensor, value: Tensor) -> Tensor:
    """``value`` as a leaf of the same kind (Parameter or plain tensor) as ``original``."""
    value = value.detach()
    if isinstance(original, Parameter):
        return Parameter(value, original.requires_grad)
    return value


def _inject_new_class(module: Module) -> None:
    cls = module.__class__

    def getstate(self: Any) -> Any:
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict(). "
            "See: https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        )

    namespace: dict[str, Any] = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        # getstate refuses pickling, so deepcopy (EMA copies, model cloning) needs its own path
        namespace["__deepcopy__"] = _deepcopy
    param_cls = type(f"Parametrized{cls.__name__}", (cls,), namespace)
    object.__setattr__(module, "__class__", param_cls)


def _deepcopy(self: Module, memo: dict) -> Module:
    found = memo.get(id(self))
    if found is not None:
        return found
    # the replica gets its own Parametrized class: removing a parametrization from one copy
    # deletes the property from its class and must leave the other copy working
    cls = self.__class__
    namespace = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
    replica: Any = Module.__new__(type(cls.__name__, cls.__bases__, namespace))
    memo[id(self)] = replica
    object.__setattr__(replica, "__dict__", copy.deepcopy(self.__dict__, memo))
    return replica


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_output(module: Module, tensor_name: str, original: Tensor) -> None:
    """Without ``unsafe``, the parametrized tensor must keep the original's dtype and shape."""
    z = getattr(module, tensor_name)
    if not isinstance(z, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")  # noqa: TRY004 (PyTorch raises ValueError)
    if z.dtype != original.dtype or z.shape != original.shape:
        raise ValueError(
            "Registering a parametrization may not change the dtype or shape of the tensor, "
            "unless `unsafe` flag is enabled.\n"
            f"unparametrized dtype: {original.dtype}\nparametrized dtype: {z.dtype}\n"
            f"unparametrized shape: {tuple(original.shape)}\nparametrized shape: {tuple(z.shape)}"
        )


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.tensor_name`` equal ``parametrization(original)`` on every access.

    Example: ``register_parametrization(lin, "weight", Symmetric())``; the parameter is then
    ``lin.parametrizations.weight.original``. Registering again on the same name chains.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        original = getattr(module, tensor_name)
        plist.append(parametrization)
        plist.unsafe |= unsafe
        if not plist.unsafe:
            _check_output(module, tensor_name, original)
        return module
    if tensor_name not in module._buffers and tensor_name not in module._parameters:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
            f"with name '{tensor_name}'"
        )
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_new_class(module)
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = plist
    _inject_property(module, tensor_name)
    if not unsafe:
        _check_output(module, tensor_name, original)
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo ``register_parametrization`` on ``tensor_name``.

    With ``leave_parametrized=True`` the tensor keeps its current parametrized value;
    otherwise it goes back to the stored original. Example:
    ``remove_parametrizations(lin, "weight")``.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            with no_grad():
                if t.shape == original.shape and t.dtype == original.dtype:
                    original.copy_(t)
                else:
                    original = _like(original, t)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad)
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        object.__setattr__(module, "__class__", module.__class__.__bases__[0])
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization was registered."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Register ``from_module``'s parametrizations (and originals) on ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        src = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        for p in src:
            register_parametrization(to_module, name, p, unsafe=True)
        dst = to_module.parametrizations[name]
        with no_grad():
            for key in ("original",) if src.is_tensor else [f"original{i}" for i in range(src.ntensors)]:
                _replace(dst, key, getattr(src, key))
    return to_module
