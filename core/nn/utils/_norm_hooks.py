"""The hook-based ``weight_norm`` and ``spectral_norm`` (PyTorch's older API, still widely used).

Each stores its tensors as parameters/buffers of the module itself (``weight_g`` and
``weight_v``; ``weight_orig``, ``weight_u`` and ``weight_v``) and recomputes ``weight`` as
a plain attribute in a forward pre-hook, as PyTorch does.
"""

from __future__ import annotations

import warnings
from typing import Any

import ember as E

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .._functional.linear import normalize
from ..modules.module import Module
from ..parameter import Parameter
from .parametrizations import _is_transposed_conv, _weight_norm, norm_except_dim

__all__ = ["remove_spectral_norm", "remove_weight_norm", "spectral_norm", "weight_norm"]


class WeightNorm:
    """Forward pre-hook recomputing ``name`` from ``name_g`` and ``name_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _check_unique(module: Module, kind: type, name: str, what: str) -> None:
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, kind) and hook.name == name:  # type: ignore[attr-defined]
            raise RuntimeError(f"Cannot register two {what} hooks on the same parameter {name}")


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Replace ``module.name`` by ``name_g`` (magnitude) and ``name_v`` (direction).

    ``w = g * v / ||v||`` (norm over all dimensions but ``dim``; ``None``: the whole tensor),
    recomputed before every forward. Example: ``m = weight_norm(nn.Linear(20, 40))``.
    """
    warnings.warn(
        "`nn.utils.weight_norm` is deprecated in favor of `nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    _check_unique(module, WeightNorm, name, "weight_norm")
    fn = WeightNorm(name, -1 if dim is None else dim)
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def _remove_hook(module: Module, kind: type, name: str, what: str) -> Module:
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:  # type: ignore[attr-defined]
            hook.remove(module)  # type: ignore[attr-defined]
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Fold ``name_g`` and ``name_v`` back into a single parameter ``name``."""
    return _remove_hook(module, WeightNorm, name, "weight_norm")


class SpectralNorm:
    """Forward pre-hook dividing ``name_orig`` by its power-iteration spectral norm."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.name = name
        self.n_power_iterations = n_power_iterations
        self.dim = dim
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # v first, then u: the older API's order, kept so the numbers match
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(E.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(normalize(E.mv(weight_mat, v), dim=0, eps=self.eps))
            u = u.clone()
            v = v.clone()
        sigma = E.dot(u, E.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.name`` by its spectral norm before every forward (hook-based API).

    Keeps ``name_orig`` (parameter), ``name_u`` and ``name_v`` (buffers); in training mode
    each forward runs ``n_power_iterations`` steps. Example:
    ``m = spectral_norm(nn.Linear(20, 40))``.
    """
    _check_unique(module, SpectralNorm, name, "spectral_norm")
    if dim is None:
        dim = 1 if _is_transposed_conv(module) else 0
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    with no_grad():
        h, w = fn.reshape_weight_to_matrix(weight).shape
        u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=eps)
        v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=eps)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Fold ``name_orig`` divided by its current spectral norm back into ``name``."""
    return _remove_hook(module, SpectralNorm, name, "spectral_norm")
