"""Checkpoint archives: storages read within their declared sizes, views kept, one error per bad file."""

from __future__ import annotations

import io
import os
import pickle
import struct
import time
import tracemalloc
import zipfile

import ember
import numpy as np
import pytest

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "checkpoints")
P = pickle


def _s(text: str) -> bytes:
    raw = text.encode()
    return P.BINUNICODE + struct.pack("<I", len(raw)) + raw


def _i(n: int) -> bytes:
    return P.BININT + struct.pack("<i", n)


def _tensor_pkl(numel: int, offset: int, size: tuple, stride: tuple, key: str = "0") -> bytes:
    """PyTorch's pickle of one float32 tensor over storage ``key``: ``_rebuild_tensor_v2(...)``."""
    storage = P.MARK + _s("storage") + P.GLOBAL + b"torch\nFloatStorage\n" + _s(key) + _s("cpu") + _i(numel)
    storage += P.TUPLE + P.BINPERSID
    ints = [P.MARK + b"".join(_i(v) for v in vals) + P.TUPLE for vals in (size, stride)]
    od = P.GLOBAL + b"collections\nOrderedDict\n" + P.EMPTY_TUPLE + P.REDUCE
    args = P.MARK + storage + _i(offset) + ints[0] + ints[1] + P.NEWFALSE + od + P.TUPLE
    return P.PROTO + b"\x02" + P.GLOBAL + b"torch._utils\n_rebuild_tensor_v2\n" + args + P.REDUCE + P.STOP


def _zip(entries: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return buf.getvalue()


def _load_bytes(tmp_path, raw: bytes, name: str = "ck.pt"):
    path = tmp_path / name
    path.write_bytes(raw)
    return ember.load(path), path


# -- finding 2: small files, large costs --------------------------------------------------------
def test_stride_zero_tensor_stays_a_view_of_its_one_element(tmp_path) -> None:
    """595 bytes declaring a 1 GiB expanded tensor: PyTorch returns a stride-0 view; so does ember."""
    raw = _zip({"a/data.pkl": _tensor_pkl(1, 0, (2**28,), (0,)), "a/data/0": np.float32(3.5).tobytes()})
    assert len(raw) < 700
    tracemalloc.start()
    start = time.perf_counter()
    out, _ = _load_bytes(tmp_path, raw)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert out.shape == (2**28,) and out.stride() == (0,) and out.dtype == ember.float32
    assert out[0].item() == 3.5 and out[2**28 - 1].item() == 3.5
    assert peak < 8 * 2**20 and elapsed < 5.0


def test_tensors_saved_from_one_storage_share_it_after_load() -> None:
    base = ember.arange(6.0)
    buf = io.BytesIO()
    ember.save({"a": base, "v": base[1:5:2], "e": base[:1].expand(4), "t": base.view(2, 3).t()}, buf)
    buf.seek(0)
    with zipfile.ZipFile(buf) as z:
        assert sorted(n for n in z.namelist() if "/data/" in n) == ["archive/data/0"]
    buf.seek(0)
    out = ember.load(buf)
    assert out["v"].tolist() == [1.0, 3.0] and out["v"].stride() == (2,) and out["v"].storage_offset() == 1
    assert out["e"].stride() == (0,) and out["t"].stride() == (1, 3)
    assert out["t"].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    out["v"][0] = 100.0  # writing one changes the others, as in PyTorch
    assert out["a"].tolist() == [0.0, 100.0, 2.0, 3.0, 4.0, 5.0] and out["t"][1, 0].item() == 100.0
    assert out["a"].grad_fn is None and out["v"]._base is None  # leaves, as torch's set_() makes them


def test_pytorch_views_sharing_storage_share_it_after_load() -> None:
    """Written by torch 2.13 (tests/fixtures/checkpoints/make_fixtures.py)."""
    out = ember.load(os.path.join(FIXTURES, "torch_views.pt"))
    assert out["base"].tolist() == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]
    assert out["col"].tolist() == [1.0, 5.0, 9.0] and out["col"].stride() == (4,)
    assert out["row_expanded"].stride() == (0, 1) and out["row_expanded"].shape == (5, 4)
    assert out["transposed"].stride() == (1, 4) and out["overlap"].stride() == (1, 1)
    assert out["overlap"].tolist() == [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]
    assert isinstance(out["param"], ember.nn.Parameter) and out["param"].tolist() == [4.0, 5.0, 6.0, 7.0]
    out["col"][0] = -1.0
    assert out["base"][0, 1].item() == -1.0 and out["transposed"][1, 0].item() == -1.0
    assert out["overlap"][0, 1].item() == -1.0 and out["overlap"][1, 0].item() == -1.0
    assert out["param"].tolist() == [4.0, 5.0, 6.0, 7.0]  # its own storage in the file


