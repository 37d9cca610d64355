"""Rebuilding tensors from a checkpoint's records, and what a weights-only load may name.

PyTorch pickles a tensor as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, hooks)``. Here each call becomes an ``as_strided`` view of the loaded storage,
after checking that the record describes memory inside it: the file may lie about its numbers,
never about where they are. ``default_globals`` is the allowlist, PyTorch's (no ``range``,
``frozenset`` or ``slice``), with ``bytearray`` and ``_codecs.encode`` narrowed to what pickles
write so that neither can allocate memory the file does not hold.
"""

from __future__ import annotations

import _codecs
import collections
import math
import pickle
from typing import Any

from ._creation import numpy_dtype as np_dtype
from ._ops.views import as_strided
from ._safe_globals import brief
from ._tensor import Size, Tensor
from .backends import device as Device
from .backends import dtypes as D
from .nn.parameter import Parameter

__all__ = [
    "ALLOWED_CALLABLES",
    "ALLOWED_GLOBALS",
    "STORAGE_NAMES",
    "LoadedStorage",
    "StorageType",
    "default_globals",
    "np_dtype",
    "rebuild_from_type_v2",
    "rebuild_parameter",
    "rebuild_tensor_v2",
]

STORAGE_NAMES = {
    "float32": "FloatStorage",
    "float64": "DoubleStorage",
    "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage",
    "int64": "LongStorage",
    "int32": "IntStorage",
    "int16": "ShortStorage",
    "int8": "CharStorage",
    "uint8": "ByteStorage",
    "bool": "BoolStorage",
    "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}


class StorageType:
    """What ``torch.FloatStorage`` etc. unpickle to: only a dtype for the storage record."""

    def __init__(self, dtype: D.DType) -> None:
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


class LoadedStorage:
    """One storage of the archive, as a 1-D tensor on its target device; views are built on it."""

    def __init__(self, tensor: Tensor, label: str, key: str) -> None:
        self.tensor, self.label, self.key = tensor, label, key


# -- rebuilding tensors ----------------------------------------------------------------------
def _is_ints(values: Any) -> bool:
    return isinstance(values, tuple) and all(type(v) is int for v in values)


def _check_record(storage: Any, offset: Any, size: Any, stride: Any) -> None:
    """A tensor record must describe memory inside its storage: else the file lies about its data."""
    if not isinstance(storage, LoadedStorage):
        raise pickle.UnpicklingError(
            f"ember.load: a tensor record without a storage (got {type(storage).__name__})"
        )
    label, numel = storage.label, storage.tensor.shape[0]
    if type(offset) is not int or not _is_ints(size) or not _is_ints(stride) or len(size) != len(stride):
        raise RuntimeError(
            f"ember.load: {label}: invalid tensor record: offset {brief(offset)}, size {brief(size)}, "
            f"stride {brief(stride)}"
        )
    if offset < 0 or any(v < 0 for v in (*size, *stride)):
        raise RuntimeError(
            f"ember.load: {label}: invalid tensor record: negative offset, size or stride in offset {offset}, "
            f"size {list(size)}, stride {list(stride)}"
        )
    if math.prod(size) >= 2**63 or offset >= 2**63 or any(v >= 2**63 for v in stride):
        raise RuntimeError(
            f"ember.load: {label}: invalid tensor record: size {brief(size)}, stride {brief(stride)} and offset "
            f"{offset} exceed 2**63 elements"
        )
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * st for n, st in zip(size, stride))
    if need > numel:
        item = storage.tensor.dtype.itemsize
        raise RuntimeError(
            f"ember.load: {label}: setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{offset}, and itemsize {item} requiring a storage size of {need * item} are out of bounds for "
            f"storage {storage.key} of size {numel * item}"
        )


