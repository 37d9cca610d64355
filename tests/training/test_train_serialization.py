"""ember.save / ember.load: PyTorch's zip layout, weights-only loading, atomic writes, safetensors."""

from __future__ import annotations

import collections
import io
import os
import pickle
import zipfile

import ember
import numpy as np
import pytest
from ember import nn
from ember import serialization as S

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return ember.load(buf, **kw)


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]
)
def test_tensor_round_trip_every_dtype(dtype: str) -> None:
    dt = getattr(ember, dtype)
    t = ember.tensor([[1, 0, 3], [4, 5, 0]]).to(dt)
    out = _roundtrip(t)
    assert out.dtype == dt and out.shape == (2, 3)
    assert out.to(ember.float64).tolist() == t.to(ember.float64).tolist()


def test_structures_views_scalars_parameters() -> None:
    base = ember.arange(12.0).reshape(3, 4)
    obj = {
        "sd": collections.OrderedDict(w=ember.ones(2, 2), b=ember.zeros(2)),
        "view": base[:, 1],
        "scalar": ember.tensor(2.5),
        "param": nn.Parameter(ember.ones(3)),
        "grad": ember.ones(2, requires_grad=True),
        "meta": [
            1,
            2.5,
            "x",
            (None, True),
            {3, 4},
            b"raw",
            ember.float16,
            ember.device("cpu"),
            ember.Size([2]),
        ],
    }
    out = _roundtrip(obj)
    assert isinstance(out["sd"], collections.OrderedDict) and list(out["sd"]) == ["w", "b"]
    assert out["view"].tolist() == [1.0, 5.0, 9.0] and out["scalar"].shape == ()
    assert isinstance(out["param"], nn.Parameter) and out["param"].requires_grad
    assert out["grad"].requires_grad and not out["sd"]["w"].requires_grad
    assert out["meta"] == [
        1,
        2.5,
        "x",
        (None, True),
        {3, 4},
        b"raw",
        ember.float16,
        ember.device("cpu"),
        (2,),
    ]


def test_pytorch_zip_layout(tmp_path) -> None:
    path = tmp_path / "model.pt"
    ember.save({"w": ember.ones(3)}, path)
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        assert {"model/data.pkl", "model/data/0", "model/version", "model/byteorder"} <= names
        assert z.read("model/version") == b"3\n"
        pkl = z.read("model/data.pkl")
    assert b"torch._utils\n_rebuild_tensor_v2" in pkl and b"FloatStorage" in pkl
    assert np.frombuffer(zipfile.ZipFile(path).read("model/data/0"), np.float32).tolist() == [1.0] * 3


def test_reads_a_checkpoint_written_by_pytorch() -> None:
    ck = ember.load(os.path.join(FIXTURES, "torch_checkpoint.pt"))
    sd = ck["model"]
    assert isinstance(sd, collections.OrderedDict)
    assert sd["linear.weight"].tolist() == [[0.0, 0.25, 0.5], [0.75, 1.0, 1.25]]
    assert sd["steps"].dtype == ember.int64 and sd["steps"].tolist() == [3, 1, 4]
    assert sd["mask"].dtype == ember.bool and sd["half"].dtype == ember.float64
    assert ck["view"].tolist() == [2.0, 4.0, 6.0] and ck["base"].tolist() == list(map(float, range(10)))
    assert isinstance(ck["param"], nn.Parameter) and ck["param"].requires_grad
    assert (ck["epoch"], ck["lr"], ck["name"]) == (7, 0.125, "tiny")
    assert ck["tagged"].tolist() == [1.0, 2.0]  # a tensor PyTorch saved with a Python attribute


def test_resumes_a_pytorch_optimizer_and_scheduler() -> None:
    ck = ember.load(os.path.join(FIXTURES, "torch_checkpoint.pt"))
    assert ck["size"] == ember.Size([2, 3]) and isinstance(ck["size"], ember.Size)
    lin = nn.Linear(3, 2)
    lin.load_state_dict(ck["after_two_steps"])
    opt = ember.optim.Adam(lin.parameters(), lr=0.5)
    opt.load_state_dict(ck["optimizer"])
    assert opt.state_dict()["state"][0]["step"].item() == 2.0
    sched = ember.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3])
    sched.load_state_dict(ck["scheduler"])
    assert sched.get_last_lr() == pytest.approx([0.001]) and sched.milestones == collections.Counter([1, 3])


def test_map_location_forms() -> None:
    path = os.path.join(FIXTURES, "torch_checkpoint.pt")
    assert ember.load(path, map_location="cpu")["base"].device == ember.device("cpu")
    assert ember.load(path, map_location={"cpu": "cpu"})["base"].device == ember.device("cpu")
    seen = []

    def move(t, location):
        seen.append(location)
        return t

    ember.load(path, map_location=move)
    assert seen and set(seen) == {"cpu"}


