"""Reading PyTorch's zip checkpoint: bounded storage reads, tensors rebuilt as views of them.

Every malformed archive or storage (a corrupt or truncated zip, a missing record, a storage
whose declared size does not match its entry, a tensor that does not fit its storage) raises
``RuntimeError`` naming the file, as ``torch.load`` does; a refused or malformed pickle raises
``pickle.UnpicklingError`` (see ``_unpickler``). Storages are read once, with their declared
``numel * itemsize`` checked against the entry's declared size before a byte is inflated, and
tensors are ``as_strided`` views of them: a stride-0 tensor stays a view, and tensors saved
from one storage share it again after loading (writing one changes the other), as in PyTorch.
"""

from __future__ import annotations

import contextlib
import io
import pickle
import struct
import zipfile
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._checkpoint_rebuild import ALLOWED_CALLABLES, ALLOWED_GLOBALS, LoadedStorage, StorageType, np_dtype
from ._creation import from_numpy
from ._device import resolve
from ._safe_globals import brief, unsafe_hint, user_globals
from ._tensor import Tensor
from ._unpickler import WeightsUnpickler
from .backends import dtypes as D

__all__ = ["load_archive"]

_CHUNK = 1 << 24  # storages are inflated into their final buffer this many bytes at a time
_MAX_INFLATE = 1032  # deflate's largest ratio: an entry declaring more is lying about its size


# -- zip access ------------------------------------------------------------------------------
# Everything zipfile, zlib and struct raise for a damaged archive; turned into one RuntimeError.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    NotImplementedError,
    ValueError,
    OSError,
    struct.error,
    zlib.error,
    KeyError,
    IndexError,
    OverflowError,
    UnicodeDecodeError,
    TypeError,
)


def _zip_failure(label: str, what: str) -> RuntimeError:
    return RuntimeError(
        f"ember.load: {label}: failed reading zip archive: {what}. The checkpoint is corrupted or "
        "truncated (it was not saved completely, or was damaged in transfer)."
    )


@contextlib.contextmanager
def _zip_errors(label: str, what: str) -> Iterator[None]:
    try:
        yield
    except _ZIP_ERRORS as e:
        detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        raise _zip_failure(label, f"{what} ({detail})") from None
    except RuntimeError as e:  # zipfile's "File is encrypted" and friends: name the file
        if str(e).startswith("ember.load:"):
            raise
        raise _zip_failure(label, f"{what} ({e})") from None


def _open(fh: Any, label: str) -> zipfile.ZipFile:
    with _zip_errors(label, "not a readable zip"):
        if not zipfile.is_zipfile(fh):
            raise RuntimeError(
                f"ember.load: {label}: the file is not a zip checkpoint (ember only reads PyTorch's zip "
                "format, the default since PyTorch 1.6)"
            )
        fh.seek(0)
        return zipfile.ZipFile(fh)


def _entry(z: zipfile.ZipFile, name: str, label: str, archive: int) -> zipfile.ZipInfo:
    """The record ``name``, its declared sizes checked against the archive before anything is read."""
    try:
        info = z.getinfo(name)
    except KeyError:
        raise RuntimeError(
            f"ember.load: {label}: failed locating record {name}: not found in the archive"
        ) from None
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _zip_failure(label, f"record {name} uses compression method {info.compress_type}")
    if info.compress_size > archive:
        raise _zip_failure(
            label, f"record {name} declares {info.compress_size} bytes in a {archive}-byte file"
        )
    limit = (
        info.compress_size
        if info.compress_type == zipfile.ZIP_STORED
        else _MAX_INFLATE * info.compress_size + 64
    )
    if info.file_size > limit:
        raise _zip_failure(
            label, f"record {name} declares {info.file_size} bytes from {info.compress_size} stored bytes"
        )
    return info


def _read_into(z: zipfile.ZipFile, info: zipfile.ZipInfo, label: str) -> bytearray:
    """The entry's bytes, never inflating more than its declared size (a bomb fails its CRC)."""
    out = bytearray(info.file_size)
    view, got = memoryview(out), 0
    with _zip_errors(label, f"record {info.filename}"), z.open(info) as f:
        while got < info.file_size:
            chunk = f.read(min(info.file_size - got, _CHUNK))
            if not chunk:
                raise _zip_failure(
                    label, f"record {info.filename} ends after {got} of {info.file_size} bytes"
                )
            view[got : got + len(chunk)] = chunk
            got += len(chunk)
        f.read(1)  # reaches the end of the stream, where zipfile checks the CRC
    return out


def _prefix(z: zipfile.ZipFile, label: str) -> str:
    for name in z.namelist():
        if name.endswith("/data.pkl") and name.count("/") == 1:
            return name[: -len("data.pkl")]
    raise RuntimeError(f"ember.load: {label}: not a checkpoint archive (no <archive>/data.pkl record)")


# -- storages --------------------------------------------------------------------------------
def _target(map_location: Any, location: str, label: str) -> Any:
    """Where a storage saved at ``location`` goes: ``map_location`` as PyTorch reads it."""
    if isinstance(map_location, dict):
        location = map_location.get(location, location)
    elif callable(map_location):
        return map_location
    elif map_location is not None:
        return str(map_location)
    return _available(location, label)