def rebuild_tensor_v2(
    storage: LoadedStorage,
    storage_offset: int,
    size: tuple,
    stride: tuple,
    requires_grad: bool = False,
    backward_hooks: Any = None,
    metadata: Any = None,
) -> Tensor:
    """``torch._utils._rebuild_tensor_v2``: a leaf tensor viewing ``storage`` (as ``set_`` makes one)."""
    _check_record(storage, storage_offset, size, stride)
    if type(requires_grad) is not bool:
        raise RuntimeError(
            f"ember.load: {storage.label}: requires_grad is {brief(requires_grad)}, not a bool"
        )
    out = as_strided(storage.tensor, size, stride, storage_offset)
    out._base = None  # a loaded tensor is a leaf over a shared storage, as PyTorch's set_() makes it
    if requires_grad:
        out.requires_grad_(True)
    return out


def rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any = None) -> Parameter:
    """``torch._utils._rebuild_parameter``: a Parameter sharing ``data``'s storage."""
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise pickle.UnpicklingError(
            f"ember.load: a parameter record needs a tensor and a bool, got {type(data).__name__} and "
            f"{type(requires_grad).__name__}"
        )
    return Parameter(data, requires_grad)


def rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    """A tensor saved with Python attributes or as a subclass; ember keeps its data (slots hold no extras)."""
    if func not in (rebuild_tensor_v2, rebuild_parameter) or new_type not in (Tensor, Parameter):
        raise pickle.UnpicklingError(f"ember.load: unexpected rebuild of {brief(new_type)} by {brief(func)}")
    if type(args) is not tuple:
        raise pickle.UnpicklingError(
            f"ember.load: rebuild arguments are a {type(args).__name__}, not a tuple"
        )
    out = func(*args)
    if new_type is Parameter and not isinstance(out, Parameter):
        out = Parameter(out, out.requires_grad)
    return out


# -- the allowlist ---------------------------------------------------------------------------
def _encode(text: Any, encoding: Any = "utf-8") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for ``bytes``: only latin1 text."""
    if type(text) is not str or encoding != "latin1":
        raise pickle.UnpicklingError(
            f"ember.load: _codecs.encode is allowed for latin1 text only, not {brief(encoding)}"
        )
    return _codecs.encode(text, "latin1")


def _bytearray(*args: Any) -> bytearray:
    """``bytearray`` from text or bytes, as pickles write it; never ``bytearray(n)``, which allocates n bytes."""
    if args and type(args[0]) not in (str, bytes):
        raise pickle.UnpicklingError(
            f"ember.load: bytearray is allowed from text or bytes only, not from a {type(args[0]).__name__} "
            "(it would allocate memory the file does not hold)"
        )
    return bytearray(*args)


def _build_globals() -> tuple[dict[str, Any], list[Any]]:
    callables: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "builtins.set": set,
        "builtins.complex": complex,
        "builtins.bytearray": _bytearray,
        "_codecs.encode": _encode,
        "torch.Size": Size,
        "ember._tensor.Size": Size,
        "torch.device": Device,
        "ember.backends.device.device": Device,
        "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
        "torch.nn.parameter.Parameter": Parameter,
        "ember.nn.parameter.Parameter": Parameter,
    }
    table = dict(callables)
    table["torch.Tensor"] = Tensor
    table["torch.storage.UntypedStorage"] = StorageType(D.uint8)
    for name, dt in D.DTYPES_BY_NAME.items():
        table[f"torch.{name}"] = dt
        table[f"ember.backends.dtypes.{name}"] = dt
    for name, storage in STORAGE_NAMES.items():
        table[f"torch.{storage}"] = StorageType(D.DTYPES_BY_NAME[name])
    return table, list(callables.values())


ALLOWED_GLOBALS, ALLOWED_CALLABLES = _build_globals()


def default_globals() -> tuple[dict[str, Any], list[Any]]:
    """What a weights-only load may name (PyTorch's and ember's spellings), and which of it may be called."""
    return dict(ALLOWED_GLOBALS), list(ALLOWED_CALLABLES)
