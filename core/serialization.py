"""``ember.save`` / ``ember.load``: PyTorch's checkpoint format, loaded safely by default.

The file is PyTorch's zip layout (``<archive>/data.pkl``, ``<archive>/data/<key>`` raw
storages, ``<archive>/version``), and tensors are pickled as PyTorch pickles them
(``torch._utils._rebuild_tensor_v2`` over a ``torch.FloatStorage`` persistent record), so
ember reads checkpoints written by PyTorch and PyTorch reads ember's, neither needing the other.

``load(f)`` uses ``weights_only=True`` by default, as PyTorch 2.6+ does: a restricted
unpickler that builds only tensors, dtypes, devices, numbers, strings, plain containers,
``OrderedDict`` and classes the user allowlisted (``add_safe_globals``/``safe_globals``).
Anything else raises ``pickle.UnpicklingError`` before any of its code can run.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import zipfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._safetensors import load_safetensors, save_safetensors
from ._tensor import Size, Tensor
from .backends import dtypes as D

__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "load_safetensors",
    "safe_globals",
    "save",
    "save_safetensors",
]

FORMAT_VERSION = "3"  # the ``version`` record PyTorch writes and reads

_STORAGE_NAMES = {
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
_DTYPE_BY_STORAGE = {v: D.DTYPES_BY_NAME[k] for k, v in _STORAGE_NAMES.items()}


def _np_dtype(dt: D.DType) -> np.dtype:
    if dt.name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dt.name)


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
_STORAGE_TYPES = {k: _TorchName("torch", v) for k, v in _STORAGE_NAMES.items()}
_DTYPE_NAMES = {k: _TorchName("torch", k) for k in _STORAGE_NAMES}


def _device_type() -> type:
    from .backends import device

    return device


class _Storage:
    def __init__(self, key: str, dtype: D.DType, data: bytes, numel: int, location: str) -> None:
        self.key, self.dtype, self.data, self.numel = key, dtype, data, numel
        self.location = location  # the device, restored on load as PyTorch does


class _Pickler(pickle._Pickler):  # type: ignore[name-defined]
    """Writes tensors the way PyTorch does; the pure-Python pickler lets us emit torch globals."""

    def __init__(self, file: Any) -> None:
        super().__init__(file, protocol=2)
        self.storages: list[_Storage] = []

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if isinstance(obj, D.DType):  # dtypes go by PyTorch's name, so PyTorch reads them too
            obj = _DTYPE_NAMES[obj.name]
        if not isinstance(obj, _TorchName):
            super().save(obj, save_persistent_id)
        elif id(obj) in self.memo:
            self.write(self.get(self.memo[id(obj)][0]))
        else:
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
            self.memoize(obj)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, _device_type()):
            return _TORCH_DEVICE, (str(obj),)
        if isinstance(obj, Size):
            return _TORCH_SIZE, (tuple(obj),)
        if not isinstance(obj, Tensor):
            return NotImplemented
        from .nn.parameter import Parameter

        if isinstance(obj, Parameter):
            return _REBUILD_PARAMETER, (obj.detach(), obj.requires_grad, collections.OrderedDict())
        host = np.array(obj.detach().cpu().numpy(), order="C", copy=True)  # keeps 0-d tensors 0-d
        storage = _Storage(str(len(self.storages)), obj.dtype, host.tobytes(), host.size, str(obj.device))
        self.storages.append(storage)
        stride = tuple(int(np.prod(host.shape[i + 1 :])) for i in range(host.ndim))
        args = (storage, 0, tuple(obj.shape), stride, obj.requires_grad, collections.OrderedDict())
        return _REBUILD_TENSOR, args

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _Storage):
            return ("storage", _STORAGE_TYPES[obj.dtype.name], obj.key, obj.location, obj.numel)
        return None


def _write_zip(obj: Any, f: Any, archive: str) -> None:
    buf = io.BytesIO()
    pickler = _Pickler(buf)
    pickler.dump(obj)
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(f"{archive}/data.pkl", buf.getvalue())
        z.writestr(f"{archive}/byteorder", "little")
        for s in pickler.storages:
            z.writestr(f"{archive}/data/{s.key}", s.data)
        z.writestr(f"{archive}/version", FORMAT_VERSION + "\n")
        z.writestr(f"{archive}/.data/version", FORMAT_VERSION + "\n")


def _atomic_write(path: str, write: Any) -> None:
    """Write to a temp file in the same folder, fsync, then ``os.replace``: all or nothing."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: int = 2, **kwargs: Any) -> None:
    """Save ``obj`` (a state_dict, a tensor, a model, ...) to a path or a binary file object.

    Writing to a path is atomic: a crash mid-save leaves any previous file intact.
    Example: ``ember.save(model.state_dict(), "model.pt")``.
    """
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        archive = os.path.splitext(os.path.basename(path))[0] or "archive"
        _atomic_write(path, lambda fh: _write_zip(obj, fh, archive))
    else:
        _write_zip(obj, f, "archive")


