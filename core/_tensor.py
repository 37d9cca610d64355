"""The Tensor: a backend-native array, its device, dtype and shape, and autograd state.

Operators and most methods are bound at the bottom of ``ember/__init__.py`` from a visible
table, so each op's code lives once, in its ``_ops`` module, beside its derivative.
"""

from __future__ import annotations

import threading
from operator import attrgetter
from types import FunctionType
from typing import TYPE_CHECKING, Any, SupportsIndex

import numpy as np
from ember.backends import DType, device
from ember.backends.registry import LoadedBackend
from ember.backends.registry import is_contiguous as _is_contiguous

from ._dispatch import to_host
from ._state import state as _mode

if TYPE_CHECKING:
    from ._tensor_api import TensorAPI as _Base
    from .autograd.graph import Node
else:
    _Base = object  # the generated declarations are for type checkers only: no runtime cost

__all__ = ["Size", "Tensor", "wrap"]

# ember._legacy registers the legacy constructor here (it needs creation ops, which need Tensor).
LEGACY_NEW: dict[str, Any] = {}


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``ember.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ember.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i: Any) -> Any:
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r


class Tensor(_Base):
    """An n-dimensional array on a device, with PyTorch's API.

    Example: ``ember.tensor([[1., 2.]]).T.shape == (2, 1)``.
    """

    # The slots' types (annotations only: a value here would clash with ``__slots__``).
    _base: Tensor | None
    _be: LoadedBackend
    _data: Any
    _device: device
    _grad: Tensor | None
    _meta: dict[str, Any] | None
    _shape: tuple[int, ...]
    _vc: list[int]
    dtype: DType
    grad_fn: Node | None
    _requires_grad: bool  # the raw flag: ember's own code writes it, past the setter's checks
    if TYPE_CHECKING:
        requires_grad: bool  # a property checked as PyTorch's, set below the class

    __slots__ = (
        "__weakref__",
        "_base",  # the tensor this one is a view of, or None
        "_be",  # LoadedBackend: the kernel table ``_be.k``
        "_data",  # the backend's native array
        "_device",  # interned device object
        "_grad",
        "_meta",  # rarely used autograd state (hooks, retain_grad, accumulator), or None
        "_requires_grad",  # read by the ``requires_grad`` property; ember's code writes it
        "_shape",  # plain tuple
        "_vc",  # version counter, a one-element list shared by a base and its views
        "dtype",
        "grad_fn",
    )

    def __new__(cls, *args: Any, device: Any = None) -> Any:
        """PyTorch's legacy ``Tensor(data)`` / ``Tensor(2, 3)`` / ``Tensor()``, of the default
        dtype; the constructor is ``ember._legacy``'s, registered in ``LEGACY_NEW``."""
        return LEGACY_NEW["default"](args, device)

    # -- metadata -------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the length of one dimension."""
        if dim is None:
            return Size(self._shape)
        return self._shape[_dim(dim, len(self._shape))]

    @property
    def device(self) -> device:
        return self._device

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_inference(self) -> bool:
        """Made inside ``inference_mode`` (or a view of such a tensor)."""
        m = self._meta
        return m is not None and bool(m.get("inference"))

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def _version(self) -> int:
        return self._vc[0]

    def stride(self, dim: int | None = None) -> Any:
        strides = self._be.backend.layout(self._data)[0]
        return strides if dim is None else strides[_dim(dim, len(self._shape))]

    def storage_offset(self) -> int:
        return self._be.backend.layout(self._data)[1]

    def is_contiguous(self) -> bool:
        return _is_contiguous(self._shape, self._be.backend.layout(self._data)[0])

    def data_ptr(self) -> int:
        return self._be.backend.storage_id(self._data) + self.storage_offset() * self.dtype.itemsize

    # -- host conversion ------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a NumPy array (shares memory on the CPU backend)."""
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if self._device.type != "cpu" and not force:
            raise TypeError(
                f"can't convert {self._device} device type tensor to numpy. "
                "Use Tensor.cpu() to copy the tensor to host memory first."
            )
        return self._be.backend.to_numpy(self._data)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = to_host(self._be, self._data)
        return a.astype(dtype) if dtype is not None else a

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return to_host(self._be, self._data).reshape(()).item()

    def tolist(self) -> Any:
        return to_host(self._be, self._data).tolist()

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self.numel() > 1
                else "Boolean value of Tensor with no values is ambiguous"
            )
        return bool(self.item())

    def _scalar(self) -> Any:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __float__(self) -> float:
        v = self._scalar()
        if isinstance(v, complex):
            if v.imag:
                raise RuntimeError("value cannot be converted to type double without overflow")
            v = v.real
        return float(v)

    def __int__(self) -> int:
        v = self._scalar()
        if isinstance(v, complex):
            if v.imag:
                raise RuntimeError("value cannot be converted to type int64_t without overflow")
            v = v.real
        return int(v)

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __index__(self) -> int:
        if self.dtype.category > 1 or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self) -> Any:
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        from ._printing import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        # PyTorch: a plain 0-d tensor formats as its number (f"{t}" == "2.5"), others as str
        if self.dim() == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string passed to {type(self).__name__}.__format__")
        return repr(self)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._be.backend.to_numpy(self._data).__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._be.backend.to_numpy(self._data).__dlpack_device__()

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        from ._creation import _rebuild

        host = np.array(self._be.backend.to_numpy(self._data))
        return (_rebuild, (host, self.dtype.name, str(self._device), self.requires_grad))