def test_whole_model_needs_an_allowlist() -> None:
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    buf = io.BytesIO()
    ember.save(model, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed") as info:
        ember.load(buf)
    assert "Sequential" in str(info.value) and "add_safe_globals" in str(info.value)
    buf.seek(0)
    with S.safe_globals([nn.Sequential, nn.Linear, nn.ReLU]):
        loaded = ember.load(buf)
    assert S.get_safe_globals() == []
    assert loaded[0].weight.tolist() == model[0].weight.tolist()
    buf.seek(0)
    assert isinstance(ember.load(buf, weights_only=False), nn.Sequential)


class _Exploit:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_crafted_pickle_never_runs_code(tmp_path) -> None:
    marker = tmp_path / "pwned"
    bad = tmp_path / "bad.pt"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("bad/data.pkl", pickle.dumps({"w": _Exploit(str(marker))}, protocol=2))
        z.writestr("bad/version", "3\n")
    with pytest.raises(
        pickle.UnpicklingError, match=r"(?s)Weights only load failed.*Unsupported global: GLOBAL (posix|os)"
    ):
        ember.load(bad)
    assert not marker.exists()


def test_crafted_storage_record_cannot_read_out_of_bounds(tmp_path) -> None:
    buf = io.BytesIO()
    ember.save(ember.ones(2), buf)
    with zipfile.ZipFile(buf) as z:
        pkl = z.read("archive/data.pkl").replace(b"K\x02\x85", b"K\x09\x85", 1)  # size (2,) -> (9,)
    bad = tmp_path / "oob.pt"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("oob/data.pkl", pkl)
        z.writestr("oob/data/0", np.ones(2, np.float32).tobytes())
    with pytest.raises(RuntimeError, match=r"out of bounds for storage 0 of size 8"):
        ember.load(bad)


def test_atomic_save_keeps_the_old_file_on_a_crash(tmp_path, monkeypatch) -> None:
    path = tmp_path / "ckpt.pt"
    ember.save({"v": ember.tensor([1.0])}, path)
    before = path.read_bytes()

    def crash(obj, f, archive):
        f.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(S, "_write_zip", crash)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"v": ember.tensor([2.0])}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.pt"]
    monkeypatch.undo()
    assert ember.load(path)["v"].tolist() == [1.0]


def test_not_a_checkpoint_error(tmp_path) -> None:
    path = tmp_path / "junk.pt"
    path.write_bytes(b"not a zip")
    with pytest.raises(RuntimeError, match="not a zip checkpoint"):
        ember.load(path)


def test_safetensors_round_trip_and_reference_file(tmp_path) -> None:
    path = tmp_path / "m.safetensors"
    tensors = {
        "w": ember.arange(6.0).reshape(2, 3),
        "m": ember.tensor([True, False]),
        "h": ember.ones(2).half(),
    }
    S.save_safetensors(tensors, path, metadata={"format": "pt"})
    out = S.load_safetensors(path)
    assert {k: (v.dtype, v.tolist()) for k, v in out.items()} == {
        k: (v.dtype, v.tolist()) for k, v in tensors.items()
    }
    header_len = int.from_bytes(path.read_bytes()[:8], "little")
    assert header_len % 8 == 0
    ref = S.load_safetensors(
        os.path.join(FIXTURES, "reference.safetensors")
    )  # written by the safetensors package
    assert ref["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert ref["i"].dtype == ember.int32 and ref["i"].tolist() == [7, -8]


def test_safetensors_rejects_bad_offsets(tmp_path) -> None:
    path = tmp_path / "bad.safetensors"
    head = b'{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,64]}}'
    path.write_bytes(len(head).to_bytes(8, "little") + head + b"\0" * 16)
    with pytest.raises(ValueError, match="offsets"):
        S.load_safetensors(path)


def test_devices_are_restored_or_mapped(tmp_path) -> None:
    path = tmp_path / "dev.pt"
    ember.save({"a": ember.arange(3.0, device="cpu:1"), "b": ember.ones(1)}, path)
    out = ember.load(path)
    assert out["a"].device == ember.device("cpu:1") and out["b"].device == ember.device("cpu")
    assert ember.load(path, map_location="cpu")["a"].device == ember.device("cpu")
    with zipfile.ZipFile(path) as z:
        pkl = z.read("dev/data.pkl").replace(b"cpu:1", b"xyz:1")
    bad = tmp_path / "nodev.pt"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(bad, "w") as z:
        for name in src.namelist():
            z.writestr(name.replace("dev/", "nodev/"), pkl if name.endswith("data.pkl") else src.read(name))
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on device 'xyz:1'"):
        ember.load(bad)
    assert ember.load(bad, map_location="cpu")["a"].tolist() == [0.0, 1.0, 2.0]