def test_declared_storage_size_is_checked_before_inflating(tmp_path) -> None:
    """A 2 MB-per-KB deflate entry behind a 4-element storage record: refused without inflating it."""
    bomb = _zip({"a/data.pkl": _tensor_pkl(4, 0, (4,), (1,)), "a/data/0": bytes(2**26)}, zipfile.ZIP_DEFLATED)
    assert len(bomb) < 200_000
    tracemalloc.start()
    with pytest.raises(
        RuntimeError, match=r"ck.pt.*record size \(67108864 bytes\) of storage 0 does not match"
    ):
        _load_bytes(tmp_path, bomb)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 * 2**20


def _patch_declared_size(raw: bytes, name: bytes, size: int) -> bytes:
    """Make the zip lie: the entry's declared uncompressed size becomes ``size`` (local + central)."""
    out = bytearray(raw)
    local = raw.find(name) - 30  # the local header's fixed part is 30 bytes, then the name
    struct.pack_into("<I", out, local + 22, size)
    central = raw.rfind(name) - 46
    struct.pack_into("<I", out, central + 24, size)
    return bytes(out)


def test_a_zip_that_lies_about_its_size_never_inflates_more(tmp_path) -> None:
    raw = _zip({"a/data.pkl": _tensor_pkl(4, 0, (4,), (1,)), "a/data/0": bytes(2**26)}, zipfile.ZIP_DEFLATED)
    raw = _patch_declared_size(raw, b"a/data/0", 16)
    tracemalloc.start()
    with pytest.raises(RuntimeError, match=r"failed reading zip archive: record a/data/0"):
        _load_bytes(tmp_path, raw)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 * 2**20


# -- finding 3: one exception type, naming the file --------------------------------------------
def _good() -> bytes:
    buf = io.BytesIO()
    ember.save({"w": ember.arange(4.0), "b": ember.ones(2, dtype=ember.int64)}, buf)
    return buf.getvalue()


def _set_version_needed(raw: bytes) -> bytes:
    out = bytearray(raw)
    central = raw.find(b"PK\x01\x02")
    struct.pack_into("<H", out, central + 6, 255)  # "zip file version 25.5"
    return bytes(out)


def _negative_offset(raw: bytes) -> bytes:
    out = bytearray(raw)
    end = raw.rfind(b"PK\x05\x06")
    struct.pack_into("<I", out, end + 16, len(raw) + 1000)  # central directory offset past the end
    return bytes(out)