_LEAF_ONLY = "you can only change requires_grad flags of leaf variables."
_USE_DETACH = (
    " If you want to use a computed variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach()."
)


def _set_requires_grad(self: Tensor, value: Any) -> None:
    """``t.requires_grad = v`` as PyTorch checks it (ember's code writes ``_requires_grad``)."""
    if type(value) is not bool:
        raise RuntimeError("requires_grad must be a bool")
    if self.grad_fn is not None:
        raise RuntimeError(_LEAF_ONLY if value else _LEAF_ONLY + _USE_DETACH)
    if value and self.dtype.category < 2:
        raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
    if value and self.is_inference() and not _mode.inference:
        raise RuntimeError(
            "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
        )
    self._requires_grad = value


# Read through attrgetter, the fastest getter measured (a C call: still ~3x a plain slot read,
# ~2.5x faster than the slot descriptor's own __get__; hot internal readers can read
# ``_requires_grad``). Set with setattr so type checkers keep the class's ``requires_grad: bool``.
setattr(Tensor, "requires_grad", property(attrgetter("_requires_grad"), _set_requires_grad))  # noqa: B010


def _dim(d: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d + n if d < 0 else d


_new = object.__new__


def wrap(data: Any, be: LoadedBackend, dev: device, dtype: DType, shape: tuple[int, ...]) -> Tensor:
    """A fresh Tensor around a native array (no copy). The hot path: keep it short."""
    t = _new(Tensor)
    t._data = data
    t._be = be
    t._device = dev
    t.dtype = dtype
    t._shape = shape
    t._requires_grad = False
    t.grad_fn = None
    t._vc = [0]
    t._base = None
    t._grad = None
    t._meta = {"inference": True} if _inference_users and _mode.inference else None
    return t


# Kernel-result checks (``_kernel_check``): while they are on, ``wrap.__code__`` is
# ``_checked_wrap``'s, so every module that imported ``wrap`` gets them and, off, the hot
# path runs the code above unchanged. ``_plain_wrap`` keeps that code for both.
_plain_wrap = FunctionType(wrap.__code__, globals(), "wrap")
_result_check: Any = None


def _checked_wrap(data: Any, be: LoadedBackend, dev: device, dtype: DType, shape: tuple[int, ...]) -> Tensor:
    """``wrap`` with the kernel's result checked against the shape and dtype it claims."""
    _result_check(data, be, dtype, shape)
    return _plain_wrap(data, be, dev, dtype, shape)


# How many ``inference_mode`` blocks are open in any thread: while none is, ``wrap`` skips the
# thread-local lookup (it is on the path of every op).
_inference_users = 0
_users_lock = threading.Lock()


def inference_users(delta: int) -> None:
    global _inference_users
    with _users_lock:
        _inference_users += delta
