"""Tensor methods that are not ops (casts, `new_*`, autograd, operators, properties), and
`bind`, which attaches them and the methods the ops declare in their PUBLIC tables."""

from __future__ import annotations

import importlib
import sys
import weakref
from typing import Any

from ember.backends import dtypes as D

from . import _public
from ._creation import _size, full, tensor
from ._dtype import c_name, pt_name
from ._ops import convert as C
from ._ops import indexing as I
from ._ops import matmul as M
from ._ops import pointwise_binary as B
from ._ops import pointwise_unary as U
from ._ops import select as S
from ._ops import tensor_methods as X
from ._ops import views as V
from ._ops.inplace import record_fill
from ._ops.pointwise_binary import _scalar_for
from ._tensor import Tensor
from .autograd import graph as G

__all__ = ["bind"]


def _operator(fn: Any) -> Any:
    """A binary dunder: an operand of an unsupported type gives ``NotImplemented``."""

    def method(self: Tensor, other: Any) -> Any:
        try:
            return fn(self, other)
        except B.UnsupportedOperand:
            return NotImplemented

    method.__name__ = getattr(fn, "__name__", "op")
    return method


def _matmul_operator(fn: Any) -> Any:
    def method(self: Tensor, other: Any) -> Any:
        return fn(self, other) if isinstance(other, Tensor) else NotImplemented

    return method


def _swap(fn: Any) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        return fn(other, self)

    return method


def _rsub(self: Tensor, other: Any) -> Tensor:
    return G.relabel(B.sub(other, self), "RsubBackward1")


def _rtruediv(self: Tensor, other: Any) -> Tensor:
    # the same last bits.
    return B.mul(B.div(1, self), other)


def _cast(dtype: Any) -> Any:
    def method(self: Tensor, memory_format: Any = None) -> Tensor:
        return C.to(self, dtype)

    return method


def _grad_get(self: Tensor) -> Any:
    return self._grad


def _grad_set(self: Tensor, value: Any) -> None:
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}"
            )
        if value._shape != self._shape:
            raise RuntimeError(
                f"attempting to assign a gradient of size '{list(value._shape)}' to a tensor of size "
                f"'{list(self._shape)}'. Please ensure that the gradient and the tensor are the same size"
            )
        if value.dtype != self.dtype:
            raise RuntimeError(
                f"attempting to assign a gradient with dtype '{c_name(value.dtype)}' to a tensor with "
                f"grad_dtype '{pt_name(self.dtype)}'. The gradient must match the tensor's grad_dtype "
                "(defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a "
                "specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the "
                "dtypes of a tensor and its gradient may break downstream systems that assume they match."
            )
    self._grad = value


def _data_get(self: Tensor) -> Tensor:
    return V.data_alias(self)


def _data_set(self: Tensor, value: Tensor) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
    if self.requires_grad and value.dtype.category < 2:
        raise RuntimeError(
            "data set to a tensor that requires gradients must be floating point or complex dtype"
        )
    self._data, self._be, self._device = value._data, value._be, value._device
    self.dtype, self._shape = value.dtype, value._shape


def backward(
    self: Tensor,
    gradient: Any = None,
    retain_graph: Any = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate this tensor's gradient into the leaves' ``.grad``."""
    from .autograd import backward as _backward  # cycle: ember.autograd

    _backward(self, gradient, retain_graph, create_graph, inputs)


def retain_grad(self: Tensor) -> None:
    """Keep ``.grad`` for this non-leaf tensor after backward."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None or G.meta(self).get("retains"):
        return
    ref = weakref.ref(self)

    def keep(g: Tensor) -> None:
        t = ref()
        if t is not None:
            t._grad = g.detach() if t._grad is None else t._grad + g.detach()

    G.meta(self)["retains"] = True
    self.grad_fn.register_prehook(keep)


def retains_grad(self: Tensor) -> bool:
    return bool((self._meta or {}).get("retains"))


def register_hook(self: Tensor, hook: Any) -> Any:
    """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        return self.grad_fn.register_prehook(hook)
    hooks = G.meta(self).setdefault("hooks", [])
    hooks.append(hook)
    return G._Handle(hooks, hook)


def register_post_accumulate_grad_hook(self: Tensor, hook: Any) -> Any:
    """Call ``hook(tensor)`` after the gradient was accumulated into this leaf's ``.grad``."""
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = G.meta(self).setdefault("post_acc_hooks", [])
    hooks.append(hook)
    return G._Handle(hooks, hook)


def fill_(self: Tensor, value: Any) -> Tensor:
    C.check_inplace(self)

    v = value.item() if isinstance(value, Tensor) else value
    C.assign(self, _scalar_for(v, self.dtype))
    self._vc[0] += 1
    if self.grad_fn is not None:
        record_fill(self)
    return self


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0)


