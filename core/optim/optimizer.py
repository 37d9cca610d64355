"""The optimizer base class: parameter groups, per-parameter state and their bookkeeping.

Subclasses implement one method, ``_update(p, grad, state, group)``: the per-parameter
update of their documented formula. Everything else (groups, defaults, ``zero_grad``,
``state_dict``, closures, ``no_grad``) lives here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from copy import deepcopy
from typing import Any

from .._dispatch import call, has_kernel
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..compiler._disable import eager_only

__all__ = [
    "Optimizer",
    "check_fused",
    "check_range",
    "fused_kernel",
    "init_step",
    "required",
    "run_foreach",
    "run_fused",
    "state_fits",
]


class _Required:
    """Marks a default every parameter group must give (``SGD``'s ``lr`` in old PyTorch)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


def _type_name(x: Any) -> str:
    """PyTorch's legacy spelling of a tensor's type (``torch.FloatTensor``) or the class name."""
    if isinstance(x, Tensor):
        from .._dtype import PT_NAMES as _PT

        return f"torch.{_PT.get(x.dtype.name, '')}Tensor"
    return type(x).__name__


class _Handle:
    """Returned by ``register_step_*_hook``: ``handle.remove()`` unregisters the hook."""

    def __init__(self, hooks: dict[int, Any], key: int) -> None:
        self._hooks, self._key = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)