CORRUPT = {
    "empty": lambda raw: b"",
    "truncated at half": lambda raw: raw[: len(raw) // 2],
    "truncated end record": lambda raw: raw[:-5],
    "version 25.5": _set_version_needed,
    "central directory past the end": _negative_offset,
    "storage bytes flipped under the CRC": lambda raw: raw.replace(
        np.arange(4.0, dtype=np.float32).tobytes(), b"\xff" * 16
    ),
}


@pytest.mark.parametrize("case", list(CORRUPT))
def test_corrupt_archives_raise_runtime_error_naming_the_file(tmp_path, case: str) -> None:
    path = tmp_path / "corrupt.pt"
    path.write_bytes(CORRUPT[case](_good()))
    with pytest.raises(RuntimeError) as info:
        ember.load(path)
    assert type(info.value) is RuntimeError and str(path) in str(info.value)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"a/data.pkl": _tensor_pkl(4, 0, (4,), (1,))}, "failed locating record a/data/0"),
        ({"a/data.pkl": _tensor_pkl(4, 0, (4,), (1,)), "a/data/0": bytes(8)}, r"record size \(8 bytes\)"),
        ({"a/data.pkl": _tensor_pkl(4, 1, (4,), (1,)), "a/data/0": bytes(16)}, "out of bounds for storage 0"),
        ({"a/data.pkl": _tensor_pkl(4, 0, (2, 2), (2,)), "a/data/0": bytes(16)}, "invalid tensor record"),
        ({"a/data.pkl": _tensor_pkl(4, -1, (2,), (1,)), "a/data/0": bytes(16)}, "negative offset"),
        (
            {"a/data.pkl": _tensor_pkl(4, 0, (2,), (-1,)), "a/data/0": bytes(16)},
            "negative offset, size or stride",
        ),
        ({"a/data.pkl": _tensor_pkl(4, 0, (2**31 - 1,) * 3, (0,) * 3), "a/data/0": bytes(16)}, "exceed 2"),
        ({"x.pkl": b""}, r"not a checkpoint archive \(no <archive>/data.pkl record\)"),
        ({"a/data.pkl": b"", "a/byteorder": b"middle"}, "unknown byteorder record 'middle'"),
    ],
)
def test_malformed_records_raise_runtime_error(tmp_path, entries: dict, message: str) -> None:
    with pytest.raises(RuntimeError, match=message) as info:
        _load_bytes(tmp_path, _zip(entries))
    assert type(info.value) is RuntimeError and "ck.pt" in str(info.value)


def test_not_a_zip_names_the_file(tmp_path) -> None:
    with pytest.raises(RuntimeError, match=r"junk.pt'?: the file is not a zip checkpoint"):
        _load_bytes(tmp_path, b"not a zip at all", "junk.pt")


def test_big_endian_storages_are_swapped(tmp_path) -> None:
    entries = {"a/data.pkl": _tensor_pkl(2, 0, (2,), (1,)), "a/byteorder": b"big"}
    entries["a/data/0"] = np.array([1.5, -2.0], dtype=">f4").tobytes()
    out, _ = _load_bytes(tmp_path, _zip(entries))
    assert out.tolist() == [1.5, -2.0]


def test_declared_sizes_beyond_what_the_file_can_hold_are_refused_before_allocating(tmp_path) -> None:
    """A 1 KB entry cannot inflate past 1032x (deflate's limit): declaring 2 GiB is a lie, refused up front."""
    numel = 2**29  # 2 GiB of float32, consistent between the storage record and the zip entry
    raw = _zip(
        {"a/data.pkl": _tensor_pkl(numel, 0, (4,), (1,)), "a/data/0": bytes(1024)}, zipfile.ZIP_DEFLATED
    )
    for name in (b"a/data/0", b"a/data.pkl"):
        lying = _patch_declared_size(raw, name, 2**31)
        tracemalloc.start()
        with pytest.raises(RuntimeError, match=r"declares 2147483648 bytes from \d+ stored bytes"):
            _load_bytes(tmp_path, lying)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 8 * 2**20


class _Pipe(io.RawIOBase):
    """A stream that cannot seek, like a pipe or a socket."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        chunk = self._data.read(len(b))
        b[: len(chunk)] = chunk
        return len(chunk)


def test_loads_from_a_stream_that_cannot_seek() -> None:
    out = ember.load(io.BufferedReader(_Pipe(_good())))
    assert out["w"].tolist() == [0.0, 1.0, 2.0, 3.0] and out["b"].tolist() == [1, 1]