def _available(location: str, label: str) -> str:
    """``location`` itself, or PyTorch's kind of error when its device is not here."""
    if location == "cpu":
        return location
    try:
        resolve(location)
    except Exception as e:  # noqa: BLE001 (any reason a device is unusable)
        raise RuntimeError(
            f"ember.load: {label}: Attempting to deserialize object on device '{location}', which is not "
            f"available here ({e}). Use ember.load with map_location='cpu' (or another device) to map the "
            "storages."
        ) from None
    return location


class _Storages:
    """Reads each storage record once, checked against its declared size, and caches it by key."""

    def __init__(
        self, z: zipfile.ZipFile, prefix: str, label: str, size: int, map_location: Any, byteorder: str
    ) -> None:
        self._z, self._prefix, self._label, self._size = z, prefix, label, size
        self._map_location, self._byteorder = map_location, byteorder
        self._cache: dict[str, tuple[D.DType, int, LoadedStorage]] = {}

    def load(self, pid: tuple) -> LoadedStorage:
        if len(pid) != 5 or not isinstance(pid[1], StorageType):
            raise pickle.UnpicklingError(unsafe_hint(self._label) + f"unexpected storage record {brief(pid)}")
        _, stype, key, location, numel = pid
        if type(key) is not str or type(location) is not str or type(numel) is not int or numel < 0:
            raise RuntimeError(f"ember.load: {self._label}: invalid storage record {brief(pid)}")
        cached = self._cache.get(key)
        if cached is None:
            storage = self._read(key, stype.dtype, numel, location)
            self._cache[key] = (stype.dtype, numel, storage)
            return storage
        if cached[:2] != (stype.dtype, numel):
            raise RuntimeError(
                f"ember.load: {self._label}: storage {key} is declared as {cached[1]} {cached[0]} and as "
                f"{numel} {stype.dtype}"
            )
        return cached[2]

    def _read(self, key: str, dtype: D.DType, numel: int, location: str) -> LoadedStorage:
        info = _entry(self._z, f"{self._prefix}data/{key}", self._label, self._size)
        expected = numel * dtype.itemsize
        if info.file_size != expected:
            raise RuntimeError(
                f"ember.load: {self._label}: record size ({info.file_size} bytes) of storage {key} does not "
                f"match expected size ({expected} bytes = {numel} elements * {dtype.itemsize} bytes/element) "
                f"for dtype {dtype}"
            )
        arr = np.frombuffer(_read_into(self._z, info, self._label), dtype=np_dtype(dtype))
        if self._byteorder == "big":
            arr.byteswap(inplace=True)
        return LoadedStorage(self._place(from_numpy(arr), location), self._label, key)

    def _place(self, t: Tensor, location: str) -> Tensor:
        target = _target(self._map_location, location, self._label)
        if not callable(target):
            return t if target == "cpu" else t.to(target)
        moved = target(t, location)
        if not isinstance(moved, Tensor) or moved.shape != t.shape or moved.dtype != t.dtype:
            raise RuntimeError(
                f"ember.load: {self._label}: map_location returned {type(moved).__name__}, not the storage it got"
            )
        return moved if moved.is_contiguous() and moved.storage_offset() == 0 else moved.clone()


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: Python's unpickler, torch names mapped to ember's (trusted files only)."""

    def __init__(self, data: bytes, storages: _Storages) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self._storages = storages

    def find_class(self, module: str, name: str) -> Any:
        found = ALLOWED_GLOBALS.get(f"{module}.{name}", user_globals().get(f"{module}.{name}"))
        return found if found is not None else super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        return self._storages.load(pid)


def _byteorder(z: zipfile.ZipFile, prefix: str, label: str, size: int) -> str:
    """The ``byteorder`` record (PyTorch writes it since 2.0; absent means little-endian)."""
    name = f"{prefix}byteorder"
    if name not in z.namelist():
        return "little"
    info = _entry(z, name, label, size)
    order = bytes(_read_into(z, info, label)).decode("ascii", "replace") if info.file_size <= 8 else "?"
    if order not in ("little", "big"):
        raise RuntimeError(f"ember.load: {label}: unknown byteorder record {order!r:.40}")
    return order


def load_archive(fh: Any, label: str, map_location: Any, weights_only: bool) -> Any:
    """Everything ``ember.load`` does once the file is open."""
    size = fh.seek(0, io.SEEK_END)
    z = _open(fh, label)
    with z:
        with _zip_errors(label, "the central directory"):
            prefix = _prefix(z, label)
        storages = _Storages(z, prefix, label, size, map_location, _byteorder(z, prefix, label, size))
        data = bytes(_read_into(z, _entry(z, f"{prefix}data.pkl", label, size), label))
        if not weights_only:
            return _FullUnpickler(data, storages).load()
        try:
            return WeightsUnpickler(data, label, ALLOWED_GLOBALS, ALLOWED_CALLABLES, storages.load).load()
        except RuntimeError as e:  # an ember op refusing what a record asks (grad on an int tensor)
            if type(e) is RuntimeError and label in str(e):
                raise
            raise RuntimeError(f"ember.load: {label}: {type(e).__name__}: {e}") from None
