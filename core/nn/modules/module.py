"""``nn.Module``: registries of parameters, buffers and submodules, hooks, state_dict."""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...compiler._disable import eager_only
from ..parameter import Buffer, Parameter
from ._hooks import BackwardHookRunner, RemovableHandle
from ._state_dict import IncompatibleKeys, collect, load_into
from ._util import addindent as _addindent
from ._util import check_name as _check_name
from ._util import typename as _typename

__all__ = ["Module"]


class Module:
    """Base class of every layer and model: subclasses set attributes and define ``forward``.

    Example::

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = nn.Linear(1, 1)

            def forward(self, x):
                return self.linear(x)
    """

    training: bool
    _version = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes no arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = set()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_backward_hooks"] = OrderedDict()

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # -- calling ---------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        runner = None
        if self._backward_hooks:
            runner = BackwardHookRunner(self, list(self._backward_hooks.values()))
            args = runner.wrap_inputs(args)
        result = self.forward(*args, **kwargs)
        for hid, hook in list(self._forward_hooks.items()):
            if hid in self._forward_hooks_with_kwargs:
                r = hook(self, args, kwargs, result)
            else:
                r = hook(self, args, result)
            if r is not None:
                result = r
        if runner is not None:
            runner.watch_outputs(result)
        return result

    # -- attribute registries --------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for reg in ("_parameters", "_buffers", "_modules"):
            table = d.get(reg)
            if table is not None and name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._discard(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if d.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._discard(name)
            d["_modules"][name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            d["_modules"][name] = value
        elif isinstance(value, Buffer):
            self._discard(name)
            self.register_buffer(name, value, persistent=value.persistent)  # type: ignore[attr-defined]
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' (torch.Tensor or None expected)"
                )
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _discard(self, name: str) -> None:
        d = self.__dict__
        d.pop(name, None)
        for reg in ("_parameters", "_buffers", "_modules"):
            d[reg].pop(name, None)
        d["_non_persistent_buffers_set"].discard(name)

    def __delattr__(self, name: str) -> None:
        for reg in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[reg]:
                del self.__dict__[reg][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = list(super().__dir__())
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(keys))

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add ``param`` (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name, self)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                "explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (saved in ``state_dict`` unless ``persistent=False``, never trained)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name, self)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _check_name("module", name, self)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` ("" is the module itself)."""
        mod: Module = self
        if target == "":
            return mod
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{mod._get_name()} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target: str) -> Tensor:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"{mod._get_name()} has no buffer `{name}`")
        return mod._buffers[name]

    # -- iteration -------------------------------------------------------------------------
    def _named_members(self, get: Callable, prefix: str, recurse: bool, remove_duplicate: bool) -> Iterator:
        seen: set[int] = set()
        mods = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for mod_prefix, mod in mods:
            for k, v in get(mod):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (mod_prefix + ("." if mod_prefix else "") + k, v)

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs, each shared parameter once."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module and (``recurse``) its submodules."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """This module and every submodule, depth first, with dotted names."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    # -- modes, gradients, conversion ------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (affects Dropout, BatchNorm) here and in every submodule."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")  # noqa: TRY004 (PyTorch's type)
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    @functools.partial(eager_only, idempotent=True)  # ember.compile replays it in place, eagerly
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients (to None by default, as PyTorch 2 does)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g = g.detach()
                    p.grad = g
                g._requires_grad = False
                g.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and on this module."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        for m in self.children():
            m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                p.data = fn(p.data)
                if p._grad is not None:
                    p._grad = fn(p._grad)
            for k, b in self._buffers.items():
                if b is not None:
                    self._buffers[k] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move and/or cast parameters and buffers in place: ``m.to("cpu")``, ``m.to(ember.float64)``.

        Parameters stay the same objects (their data is replaced); only floating-point
        tensors are cast to ``dtype``.
        """
        from ..._ops.convert import _parse_to

        device, dtype, _ = _parse_to(args, dict(kwargs))
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
            )

        def convert(t: Tensor) -> Tensor:
            dt = dtype if dtype is not None and (t.dtype.is_floating_point or t.dtype.is_complex) else None
            return t.to(device=device, dtype=dt)

        return self._apply(convert)

    def cpu(self) -> Module:
        return self._apply(lambda t: t.to("cpu"))

    def cuda(self, device: Any = None) -> Module:
        return self._apply(lambda t: t.to("cuda" if device is None else device))

    def _cast_floats(self, dtype: Any) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.dtype.is_floating_point else t)

    def float(self) -> Module:
        from ember.backends import dtypes as D

        return self._cast_floats(D.float32)

    def double(self) -> Module:
        from ember.backends import dtypes as D

        return self._cast_floats(D.float64)

    def half(self) -> Module:
        from ember.backends import dtypes as D

        return self._cast_floats(D.float16)

    def bfloat16(self) -> Module:
        from ember.backends import dtypes as D

        return self._cast_floats(D.bfloat16)

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.to(dst_type))

    def share_memory(self) -> Module:
        return self

    # -- state -----------------------------------------------------------------------------
    def state_dict(
        self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> Any:
        """An ordered dict of parameter and persistent buffer tensors by dotted name."""
        if args:  # the old positional form (destination, prefix, keep_vars)
            destination = args[0]
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
        collect(self, destination, prefix, keep_vars)
        return destination

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> IncompatibleKeys:
        """Copy tensors from ``state_dict``; returns ``(missing_keys, unexpected_keys)``."""
        return load_into(self, state_dict, strict, assign)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors)``
        runs before this module's tensors load and may rename or convert entries of ``state_dict``."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(
        self, hook: Callable, with_module: bool = False
    ) -> RemovableHandle:
        table = self.__dict__.setdefault("_load_state_dict_pre_hooks", OrderedDict())
        fn = hook if with_module else (lambda module, *args: hook(*args))
        return self._add_hook(table, fn, False, None)

    # -- hooks -----------------------------------------------------------------------------
    def _add_hook(
        self, table: OrderedDict, hook: Callable, prepend: bool, kw_set: set | None
    ) -> RemovableHandle:
        handle = RemovableHandle(table)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        if kw_set is not None:
            kw_set.add(handle.id)
        return handle

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args)`` before forward; may return new args."""
        kw = self._forward_pre_hooks_with_kwargs if with_kwargs else None
        return self._add_hook(self._forward_pre_hooks, hook, prepend, kw)

    def register_forward_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        """``hook(module, args, output)`` after forward; may return a new output."""
        kw = self._forward_hooks_with_kwargs if with_kwargs else None
        return self._add_hook(self._forward_hooks, hook, prepend, kw)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` when gradients w.r.t. inputs are computed."""
        return self._add_hook(self._backward_hooks, hook, prepend, None)

    register_backward_hook = register_full_backward_hook

    # -- printing --------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr`` (override in layers)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for key, m in self._modules.items():
            lines.append("(" + key + "): " + _addindent(repr(m), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __getstate__(self) -> dict:
        return self.__dict__.copy()