def _where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    return S.where(condition, self, other)


def _size_like(fn: Any) -> Any:
    def method(self: Tensor, *shape: Any) -> Tensor:
        return fn(self, *shape)

    return method


def _new_kwargs(self: Tensor, dtype: Any, device: Any) -> dict[str, Any]:
    return {"dtype": dtype or self.dtype, "device": device if device is not None else self._device}


def new_tensor(
    self: Tensor, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A new tensor from ``data`` with this tensor's dtype and device by default."""

    return tensor(data, **_new_kwargs(self, dtype, device), requires_grad=requires_grad)


def _new_filled(fill: Any) -> Any:
    def method(
        self: Tensor, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:

        return full(_size(size), fill, **_new_kwargs(self, dtype, device), requires_grad=requires_grad)

    return method


def new_full(
    self: Tensor,
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype and device."""

    return full(size, fill_value, **_new_kwargs(self, dtype, device), requires_grad=requires_grad)


def _identity_hash(self: Tensor) -> int:
    return id(self)


def _view_as(self: Tensor, other: Tensor) -> Tensor:
    return V.view(self, other._shape)


def _reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return V.reshape(self, other._shape)


def _T(self: Tensor) -> Tensor:
    return V.permute(self, tuple(reversed(range(self.ndim))))


def _mT(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor."
        )
    return V.transpose(self, -2, -1)


def _nn(name: str) -> Any:
    """A method calling ``ember.nn.functional.<name>`` (imported late: nn needs bound methods)."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        from .nn import functional  # cycle: ember.nn.functional

        return getattr(functional, name)(self, *args, **kwargs)

    method.__name__ = name
    return method


_OPERATORS = {
    "__add__": B.add,
    "__radd__": _swap(B.add),
    "__sub__": B.sub,
    "__rsub__": _rsub,
    "__mul__": B.mul,
    "__rmul__": _swap(B.mul),
    "__truediv__": B.div,
    "__rtruediv__": _rtruediv,
    "__floordiv__": B.floor_divide,
    "__rfloordiv__": _swap(B.floor_divide),
    "__mod__": B.remainder,
    "__rmod__": _swap(B.remainder),
    "__pow__": B.pow,
    "__rpow__": _swap(B.pow),
    "__matmul__": M.matmul,
    "__rmatmul__": _swap(M.matmul),
    "__and__": B.bitwise_and,
    "__rand__": _swap(B.bitwise_and),
    "__or__": B.bitwise_or,
    "__ror__": _swap(B.bitwise_or),
    "__xor__": B.bitwise_xor,
    "__rxor__": _swap(B.bitwise_xor),
    "__eq__": B.eq,
    "__ne__": B.ne,
    "__lt__": B.lt,
    "__le__": B.le,
    "__gt__": B.gt,
    "__ge__": B.ge,
    "__neg__": U.neg,
    "__pos__": U.positive,
    "__abs__": U.abs,
    "__invert__": U.bitwise_not,
    "__getitem__": I.getitem,
    "__setitem__": I.setitem,
}

_INPLACE_OPERATORS = {
    "__iadd__": "add",
    "__isub__": "sub",
    "__imul__": "mul",
    "__itruediv__": "div",
    "__ifloordiv__": "floor_divide",
    "__imod__": "remainder",
    "__ipow__": "pow",
    "__iand__": "bitwise_and",
    "__ior__": "bitwise_or",
    "__ixor__": "bitwise_xor",
    "__ilshift__": "bitwise_left_shift",
    "__irshift__": "bitwise_right_shift",
}

_METHODS = {
    # math
    "softmax": _nn("softmax"),
    "log_softmax": _nn("log_softmax"),
    "where": _where_method,
    # shape and views
    "view_as": _view_as,
    "reshape_as": _reshape_as,
    # copies, casts, devices
    "new_tensor": new_tensor,
    "new_zeros": _new_filled(0),
    "new_ones": _new_filled(1),
    "new_empty": _new_filled(0),
    "new_full": new_full,
    "float": _cast(D.float32),
    "double": _cast(D.float64),
    "half": _cast(D.float16),
    "bfloat16": _cast(D.bfloat16),
    "long": _cast(D.int64),
    "int": _cast(D.int32),
    "short": _cast(D.int16),
    "char": _cast(D.int8),
    "byte": _cast(D.uint8),
    "bool": _cast(D.bool_),
    "cfloat": _cast(D.complex64),
    "cdouble": _cast(D.complex128),
    # autograd and in-place fills
    "backward": backward,
    "retain_grad": retain_grad,
    "register_hook": register_hook,
    "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
    "fill_": fill_,
    "zero_": zero_,
}

_INPLACE_METHODS = []

_PROPERTIES = {
    "grad": property(_grad_get, _grad_set),
    "data": property(_data_get, _data_set),
    "T": property(_T),
    "mT": property(_mT),
    "real": property(C.real),
    "imag": property(C.imag),
    "retains_grad": property(retains_grad),
}

# The methods of the ops beyond this core table (flip, special math, scans, ...) live in
# _ops/tensor_methods.py.
_METHODS.update(X.METHODS)
_INPLACE_METHODS += X.INPLACE_METHODS
_OPERATORS.update(X.OPERATORS)
_PROPERTIES.update(X.PROPERTIES)


_BINARY_DUNDERS = frozenset(
    n
    for n in _OPERATORS
    if n not in ("__neg__", "__pos__", "__abs__", "__invert__", "__getitem__", "__setitem__")
)


# In-place forms whose kernel may write straight into ``self`` (convert.inplace_binary).
_DIRECT_INPLACE = {"add": "add", "sub": "sub", "mul": "mul", "div": "div"}


def _inplace(name: str) -> Any:
    if name in _DIRECT_INPLACE:
        return C.inplace_binary(_DIRECT_INPLACE[name], _METHODS[name])
    return C.inplace(_METHODS[name])


# The op modules whose PUBLIC tables declare Tensor methods (imported before binding).
_METHOD_MODULES = (
    "_legacy",
    "_ops.complex",
    "_ops.convert",
    "_ops.diagonal",
    "_ops.distances",
    "_ops.gather_scatter",
    "_ops.indexing",
    "_ops.indexing_scatter",
    "_ops.matmul",
    "_ops.pointwise_binary",
    "_ops.pointwise_numeric",
    "_ops.pointwise_special",
    "_ops.pointwise_unary",
    "_ops.products",
    "_ops.reduction",
    "_ops.reduction_scan",
    "_ops.search",
    "_ops.select",
    "_ops.shape",
    "_ops.sort",
    "_ops.statistics",
    "_ops.views",
)


def _add_declared() -> None:
    """Merge the ops' own methods, declared in the PUBLIC tables of the modules that define
    them (``_public.py``), into the tables above."""
    for name in _METHOD_MODULES:
        importlib.import_module(f"ember.{name}")
    for module, table in _public.REGISTRY.items():
        for key, names in table.items():
            fn = getattr(sys.modules[module], key)
            for method in names.methods:
                if method in _METHODS:
                    raise RuntimeError(f"Tensor.{method} is declared twice ({module}.{key})")
                _METHODS[method] = fn
            _INPLACE_METHODS.extend(names.inplace)


def bind() -> None:
    """Attach the tables above and the declared op methods to Tensor (called once, by
    ``ember/__init__.py``)."""
    _add_declared()
    for name, fn in {**_OPERATORS, **_METHODS, **_PROPERTIES}.items():
        if name in _BINARY_DUNDERS:
            fn = _matmul_operator(fn) if "matmul" in name else _operator(fn)
        setattr(Tensor, name, fn)
    for name in _INPLACE_METHODS:
        setattr(Tensor, name + "_", _inplace(name))
    for dunder, name in _INPLACE_OPERATORS.items():
        setattr(Tensor, dunder, _inplace(name))
    Tensor.__hash__ = _identity_hash  # type: ignore[method-assign]
