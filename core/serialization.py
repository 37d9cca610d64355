"""``ember.save`` / ``ember.load``: PyTorch's checkpoint format, loaded safely by default.

The file is PyTorch's zip layout (``<archive>/data.pkl``, ``<archive>/data/<key>`` raw
storages, ``<archive>/version``), and tensors are pickled as PyTorch pickles them
(``torch._utils._rebuild_tensor_v2`` over a ``torch.FloatStorage`` persistent record), so
ember reads checkpoints written by PyTorch and PyTorch reads ember's, neither needing the other.
Tensors that view one tensor are saved as views of one storage and share it again after loading.

``load(f)`` uses ``weights_only=True`` by default, as PyTorch 2.6+ does. Threat model: a
malicious file cannot run code, cannot change any object outside the data it returns, and
cannot make the loader allocate more than its declared tensors need; it can give you wrong
numbers (it is data). See ``ember._unpickler`` for how, and ``ember._checkpoint_zip`` for the
bounded storage reads. A refused or malformed pickle raises ``pickle.UnpicklingError``; a
malformed archive or storage raises ``RuntimeError``; both name the file.

``save(obj, path)`` is atomic and leaves no temporary behind (``ember._atomic_save``).
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import zipfile
from typing import Any

import numpy as np

from ._atomic_save import atomic_write
from ._checkpoint_rebuild import STORAGE_NAMES
from ._checkpoint_zip import load_archive
from ._public import op, public
from ._safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from ._safetensors import load_safetensors, save_safetensors
from ._tensor import Size, Tensor
from .backends import device as Device
from .backends import dtypes as D
from .nn.parameter import Parameter

PUBLIC = public(
    __name__,
    {
        "load": op(),
        "save": op(),
    },
)
__all__ = [
    *PUBLIC,
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load_safetensors",
    "safe_globals",
    "save_safetensors",
]

FORMAT_VERSION = "3"  # the ``version`` record PyTorch writes and reads


# -- writing ---------------------------------------------------------------------------------
class _TorchName:
    """A stand-in written as PyTorch's global ``module.name`` (e.g. ``torch._utils._rebuild_tensor_v2``)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # pickle requires a callable in a reduce tuple
        raise TypeError(f"{self.module}.{self.name} is a name written into checkpoints, not a function")


_REBUILD_TENSOR = _TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchName("torch._utils", "_rebuild_parameter")
_TORCH_DEVICE = _TorchName("torch", "device")
_TORCH_SIZE = _TorchName("torch", "Size")
_STORAGE_TYPES = {k: _TorchName("torch", v) for k, v in STORAGE_NAMES.items()}
_DTYPE_NAMES = {k: _TorchName("torch", k) for k in STORAGE_NAMES}


class _Storage:
    def __init__(self, key: str, dtype: D.DType, data: bytes, numel: int, location: str) -> None:
        self.key, self.dtype, self.data, self.numel = key, dtype, data, numel
        self.location = location  # the device, restored on load as PyTorch does


def _host_bytes(t: Tensor) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), order="C", copy=True)  # keeps 0-d tensors 0-d


def _layout(t: Tensor) -> tuple[tuple[int, ...], int, int]:
    """``(strides, storage offset, end)``: ``end`` is one past the last storage element ``t``
    reaches (its offset when it is empty)."""
    strides, offset = t._be.backend.layout(t._data)
    if 0 in t._shape:
        return strides, offset, offset
    return strides, offset, offset + 1 + sum((n - 1) * s for n, s in zip(t._shape, strides))


def _storage_key(t: Tensor) -> tuple[str, int, str]:
    return (str(t.device), t._be.backend.storage_id(t._data), t.dtype.name)


class _SpanFinder(pickle._Pickler):
    """A first, discarding pass over the object: how far into each storage saved tensors reach."""

    def __init__(self) -> None:
        super().__init__(_Discard(), protocol=2)
        self.spans: dict[tuple[str, int, str], int] = {}

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        super().save(None if isinstance(obj, (D.DType, _TorchName)) else obj, save_persistent_id)  # type: ignore[misc]

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, (Device, Size)):
            return str, ()
        if not isinstance(obj, Tensor):
            return NotImplemented
        key = _storage_key(obj)
        self.spans[key] = max(self.spans.get(key, 0), _layout(obj)[2])
        return str, ()


class _Discard:
    def write(self, data: bytes) -> None:
        pass


