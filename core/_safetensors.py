"""The safetensors format, implemented directly (no dependency): ``ember.serialization.save_safetensors``.

A file is an 8-byte little-endian header length, a JSON header
``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`` and the
raw little-endian bytes. Loading never runs code: it only parses JSON and copies bytes.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ._atomic_save import atomic_write
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
}
_ST_BY_CODE = {v: D.DTYPES_BY_NAME[k] for k, v in _ST_DTYPES.items()}
_ST_MAX_HEADER = 100 * 1024 * 1024


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


def load_safetensors(filename: Any, device: Any = "cpu") -> dict[str, Tensor]:
    """Read a safetensors file into ``{name: tensor}`` on ``device``; no code ever runs."""
    with open(filename, "rb") as fh:
        blob = fh.read()
    header, start = _safetensors_header(blob)
    out: dict[str, Tensor] = {}
    for name, rec in header.items():
        if name != "__metadata__":
            out[name] = _safetensors_tensor(name, rec, blob, start, device)
    return out


def _safetensors_header(blob: bytes) -> tuple[dict[str, Any], int]:
    if len(blob) < 8:
        raise ValueError("load_safetensors: file too short for a safetensors header")
    n = int.from_bytes(blob[:8], "little")
    if n > min(_ST_MAX_HEADER, len(blob) - 8):
        raise ValueError(f"load_safetensors: header length {n} exceeds the file ({len(blob)} bytes)")
    header = json.loads(blob[8 : 8 + n])
    if not isinstance(header, dict):
        raise ValueError("load_safetensors: the header is not a JSON object")  # noqa: TRY004 (bad file, not bad type)
    return header, 8 + n


def _safetensors_tensor(name: str, rec: Any, blob: bytes, start: int, device: Any) -> Tensor:
    from ._creation import tensor

    code, shape, (begin, end) = rec["dtype"], rec["shape"], rec["data_offsets"]
    dt = _ST_BY_CODE.get(code)
    if dt is None:
        raise ValueError(f"load_safetensors: {name!r} has unsupported dtype {code!r}")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if not 0 <= begin <= end <= len(blob) - start or end - begin != nbytes:
        raise ValueError(
            f"load_safetensors: {name!r} has offsets [{begin}, {end}] that do not match {shape} {code}"
        )
    arr = np.frombuffer(blob, dtype=_numpy_dtype(dt), count=nbytes // dt.itemsize, offset=start + begin)
    return tensor(arr.reshape(shape).copy(), dtype=dt, device=device)


def _numpy_dtype(dt: D.DType) -> np.dtype:
    if dt.name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dt.name)