# -- the allowlist ---------------------------------------------------------------------------
_user_globals: dict[str, Any] = {}


def _qualname(obj: Any) -> str:
    if isinstance(obj, tuple):
        return obj[1]
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow ``load(weights_only=True)`` to build these classes or call these functions.

    Items are objects or ``(object, "module.name")`` pairs.
    Example: ``ember.serialization.add_safe_globals([MyNet])``.
    """
    for g in safe_globals:
        _user_globals[_qualname(g)] = g[0] if isinstance(g, tuple) else g


def get_safe_globals() -> list[Any]:
    return list(_user_globals.values())


def clear_safe_globals() -> None:
    _user_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list[Any]) -> Iterator[None]:
    """``with ember.serialization.safe_globals([MyNet]): ember.load(f)`` allowlists only inside."""
    saved = dict(_user_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_globals.clear()
        _user_globals.update(saved)


# -- reading ---------------------------------------------------------------------------------
class _StorageType:
    def __init__(self, dtype: D.DType) -> None:
        self.dtype = dtype


def _builtin_globals() -> dict[tuple[str, str], Any]:
    """What a weights-only load may build, under both PyTorch's and ember's names."""
    import ember

    from ._tensor import Size
    from .nn.parameter import Parameter

    table: dict[tuple[str, str], Any] = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("collections", "Counter"): collections.Counter,
        ("torch", "Size"): Size,
        ("ember._tensor", "Size"): Size,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
        ("torch", "Tensor"): Tensor,
        ("torch.storage", "UntypedStorage"): _StorageType(D.uint8),
        ("torch", "device"): ember.device,
        ("ember.backends.device", "device"): ember.device,
        ("builtins", "set"): set,
        ("builtins", "frozenset"): frozenset,
        ("builtins", "complex"): complex,
        ("builtins", "slice"): slice,
        ("builtins", "range"): range,
        ("builtins", "bytearray"): bytearray,
        ("_codecs", "encode"): _encode,
        ("torch.nn.parameter", "Parameter"): Parameter,
        ("ember.nn.parameter", "Parameter"): Parameter,
    }
    for name, dt in D.DTYPES_BY_NAME.items():
        table[("torch", name)] = dt
        table[("ember.backends.dtypes", name)] = dt
    for storage, dt in _DTYPE_BY_STORAGE.items():
        table[("torch", storage)] = _StorageType(dt)
    return table


def _encode(text: str, encoding: str = "utf-8") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for ``bytes``: only latin1 text."""
    if encoding != "latin1":
        raise pickle.UnpicklingError(f"Weights only load failed: unsupported encoding {encoding!r}")
    return text.encode("latin1")


_UNSAFE_HINT = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, do those "
    "steps only if you trust the source of the checkpoint.\n\t(1) In ember, `weights_only=True` is the "
    "default (as in PyTorch 2.6+). Re-running `ember.load` with `weights_only` set to `False` will likely "
    "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a trusted "
    "source.\n\t(2) Alternatively, to load with `weights_only=True` please check the recommended steps in "
    "the following error message.\n\tWeightsUnpickler error: "
)


def _py3_name(module: str, name: str) -> tuple[str, str]:
    """Protocol-2 pickles spell some Python 3 names the Python 2 way (``__builtin__.set``)."""
    import _compat_pickle

    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


class _WeightsUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, storages: Any, map_location: Any, weights_only: bool) -> None:
        super().__init__(file, encoding="utf-8")
        self._storages, self._map_location = storages, map_location
        self._weights_only = weights_only
        self._table = _builtin_globals()

    def find_class(self, module: str, name: str) -> Any:
        module, name = _py3_name(module, name)
        found = self._table.get((module, name))
        if found is not None:
            return found
        user = _user_globals.get(f"{module}.{name}")
        if user is not None:
            return user
        if not self._weights_only:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            _UNSAFE_HINT
            + f"Unsupported global: GLOBAL {module}.{name} was not an allowed global by default. "
            f"Please use `ember.serialization.add_safe_globals([{name}])` or the "
            f"`ember.serialization.safe_globals([{name}])` context manager to allowlist this global if you "
            "trust this class/function."
        )

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(_UNSAFE_HINT + f"unexpected persistent id {pid!r}")
        _, stype, key, location, numel = pid
        if not isinstance(stype, _StorageType):
            raise pickle.UnpicklingError(_UNSAFE_HINT + f"unexpected storage type {stype!r}")
        return self._storages(str(key), stype.dtype, int(numel), _target(self._map_location, location))