class _Pickler(pickle._Pickler):
    """Writes tensors the way PyTorch does; the pure-Python pickler lets us emit torch globals."""

    def __init__(self, file: Any, spans: dict[tuple[str, int, str], int] | None = None) -> None:
        super().__init__(file, protocol=2)
        self.storages: list[_Storage] = []
        self._spans = spans or {}
        self._by_storage: dict[tuple[str, int, str], tuple[Tensor, _Storage]] = {}

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if isinstance(obj, D.DType):  # dtypes go by PyTorch's name, so PyTorch reads them too
            obj = _DTYPE_NAMES[obj.name]
        if not isinstance(obj, _TorchName):
            super().save(obj, save_persistent_id)  # type: ignore[misc]
        elif id(obj) in self.memo:  # type: ignore[attr-defined]
            self.write(self.get(self.memo[id(obj)][0]))  # type: ignore[attr-defined]
        else:
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())  # type: ignore[attr-defined]
            self.memoize(obj)  # type: ignore[attr-defined]

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Device):
            return _TORCH_DEVICE, (str(obj),)
        if isinstance(obj, Size):
            return _TORCH_SIZE, (tuple(obj),)
        if not isinstance(obj, Tensor):
            return NotImplemented
        if isinstance(obj, Parameter):
            return _REBUILD_PARAMETER, (obj.detach(), obj.requires_grad, collections.OrderedDict())
        shared = self._shared_storage(obj)
        if shared is not None:
            storage, offset, stride = shared
        else:
            host = _host_bytes(obj)
            storage = self._new_storage(obj.dtype, host, str(obj.device))
            offset, stride = 0, tuple(int(np.prod(host.shape[i + 1 :])) for i in range(host.ndim))
        args: tuple[Any, ...] = (
            storage,
            offset,
            tuple(obj.shape),
            stride,
            obj.requires_grad,
            collections.OrderedDict(),
        )
        return _REBUILD_TENSOR, args

    def _new_storage(self, dtype: D.DType, host: np.ndarray, location: str) -> _Storage:
        storage = _Storage(str(len(self.storages)), dtype, host.tobytes(), host.size, location)
        self.storages.append(storage)
        return storage

    def _shared_storage(self, t: Tensor) -> tuple[_Storage, int, tuple[int, ...]] | None:
        """One storage record per backend storage and dtype, as PyTorch writes one per storage:
        every tensor in it (views, ``nn.Parameter`` wrappers, tensors ``ember.load`` rebuilt as
        views) is saved as a view of it, so loading shares again.

        The record spans the storage from its start to the furthest element any saved tensor
        reaches (``_spans``, found by a first pass); offsets are the backend's.
        """
        key = _storage_key(t)
        strides, offset, end = _layout(t)
        known = self._by_storage.get(key)
        if known is None:
            from ._ops.views import as_strided

            span = max(self._spans.get(key, 0), end)
            plain = offset == 0 and span == end and t.is_contiguous()
            whole = t if plain else as_strided(t.detach(), (span,), (1,), 0)
            storage = self._new_storage(t.dtype, _host_bytes(whole).reshape(-1), str(t.device))
            known = self._by_storage[key] = (t, storage)  # keeps t alive, so the storage id stays its own
        if end > known[1].numel:
            return None  # a tensor the first pass did not see reaches further: copied alone
        return known[1], offset, tuple(strides)

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _Storage):
            return ("storage", _STORAGE_TYPES[obj.dtype.name], obj.key, obj.location, obj.numel)
        return None


def _write_zip(obj: Any, f: Any, archive: str) -> None:
    finder = _SpanFinder()
    finder.dump(obj)
    buf = io.BytesIO()
    pickler = _Pickler(buf, finder.spans)
    pickler.dump(obj)
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(f"{archive}/data.pkl", buf.getvalue())
        z.writestr(f"{archive}/byteorder", "little")
        for s in pickler.storages:
            z.writestr(f"{archive}/data/{s.key}", s.data)
        z.writestr(f"{archive}/version", FORMAT_VERSION + "\n")
        z.writestr(f"{archive}/.data/version", FORMAT_VERSION + "\n")


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: int = 2, **kwargs: Any) -> None:
    """Save ``obj`` (a state_dict, a tensor, a model, ...) to a path or a binary file object.

    Writing to a path is atomic: a crash mid-save leaves any previous file intact and no temporary.
    Example: ``ember.save(model.state_dict(), "model.pt")``.
    """
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        archive = os.path.splitext(os.path.basename(path))[0] or "archive"
        atomic_write(path, lambda fh: _write_zip(obj, fh, archive))
    else:
        _write_zip(obj, f, "archive")


# -- reading ---------------------------------------------------------------------------------
def _label(f: Any) -> str:
    """How error messages name the checkpoint."""
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else "<file object>"


def load(
    f: Any,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Load what ``ember.save`` (or ``torch.save``) wrote. ``weights_only=True`` by default.

    ``map_location``: a device string, ``{"cuda:0": "cpu"}`` or a function of (storage, location).
    Example: ``model.load_state_dict(ember.load("model.pt", map_location="cpu"))``.
    """
    weights_only = True if weights_only is None else weights_only
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return load_archive(fh, _label(f), map_location, weights_only)
    label = _label(f)
    if not f.seekable():  # a pipe or socket: zip needs to seek, so read it all first
        f = io.BytesIO(f.read())
    return load_archive(f, label, map_location, weights_only)
