"""safetensors: as strict as the ``safetensors`` library, with one error type naming the file.

The library (installed in the test environment) is the oracle: every crafted file below is
refused by both; every valid file gives both the same arrays.
"""

from __future__ import annotations

import json
import struct

import ember
import ml_dtypes
import numpy as np
import pytest
from ember import serialization as S
from safetensors import SafetensorError
from safetensors.numpy import load as st_load
from safetensors.numpy import save as st_save


def _file(header: str | bytes, data: bytes = b"", length: int | None = None) -> bytes:
    raw = header.encode() if isinstance(header, str) else header
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


def _rec(dtype: str = "F32", shape: str = "[2]", offsets: str = "[0,8]", extra: str = "") -> str:
    return f'{{"dtype":"{dtype}","shape":{shape},"data_offsets":{offsets}{extra}}}'


BOTH_REFUSE = {
    "too short": b"\x01\x00",
    "header longer than the file": _file("{}", length=1000),
    "header over 100 MB": _file("{}", length=100_000_001),
    "header length cut": _file("{}", length=1),
    "empty header": _file(""),
    "not utf-8": _file(b'{"\xff":1}'),
    "not an object": _file("[1]"),
    "deep nesting": _file("[" * 100_000 + "]" * 100_000),
    "missing dtype": _file('{"a":{"shape":[2],"data_offsets":[0,8]}}', bytes(8)),
    "unknown dtype": _file('{"a":' + _rec("X9") + "}", bytes(8)),
    "negative shape": _file('{"a":' + _rec(shape="[-2]") + "}", bytes(8)),
    "float shape": _file('{"a":' + _rec(shape="[2.0]") + "}", bytes(8)),
    "three offsets": _file('{"a":' + _rec(offsets="[0,8,8]") + "}", bytes(8)),
    "end before begin": _file('{"a":' + _rec(shape="[0]", offsets="[8,0]") + "}", bytes(8)),
    "shape does not match span": _file('{"a":' + _rec(shape="[3]") + "}", bytes(8)),
    "huge shape": _file('{"a":' + _rec(shape="[4294967296,4294967296]") + "}", bytes(8)),
    "overlapping F32 and I32": _file('{"a":' + _rec() + ',"b":' + _rec("I32") + "}", bytes(8)),
    "gap at the start": _file('{"a":' + _rec(offsets="[4,12]") + "}", bytes(12)),
    "trailing bytes": _file('{"a":' + _rec() + "}", bytes(12)),
    "data cut short": _file('{"a":' + _rec() + "}", bytes(4)),
    "metadata not strings": _file('{"__metadata__":{"a":1}}'),
    "metadata not an object": _file('{"__metadata__":"x"}'),
    "NUL padding": _file("{}\x00\x00"),
    "duplicate metadata": _file('{"__metadata__":{"a":"b"},"__metadata__":{"a":"c"}}'),
}


@pytest.mark.parametrize("case", list(BOTH_REFUSE))
def test_crafted_files_are_refused_like_the_library(tmp_path, case: str) -> None:
    raw = BOTH_REFUSE[case]
    with pytest.raises(SafetensorError):
        st_load(raw)
    path = tmp_path / "crafted.safetensors"
    path.write_bytes(raw)
    with pytest.raises(ValueError, match=r"load_safetensors: '.*crafted.safetensors': ") as info:
        S.load_safetensors(path)
    assert type(info.value) is ValueError


STRICTER = {
    "duplicate tensor name": (
        _file('{"a":' + _rec() + ',"a":' + _rec() + "}", bytes(8)),
        "duplicate key 'a'",
    ),
    "extra record field": (_file('{"a":' + _rec(extra=',"x":1') + "}", bytes(8)), "exactly dtype, shape"),
    "duplicate metadata key": (_file('{"__metadata__":{"a":"b","a":"c"}}'), "duplicate key 'a'"),
    "NaN in the header": (_file('{"__metadata__":{"a":"b"},"x":NaN}'), "NaN"),
}


@pytest.mark.parametrize("case", list(STRICTER))
def test_ambiguous_headers_are_refused(tmp_path, case: str) -> None:
    """The library takes the last of two equal keys silently; ember refuses the ambiguity."""
    raw, message = STRICTER[case]
    path = tmp_path / "ambiguous.safetensors"
    path.write_bytes(raw)
    with pytest.raises(ValueError, match=message):
        S.load_safetensors(path)


ARRAYS = {
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3),
    "f64": np.array([1.5, -2.25]),
    "f16": np.array([0.5, 65504.0], dtype=np.float16),
    "i64": np.array([-(2**62), 7], dtype=np.int64),
    "i32": np.array([[7], [-8]], dtype=np.int32),
    "i16": np.array([-300], dtype=np.int16),
    "i8": np.array([-1, 2], dtype=np.int8),
    "u8": np.array([255, 0], dtype=np.uint8),
    "bool": np.array([True, False, True]),
    "c64": np.array([1 + 2j], dtype=np.complex64),
    "scalar": np.array(2.5, dtype=np.float32),
    "empty": np.zeros((0, 3), dtype=np.float32),
}


def test_valid_files_give_the_same_arrays_as_the_library(tmp_path) -> None:
    path = tmp_path / "lib.safetensors"
    path.write_bytes(st_save(ARRAYS, metadata={"format": "np"}))
    ours = S.load_safetensors(path)
    theirs = st_load(path.read_bytes())
    assert set(ours) == set(ARRAYS)
    for name, ref in theirs.items():
        got = ours[name].numpy()
        assert got.dtype == ref.dtype and got.shape == ref.shape, name
        assert got.tobytes() == ref.tobytes(), name


def test_files_ember_writes_are_read_by_the_library(tmp_path) -> None:
    path = tmp_path / "ember.safetensors"
    tensors = {name: ember.from_numpy(arr.copy()) for name, arr in ARRAYS.items()}
    S.save_safetensors(tensors, path, metadata={"format": "pt"})
    theirs = st_load(path.read_bytes())
    for name, arr in ARRAYS.items():
        assert theirs[name].dtype == arr.dtype and theirs[name].tobytes() == arr.tobytes(), name
    assert json.loads(path.read_bytes()[8:].split(b"}}", 1)[0] + b"}}")["__metadata__"] == {"format": "pt"}


def test_bfloat16_round_trip(tmp_path) -> None:
    """safetensors.numpy has no BF16; the bytes are checked against ml_dtypes directly."""
    path = tmp_path / "bf16.safetensors"
    values = np.array([1.0, -3.5, 0.0078125], dtype=ml_dtypes.bfloat16)
    S.save_safetensors({"w": ember.tensor([1.0, -3.5, 0.0078125]).to(ember.bfloat16)}, path)
    assert path.read_bytes().endswith(values.tobytes())
    out = S.load_safetensors(path)["w"]
    assert out.dtype == ember.bfloat16 and out.float().tolist() == [1.0, -3.5, 0.0078125]


def test_loaded_tensors_own_writable_memory(tmp_path) -> None:
    path = tmp_path / "w.safetensors"
    path.write_bytes(st_save({"a": np.ones(3, np.float32), "b": np.zeros(2, np.float32)}))
    out = S.load_safetensors(path)
    out["a"][0] = 5.0
    assert out["a"].tolist() == [5.0, 1.0, 1.0] and out["b"].tolist() == [0.0, 0.0]