def _target(map_location: Any, location: str) -> Any:
    """Where a storage saved at ``location`` goes: ``map_location`` as PyTorch reads it."""
    if isinstance(map_location, dict):
        location = map_location.get(location, location)
    elif callable(map_location):
        return map_location
    elif map_location is not None:
        return str(map_location)
    return _available(location)


def _available(location: str) -> str:
    """``location`` itself, or PyTorch's kind of error when its device is not here."""
    if location == "cpu":
        return location
    from ._device import resolve

    try:
        resolve(location)
    except Exception as e:  # noqa: BLE001 (any reason a device is unusable)
        raise RuntimeError(
            f"Attempting to deserialize object on device '{location}', which is not available here "
            f"({e}). Use ember.load with map_location='cpu' (or another device) to map the storages."
        ) from None
    return location


class _LoadedStorage:
    def __init__(self, array: np.ndarray, dtype: D.DType, device: Any) -> None:
        self.array, self.dtype, self.device = array, dtype, device


def _rebuild_tensor_v2(
    storage: _LoadedStorage,
    offset: int,
    size: tuple,
    stride: tuple,
    requires_grad: bool = False,
    backward_hooks: Any = None,
    metadata: Any = None,
) -> Tensor:
    from ._creation import tensor

    if not isinstance(storage, _LoadedStorage):
        raise pickle.UnpicklingError(_UNSAFE_HINT + "a tensor without a storage")
    arr = storage.array
    item = arr.itemsize
    _check_fits(size, stride, offset, arr.size)
    view = np.lib.stride_tricks.as_strided(arr[offset:], shape=size, strides=[s * item for s in stride])
    host = np.array(view, copy=True)
    device = storage.device
    out = tensor(host, dtype=storage.dtype, device="cpu")
    out = device(out, "cpu") if callable(device) else out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _rebuild_from_type_v2(func: Any, new_type: Any, args: tuple, state: Any) -> Any:
    """A tensor saved with Python attributes or as a subclass; ember keeps its data (slots hold no extras)."""
    if func not in (_rebuild_tensor_v2, _rebuild_parameter):
        raise pickle.UnpicklingError(_UNSAFE_HINT + f"unexpected rebuild function {func!r}")
    out = func(*args)
    from .nn.parameter import Parameter

    if new_type is Parameter and not isinstance(out, Parameter):
        out = Parameter(out, out.requires_grad)
    return out


def _check_fits(size: tuple, stride: tuple, offset: int, numel: int) -> None:
    """A crafted record must not read outside its storage."""
    if len(size) != len(stride) or offset < 0 or any(x < 0 for x in (*size, *stride)):
        raise pickle.UnpicklingError(f"invalid tensor record: size {list(size)}, stride {list(stride)}")
    if 0 in size:
        return
    last = offset + sum((n - 1) * st for n, st in zip(size, stride))
    if last >= numel:
        raise pickle.UnpicklingError(
            f"tensor of size {list(size)} and stride {list(stride)} at offset {offset} does not fit its "
            f"storage of {numel} elements"
        )


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any = None) -> Any:
    from .nn.parameter import Parameter

    return Parameter(data, requires_grad)


def _archive_prefix(z: zipfile.ZipFile) -> str:
    for name in z.namelist():
        if name.endswith("/data.pkl") and name.count("/") == 1:
            return name[: -len("data.pkl")]
    raise RuntimeError("ember.load: not a checkpoint archive (no <archive>/data.pkl record)")


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

    ``map_location``: a device string, ``{"cuda:0": "cpu"}`` or a function of (tensor, location).
    Example: ``model.load_state_dict(ember.load("model.pt", map_location="cpu"))``.
    """
    weights_only = True if weights_only is None else weights_only
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_zip(fh, map_location, weights_only)
    return _load_zip(f, map_location, weights_only)


def _load_zip(fh: Any, map_location: Any, weights_only: bool) -> Any:
    if not zipfile.is_zipfile(fh):
        raise RuntimeError(
            "ember.load: the file is not a zip checkpoint (ember only reads PyTorch's zip format, "
            "the default since PyTorch 1.6)"
        )
    fh.seek(0)
    with zipfile.ZipFile(fh) as z:
        prefix = _archive_prefix(z)
        cache: dict[str, _LoadedStorage] = {}

        def storage(key: str, dtype: D.DType, numel: int, device: Any) -> _LoadedStorage:
            if key not in cache:
                raw = z.read(f"{prefix}data/{key}")
                arr = np.frombuffer(raw, dtype=_np_dtype(dtype))
                if arr.size != numel:
                    raise pickle.UnpicklingError(f"storage {key} holds {arr.size} elements, expected {numel}")
                cache[key] = _LoadedStorage(arr, dtype, device)
            return cache[key]

        data = io.BytesIO(z.read(f"{prefix}data.pkl"))
        return _WeightsUnpickler(data, storage, map_location, weights_only).load()
