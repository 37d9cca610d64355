"""Views of one storage in checkpoints, against PyTorch 2.13: ``ember.save`` writes one storage
record for them, and whichever framework loads the file (ember's or PyTorch's) gets tensors
that share it again: a write through one is seen through the others."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import ember
import pytest

torch = pytest.importorskip("torch")


def _records(buf: io.BytesIO) -> list[tuple[str, int]]:
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        return [(i.filename.split("/", 1)[1], i.file_size) for i in z.infolist() if "/data/" in i.filename]


def _save(lib: Any, obj: Any) -> io.BytesIO:
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf


def _load(lib: Any, buf: io.BytesIO) -> Any:
    return lib.load(io.BytesIO(buf.getvalue()))


def _views(lib: Any) -> dict[str, Any]:
    x = lib.arange(4.0)
    return {"a": x, "b": x[1:], "c": x.view(2, 2)}


@pytest.mark.parametrize("loader", [ember, torch], ids=["ember.load", "torch.load"])
def test_ember_writes_one_record_and_either_loader_shares_it(loader: Any) -> None:
    buf = _save(ember, _views(ember))
    assert _records(buf) == [("data/0", 16)]
    out = _load(loader, buf)
    out["a"][2] = 100.0
    assert out["b"].tolist() == [1.0, 100.0, 3.0]
    assert out["c"].tolist() == [[0.0, 1.0], [100.0, 3.0]]


def test_ember_loads_pytorchs_views_sharing_one_storage() -> None:
    out = _load(ember, _save(torch, _views(torch)))
    out["c"][1, 1] = -5.0
    assert out["a"].tolist() == [0.0, 1.0, 2.0, -5.0]
    assert out["b"].tolist() == [1.0, 2.0, -5.0]


@pytest.mark.parametrize("loader", [ember, torch], ids=["ember.load", "torch.load"])
def test_strided_and_expanded_views_keep_their_layout_and_sharing(loader: Any) -> None:
    x = ember.arange(6.0)
    buf = _save(ember, [x.view(2, 3).t(), x[::2], x[:1].expand(3), x])
    assert len(_records(buf)) == 1
    t, every_other, expanded, whole = _load(loader, buf)
    assert tuple(t.stride()) == (1, 3) and tuple(every_other.stride()) == (2,)
    whole[0] = 9.0
    assert t[0].tolist() == [9.0, 3.0]
    assert every_other.tolist() == [9.0, 2.0, 4.0]
    assert expanded.tolist() == [9.0, 9.0, 9.0]


@pytest.mark.parametrize("loader", [ember, torch], ids=["ember.load", "torch.load"])
def test_a_parameter_over_a_view_shares_with_its_tensor(loader: Any) -> None:
    x = ember.arange(4.0)
    buf = _save(ember, {"x": x, "p": ember.nn.Parameter(x.view(2, 2))})
    assert len(_records(buf)) == 1
    out = _load(loader, buf)
    with loader.no_grad():
        out["p"][1, 0] = 7.0
    assert out["x"].tolist() == [0.0, 1.0, 7.0, 3.0]
    assert out["p"].requires_grad


def test_reloaded_views_saved_again_stay_one_storage() -> None:
    x = torch.arange(6.0)
    loaded = _load(ember, _save(torch, {"tail": x[2:], "rows": x.view(2, 3)[1]}))
    buf = _save(ember, loaded)
    assert _records(buf) == [("data/0", 24)]
    for lib in (ember, torch):
        out = _load(lib, buf)
        out["tail"][1] = 42.0
        assert out["rows"].tolist() == [42.0, 4.0, 5.0]  # tail[1] is x[3], rows[0]


def test_separate_tensors_stay_separate() -> None:
    a, b = ember.arange(3.0), ember.arange(3.0)
    out = _load(ember, _save(ember, [a, b, a.clone()]))
    out[0][0] = 5.0
    assert out[1].tolist() == [0.0, 1.0, 2.0] and out[2].tolist() == [0.0, 1.0, 2.0]


def test_a_saved_slice_keeps_pytorchs_storage_and_offset() -> None:
    """PyTorch writes the whole storage of a saved slice; ember matches its record and offset."""
    e_buf, t_buf = _save(ember, ember.arange(5.0)[2:]), _save(torch, torch.arange(5.0)[2:])
    assert _records(e_buf) == _records(t_buf) == [("data/0", 20)]
    for lib in (ember, torch):
        out = _load(lib, e_buf)
        assert out.tolist() == [2.0, 3.0, 4.0] and out.storage_offset() == 2