def _with_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """Run the optimizer's step pre/post hooks around a ``step`` implementation."""

    def hooked(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        for hook in list(self._step_pre_hooks.values()):
            replaced = hook(self, args, kwargs)
            if replaced is not None:
                args, kwargs = replaced
        out = step(self, *args, **kwargs)
        for hook in list(self._step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    hooked.__name__, hooked.__doc__ = step.__name__, step.__doc__
    return hooked


class Optimizer:
    """Base class: ``Optimizer(params, defaults)``.

    ``params`` is an iterable of tensors or of dicts (parameter groups, each with a
    ``"params"`` entry and optional per-group options that override ``defaults``).
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # ember.compile replays a captured training step with the update run eagerly in its
        # place (learning rates, step counts and lazily made state stay live).
        if "step" in cls.__dict__:
            cls.step = eager_only(_with_hooks(cls.__dict__["step"]))  # type: ignore[method-assign]
        if "zero_grad" in cls.__dict__:
            cls.zero_grad = eager_only(cls.__dict__["zero_grad"], idempotent=True)  # type: ignore[method-assign]

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self._step_pre_hooks: dict[int, Any] = {}
        self._step_post_hooks: dict[int, Any] = {}
        self._hook_count = 0
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {_type_name(params)}"
            )
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> _Handle:
        """``hook(optimizer, args, kwargs)`` runs before each ``step``; it may return new (args, kwargs)."""
        self._hook_count += 1
        self._step_pre_hooks[self._hook_count] = hook
        return _Handle(self._step_pre_hooks, self._hook_count)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> _Handle:
        """``hook(optimizer, args, kwargs)`` runs after each ``step``."""
        self._hook_count += 1
        self._step_post_hooks[self._hook_count] = hook
        return _Handle(self._step_post_hooks, self._hook_count)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_step_pre_hooks", {})
        self.__dict__.setdefault("_step_post_hooks", {})
        self.__dict__.setdefault("_hook_count", 0)

    # -- groups ---------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (fine-tuning a layer, say)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_type_name(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering "
                "of tensors in sets will change between runs. Please use a list instead."
            )
        params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is {_type_name(p)}"
                )
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = {**param_group, "params": params}
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params):
            import warnings

            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error",
                stacklevel=3,
            )
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    # -- gradients and steps --------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad`` (to ``None`` by default, or to zeros)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; ``closure`` re-evaluates the loss."""
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad

            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._step_group(group)
        return loss

    # The multi-tensor kernel of this optimizer's update (``ember.backends.ops``), if any.
    _foreach_op: str | None = None

    def _step_group(self, group: dict[str, Any]) -> None:
        params = group["params"]
        # foreach=None runs per tensor, as PyTorch does on the CPU (the numbers are the same).
        if self._foreach_op is not None and group.get("foreach") and not group.get("differentiable"):
            params = self._step_foreach(group)
        for p in params:
            grad = p.grad
            if grad is not None:
                self._step_one(p, grad, group)

    def _step_one(self, p: Tensor, grad: Tensor, group: dict[str, Any]) -> None:
        state = self.state.get(p)
        if state is None:  # stored only once filled: SGD without momentum keeps none, as PyTorch
            state = {}
            self._update(p, grad, state, group)
            if state:
                self.state[p] = state
        else:
            self._update(p, grad, state, group)

    def _step_foreach(self, group: dict[str, Any]) -> list[Tensor]:
        """Update the group's eligible tensors with one ``_foreach_op`` call per backend and
        device; returns the parameters left for the per-tensor path."""
        op = self._foreach_op
        batches: dict[tuple[int, Any], list[Tensor]] = {}
        rest = []
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if has_kernel(p._be, op) and _fusable(p, grad):  # type: ignore[arg-type]
                batches.setdefault((id(p._be), p._device), []).append(p)
            else:
                rest.append(p)
        for batch in batches.values():
            rest.extend(self._foreach(batch, group))
        return rest

    def _foreach(self, params: list[Tensor], group: dict[str, Any]) -> list[Tensor]:
        """One multi-tensor kernel call for ``params`` (one backend and device, each with a
        fusable gradient); returns those it could not take (their state did not fit)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _foreach")

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _update")

    # -- checkpoints ----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore state saved by ``state_dict`` (tensors move to each parameter's device and dtype)."""
        state_dict = deepcopy(state_dict)
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for ours, theirs in zip(self.param_groups, saved):
            if len(ours["params"]) != len(theirs["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size of "
                    "optimizer's group"
                )
        by_index = {
            i: p
            for ours, theirs in zip(self.param_groups, saved)
            for i, p in zip(theirs["params"], ours["params"])
        }
        self.state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in by_index:
                p = by_index[k]
                self.state[p] = {name: _cast_state(p, name, value) for name, value in v.items()}
        self.param_groups = [
            {**theirs, "params": ours["params"]} for ours, theirs in zip(self.param_groups, saved)
        ]
        for group in self.param_groups:  # an older checkpoint lacks newer options: ours fill in
            for name, default in self.defaults.items():
                if default is not required:
                    group.setdefault(name, default)


Optimizer.step = eager_only(_with_hooks(Optimizer.step))  # type: ignore[method-assign]
Optimizer.zero_grad = eager_only(Optimizer.zero_grad, idempotent=True)  # type: ignore[method-assign]


_SCALAR_STATE = ("step", "eta", "mu", "mu_product")


def _cast_state(p: Tensor, name: str, value: Any) -> Any:
    if name in _SCALAR_STATE and isinstance(value, (int, float)) and not isinstance(value, bool):
        from .._creation import tensor

        device = None if name == "step" else p.device  # older checkpoints kept Python numbers
        return tensor(float(value), device=device)  # PyTorch now loads float32 tensors
    if not isinstance(value, Tensor):
        return value
    if name == "step":  # step counters stay float32 on their device, as in PyTorch
        return value
    if value.is_floating_point():
        return value.to(dtype=p.dtype, device=p.device)
    return value.to(device=p.device)


def check_fused(fused: bool | None, foreach: bool | None, differentiable: bool) -> None:
    """PyTorch's constructor checks of the ``fused`` flag."""
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")


def check_range(name: str, value: Any, low: float = 0.0) -> None:
    """PyTorch's constructor checks: ``Invalid learning rate: -1``."""
    if not isinstance(value, Tensor) and value < low:
        raise ValueError(f"Invalid {name}: {value}")


def init_step(state: dict[str, Any]) -> float:
    """Advance the float32 ``step`` counter PyTorch keeps in the state and return it."""
    from .._creation import tensor

    t = state.get("step")
    if t is None:  # PyTorch's states list ``step`` first
        rest = dict(state)
        state.clear()
        t = state["step"] = tensor(0.0)
        state.update(rest)
    elif not isinstance(t, Tensor):
        t = state["step"] = tensor(float(t))
    t.add_(1)
    return t.item()


_FUSABLE = ("float32", "float64")


def _plain_types() -> tuple[type, ...]:
    """Tensor and nn.Parameter: the classes whose in-place updates need no per-op path."""
    from ..nn.parameter import Parameter

    return (Tensor, Parameter)


def fused_kernel(p: Tensor, grad: Tensor, group: dict[str, Any], op: str) -> Any:
    """``op`` when the backend has a fused kernel for this update, or None to run the per-op formula.

    Fused only for plain dense float32/float64 tensors outside ``foreach``/``differentiable``
    modes, with a gradient that does not itself require grad (a graph to keep).
    """
    if not has_kernel(p._be, op) or group.get("differentiable") or group.get("foreach"):
        return None
    return op if _fusable(p, grad) else None


def _fusable(p: Tensor, grad: Tensor) -> bool:
    """A plain float32/float64 parameter whose gradient matches it and keeps no graph; on a
    ``contiguous_only`` backend both contiguous (a copy would lose the write)."""
    if grad.requires_grad or type(p) not in _plain_types() or type(grad) is not Tensor:
        return False
    if p.dtype.name not in _FUSABLE or grad.dtype is not p.dtype or grad._shape != p._shape:
        return False
    if grad._be is not p._be or grad._device != p._device:
        return False
    return not getattr(p._be.backend, "contiguous_only", False) or (
        p.is_contiguous() and grad.is_contiguous()
    )


def state_fits(p: Tensor, t: Tensor | None) -> bool:
    """Whether state tensor ``t`` (None: absent) can be written by a fused kernel beside ``p``."""
    if t is None:
        return True
    if t.dtype is not p.dtype or t._shape != p._shape or t._be is not p._be or t._device != p._device:
        return False
    return not getattr(p._be.backend, "contiguous_only", False) or t.is_contiguous()


def run_foreach(be: Any, op: str, lists: tuple[list[Tensor | None], ...], params: tuple[Any, ...]) -> None:
    """Run multi-tensor kernel ``op`` on ``lists`` (params, grads, state...) and mark every
    written tensor (all lists but the gradients) as modified."""
    call(be, op, *([None if t is None else t._data for t in ts] for ts in lists), *params)
    for i, ts in enumerate(lists):
        if i != 1:
            for t in ts:
                if t is not None:
                    t._vc[0] += 1


def run_fused(p: Tensor, k: str, tensors: tuple[Tensor | None, ...], params: tuple[Any, ...]) -> bool:
    """Run fused kernel ``k`` in place on ``tensors`` (None passes through); False if it cannot.

    A ``contiguous_only`` backend gets only contiguous tensors (a copy would lose the write).
    """
    live = [t for t in tensors if t is not None]
    if getattr(p._be.backend, "contiguous_only", False) and not all(t.is_contiguous() for t in live):
        return False
    call(p._be, k, *(None if t is None else t._data for t in tensors), *params)
    for t in live[:1] + live[2:]:  # every written tensor; the gradient is only read
        t._vc[0] += 1
    return True
