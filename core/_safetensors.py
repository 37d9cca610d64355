"""The safetensors format, implemented directly (no dependency): ``ember.serialization.save_safetensors``.

A file is an 8-byte little-endian header length, a JSON header
``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}`` and the
raw little-endian bytes. Loading never runs code: it parses JSON and reads bytes. It is as strict
as the ``safetensors`` library (header length within 100 MB and the file, a JSON object of
records, known dtypes, ``shape`` times itemsize equal to the span, spans contiguous from 0 with
no overlap, gap or trailing byte) and stricter where the library lets ambiguity through: a
duplicate key at any level and a record with fields other than ``dtype``/``shape``/
``data_offsets`` are refused. Every malformed file raises ``ValueError`` naming the file; each
tensor is read into its own buffer, so loading allocates what the tensors need and no more.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np

from ._atomic_save import atomic_write
from ._creation import from_numpy, numpy_dtype
from ._tensor import Tensor
from .backends import dtypes as D

__all__ = ["load_safetensors", "save_safetensors"]

_ST_DTYPES = {
    "float64": "F64",
    "float32": "F32",
    "float16": "F16",
    "bfloat16": "BF16",
    "int64": "I64",
    "int32": "I32",
    "int16": "I16",
    "int8": "I8",
    "uint8": "U8",
    "bool": "BOOL",
    "complex64": "C64",
}
_ST_BY_CODE = {v: D.DTYPES_BY_NAME[k] for k, v in _ST_DTYPES.items()}
_ST_MAX_HEADER = 100_000_000  # the safetensors library's bound
_RECORD_FIELDS = {"dtype", "shape", "data_offsets"}


def _safetensors_bytes(tensors: dict[str, Tensor], metadata: dict[str, str] | None) -> list[bytes]:
    header: dict[str, Any] = {"__metadata__": dict(metadata)} if metadata else {}
    chunks, offset = [], 0
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"save_safetensors: {name!r} is a {type(t).__name__}, not a tensor")
        if t.dtype.name not in _ST_DTYPES:
            raise TypeError(f"save_safetensors: dtype {t.dtype} of {name!r} has no safetensors code")
        raw = np.array(t.detach().cpu().numpy(), order="C", copy=True).tobytes()
        header[name] = {
            "dtype": _ST_DTYPES[t.dtype.name],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        chunks.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    return [len(head).to_bytes(8, "little"), head, *chunks]


def save_safetensors(
    tensors: dict[str, Tensor], filename: Any, metadata: dict[str, str] | None = None
) -> None:
    """Write a flat ``{name: tensor}`` dict in the safetensors format (atomically, to a path).

    Example: ``ember.serialization.save_safetensors(model.state_dict(), "model.safetensors")``.
    """
    parts = _safetensors_bytes(tensors, metadata)
    atomic_write(os.fspath(filename), lambda fh: [fh.write(p) for p in parts])


class _Bad(ValueError):
    """Internal: what is wrong with the file; ``load_safetensors`` adds the file's name."""


def load_safetensors(filename: Any, device: Any = "cpu") -> dict[str, Tensor]:
    """Read a safetensors file into ``{name: tensor}`` on ``device``; no code ever runs.

    Example: ``model.load_state_dict(ember.serialization.load_safetensors("model.safetensors"))``.
    """
    with open(filename, "rb") as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            header, start = _read_header(fh, size)
            records = _validate(header, size - start)
            return {name: _read_tensor(fh, start, name, *rec, device) for name, rec in records.items()}
        except _Bad as e:
            raise ValueError(f"load_safetensors: {os.fspath(filename)!r}: {e}") from None


def _read_header(fh: Any, file_size: int) -> tuple[dict[str, Any], int]:
    if file_size < 8:
        raise _Bad(f"file of {file_size} bytes is too short for a safetensors header")
    n = int.from_bytes(fh.read(8), "little")
    if n > _ST_MAX_HEADER:
        raise _Bad(f"header length {n} exceeds the limit of {_ST_MAX_HEADER} bytes")
    if n > file_size - 8:
        raise _Bad(f"header length {n} exceeds the file ({file_size} bytes)")
    try:
        text = fh.read(n).decode("utf-8")
        header = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise _Bad(f"the header is not valid JSON ({type(e).__name__}: {e})") from None
    if not isinstance(header, dict):
        raise _Bad(f"the header is a JSON {type(header).__name__}, not an object")
    return header, 8 + n


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Bad(f"duplicate key {key!r:.80} in the header")
        out[key] = value
    return out


def _no_constant(name: str) -> None:
    raise _Bad(f"the header holds {name}, which JSON does not allow")


def _is_count(v: Any) -> bool:
    return type(v) is int and 0 <= v < 2**63


def _validate(header: dict[str, Any], data_size: int) -> dict[str, tuple[D.DType, tuple[int, ...], int, int]]:
    """Check every record, then that the spans tile ``[0, data_size)`` exactly, in offset order."""
    meta = header.get("__metadata__")
    if meta is not None and (not isinstance(meta, dict) or not all(type(v) is str for v in meta.values())):
        raise _Bad("__metadata__ must be an object of strings")
    records = {name: _record(name, rec) for name, rec in header.items() if name != "__metadata__"}
    end = 0
    for name, (_, _, begin, stop) in sorted(records.items(), key=lambda kv: (kv[1][2], kv[1][3])):
        if begin != end:
            raise _Bad(
                f"tensor {name!r:.80} starts at byte {begin}, expected {end} (spans overlap or leave a gap)"
            )
        end = stop
    if end != data_size:
        raise _Bad(f"the tensors cover {end} bytes but the file holds {data_size} bytes of data")
    return records


def _record(name: str, rec: Any) -> tuple[D.DType, tuple[int, ...], int, int]:
    if not isinstance(rec, dict) or set(rec) != _RECORD_FIELDS:
        fields = sorted(rec) if isinstance(rec, dict) else type(rec).__name__
        raise _Bad(
            f"tensor {name!r:.80} must have exactly dtype, shape and data_offsets, got {fields!r:.120}"
        )
    code, shape, offsets = rec["dtype"], rec["shape"], rec["data_offsets"]
    dt = _ST_BY_CODE.get(code) if isinstance(code, str) else None
    if dt is None:
        raise _Bad(
            f"tensor {name!r:.80} has unsupported dtype {code!r:.40} (ember reads {sorted(_ST_BY_CODE)})"
        )
    if not isinstance(shape, list) or not all(_is_count(s) for s in shape):
        raise _Bad(f"tensor {name!r:.80} has shape {shape!r:.80}, not a list of sizes")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_count(o) for o in offsets):
        raise _Bad(f"tensor {name!r:.80} has data_offsets {offsets!r:.80}, not [begin, end]")
    begin, end = offsets
    nbytes = math.prod(shape) * dt.itemsize
    if end < begin or end - begin != nbytes:
        raise _Bad(
            f"tensor {name!r:.80} has data_offsets [{begin}, {end}] that do not match its shape {shape} {code} "
            f"({nbytes} bytes)"
        )
    return dt, tuple(shape), begin, end


def _read_tensor(
    fh: Any, start: int, name: str, dt: D.DType, shape: tuple[int, ...], begin: int, end: int, device: Any
) -> Tensor:
    fh.seek(start + begin)
    buf = bytearray(end - begin)
    if fh.readinto(buf) != len(buf):
        raise _Bad(f"tensor {name!r:.80} ends past the end of the file")
    t = from_numpy(np.frombuffer(buf, dtype=numpy_dtype(dt)).reshape(shape))
    return t if str(device) == "cpu" else t.to(device)
