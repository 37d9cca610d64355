"""Checkpoints against PyTorch 2.13: files cross both ways with views and sharing intact, and the
weights-only loaders accept and refuse the same crafted files."""

from __future__ import annotations

import io
import os
import pickle
import struct
import zipfile

import ember
import numpy as np
import pytest
import torch
import torch._weights_only_unpickler as torch_wo
from ember._checkpoint_rebuild import default_globals

P = pickle


def _s(text: str) -> bytes:
    raw = text.encode()
    return P.BINUNICODE + struct.pack("<I", len(raw)) + raw


def _g(module: str, name: str) -> bytes:
    return P.GLOBAL + f"{module}\n{name}\n".encode()


def _archive(pkl: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", P.PROTO + b"\x02" + pkl + P.STOP)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def test_pytorch_reads_embers_views_with_their_strides_and_shared_storage() -> None:
    base = ember.arange(12.0).reshape(3, 4)
    buf = io.BytesIO()
    ember.save({"base": base, "col": base[:, 1], "exp": base[0].expand(2, 4), "t": base.t()}, buf)
    out = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
    ref = torch.arange(12.0).reshape(3, 4)
    assert (
        torch.equal(out["base"], ref)
        and torch.equal(out["col"], ref[:, 1])
        and torch.equal(out["t"], ref.t())
    )
    assert out["col"].stride() == (4,) and out["exp"].stride() == (0, 1) and out["t"].stride() == (1, 4)
    ptrs = {out[k].untyped_storage().data_ptr() for k in ("base", "col", "exp", "t")}
    assert len(ptrs) == 1
    out["col"][0] = -1.0
    assert out["base"][0, 1].item() == -1.0


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.bool],
)
def test_ember_reads_pytorch_views_like_pytorch(dtype: torch.dtype) -> None:
    base = (torch.arange(24) % 7).reshape(4, 6).to(dtype)
    obj = {"base": base, "col": base[:, 2], "exp": base[1].expand(3, 6), "t": base.t(), "s": base[1:, ::2]}
    buf = io.BytesIO()
    torch.save(obj, buf)
    out = ember.load(io.BytesIO(buf.getvalue()))
    for name, ref in obj.items():
        got = out[name]
        assert (tuple(got.shape), got.stride(), got.storage_offset()) == (
            tuple(ref.shape),
            ref.stride(),
            ref.storage_offset(),
        ), name
        assert np.array_equal(got.float().numpy(), ref.float().numpy()), name
    assert len({out[k].data_ptr() - out[k].storage_offset() * out[k].dtype.itemsize for k in obj}) == 1


def _build(target: bytes) -> bytes:
    return target + P.NONE + P.EMPTY_DICT + _s("name") + _s("int64") + P.SETITEM + P.TUPLE2 + P.BUILD


CRAFTED = {
    "BUILD on a dtype": _build(_g("torch", "float32")),
    "BUILD on Size": _build(_g("torch", "Size")),
    "BUILD on a rebuild function": _build(_g("torch._utils", "_rebuild_tensor_v2")),
    "SETITEM on a class": _g("collections", "OrderedDict") + _s("k") + _s("v") + P.SETITEM,
    "APPEND to a class": _g("torch", "Size") + _s("v") + P.APPEND,
    "frozenset": _g("__builtin__", "frozenset") + P.MARK + P.EMPTY_LIST + P.TUPLE + P.REDUCE,
    "range": _g("__builtin__", "range") + P.MARK + P.BININT1 + b"\x05" + P.TUPLE + P.REDUCE,
    "slice": _g("__builtin__", "slice") + P.MARK + P.BININT1 + b"\x05" + P.TUPLE + P.REDUCE,
    "os.system": _g("os", "system") + P.MARK + _s("true") + P.TUPLE + P.REDUCE,
    "persistent id not a storage": _s("x") + P.BINPERSID,
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_both_loaders_refuse_the_same_crafted_files(case: str) -> None:
    raw = _archive(CRAFTED[case])
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(io.BytesIO(raw), weights_only=True)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ember.load(io.BytesIO(raw))


def test_both_loaders_accept_a_state_dict_with_metadata() -> None:
    od = _g("collections", "OrderedDict") + P.EMPTY_TUPLE + P.REDUCE
    pkl = od + _s("w") + P.BININT1 + b"\x03" + P.SETITEM + P.EMPTY_DICT + _s("_metadata") + P.EMPTY_DICT
    raw = _archive(pkl + P.SETITEM + P.BUILD)
    ours, theirs = ember.load(io.BytesIO(raw)), torch.load(io.BytesIO(raw), weights_only=True)
    assert ours == theirs == {"w": 3} and ours._metadata == theirs._metadata == {}


def test_embers_allowlist_is_within_pytorchs() -> None:
    """Every ``torch.*``/builtin name ember allows, PyTorch allows too (ember's own names aside)."""
    theirs = set(torch_wo._get_allowed_globals())
    ours = {name for name in default_globals()[0] if not name.startswith("ember.")}
    assert ours - theirs == set()
    assert not {"builtins.range", "builtins.frozenset", "builtins.slice"} & (theirs | ours)


@pytest.mark.parametrize("cut", [0.5, 0.9])
def test_truncated_archives_raise_runtime_error_in_both(cut: float) -> None:
    buf = io.BytesIO()
    torch.save({"w": torch.arange(100.0)}, buf)
    raw = buf.getvalue()[: int(len(buf.getvalue()) * cut)]
    with pytest.raises(RuntimeError):
        torch.load(io.BytesIO(raw), weights_only=True)
    with pytest.raises(RuntimeError, match="failed reading zip archive|not a zip checkpoint"):
        ember.load(io.BytesIO(raw))


def test_storage_size_mismatch_raises_runtime_error_in_both() -> None:
    buf = io.BytesIO()
    torch.save(torch.ones(4), buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in src.namelist():
            z.writestr(name, src.read(name)[:8] if name.endswith("data/0") else src.read(name))
    with pytest.raises(RuntimeError, match=r"record size \(8 bytes\)"):
        torch.load(io.BytesIO(out.getvalue()), weights_only=True)
    with pytest.raises(RuntimeError, match=r"record size \(8 bytes\)"):
        ember.load(io.BytesIO(out.getvalue()))


def _modes_after_saves(save, value, path) -> tuple[int, int, bool]:
    """The mode of a new file, the mode after an overwrite of a 0640 file, and whether a link survives."""
    save({"w": value}, path)
    new_mode = os.stat(path).st_mode & 0o777
    os.chmod(path, 0o640)
    save({"w": value}, path)
    link = path.with_name(path.name + ".link")
    link.symlink_to(path)
    save({"w": value}, link)
    return new_mode, os.stat(path).st_mode & 0o777, link.is_symlink()


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_file_modes_and_symlinks_match_torch_save(tmp_path, umask: int) -> None:
    old = os.umask(umask)
    try:
        theirs = _modes_after_saves(torch.save, torch.ones(1), tmp_path / "torch.pt")
        ours = _modes_after_saves(ember.save, ember.ones(1), tmp_path / "ember.pt")
    finally:
        os.umask(old)
    assert ours == theirs == (0o666 & ~umask, 0o640, True)
