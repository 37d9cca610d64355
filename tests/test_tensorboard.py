"""SummaryWriter: event files read back with tensorboard's own reader give exactly what was logged."""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import ember
import numpy as np
import pytest
from ember import nn
from ember.utils.tensorboard import SummaryWriter
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import metadata as hp_meta


def _read(path: Path | str) -> EventAccumulator:
    acc = EventAccumulator(
        str(path), size_guidance={"images": 0, "histograms": 0, "scalars": 0, "tensors": 0}
    )
    acc.Reload()
    return acc


def test_scalars_exact_values_steps_and_walltimes(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(5):
            w.add_scalar("loss", 1.0 / (step + 1), step, walltime=100.0 + step)
        w.add_scalar("t", ember.tensor([[2.5]]), 7)
        w.add_scalar("n", np.float32(0.25), 3)
    acc = _read(tmp_path)
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == [0, 1, 2, 3, 4]
    assert [e.wall_time for e in loss] == [100.0, 101.0, 102.0, 103.0, 104.0]
    assert [e.value for e in loss] == [np.float32(1.0 / (s + 1)) for s in range(5)]
    assert [(e.step, e.value) for e in acc.Scalars("t")] == [(7, 2.5)]
    assert [(e.step, e.value) for e in acc.Scalars("n")] == [(3, 0.25)]


def test_scalar_of_several_elements_is_refused(tmp_path):
    with (
        SummaryWriter(tmp_path) as w,
        pytest.raises(AssertionError, match="Tensor should contain one element"),
    ):
        w.add_scalar("x", ember.ones(2), 0)


def test_add_scalars_writes_one_run_per_series(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalars("run/a", {"x": 1.0, "y": ember.tensor(2.0)}, 4)
        w.add_scalars("run/a", {"x": 3.0}, 5)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["run_a_x", "run_a_y"]
    assert [(e.step, e.value) for e in _read(tmp_path / "run_a_x").Scalars("run/a")] == [(4, 1.0), (5, 3.0)]
    assert [(e.step, e.value) for e in _read(tmp_path / "run_a_y").Scalars("run/a")] == [(4, 2.0)]


def test_histogram_bucket_counts(tmp_path):
    values = ember.tensor([0.5, 1.5, 1.7, 3.2, 3.9, 3.99])
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("h", values, 0, bins=[0.0, 1.0, 2.0, 3.0, 4.0])
        w.add_histogram("wide", values, 1, bins=[-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
        w.add_histogram("default", ember.tensor([1.0, 1.0, -1.0]), 2)
    acc = _read(tmp_path)
    h = acc.Histograms("h")[0].histogram_value
    assert list(h.bucket) == [0, 1, 2, 0, 3]  # one empty bucket before the first populated one
    assert list(h.bucket_limit) == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert (h.min, h.max, h.num) == (0.5, 3.990000009536743, 6)
    assert h.sum == pytest.approx(14.79, abs=1e-5)
    assert h.sum_squares == pytest.approx(sum(v * v for v in values.tolist()))
    wide = acc.Histograms("wide")[0].histogram_value
    assert list(wide.bucket) == [0, 1, 2, 0, 3]  # cut to the populated range
    assert list(wide.bucket_limit) == [0.0, 1.0, 2.0, 3.0, 4.0]
    d = acc.Histograms("default")[0].histogram_value
    assert sum(d.bucket) == 3
    assert d.bucket[0] == 0 and d.bucket[-1] > 0
    assert d.bucket_limit[-1] == pytest.approx(1.0, rel=0.1)  # TensorFlow's edges grow by 10%


def _png(acc: EventAccumulator, tag: str) -> tuple[np.ndarray, object]:
    ev = acc.Images(tag)[0]
    pixels = np.asarray(Image.open(io.BytesIO(ev.encoded_image_string)))
    return pixels, ev


@pytest.mark.parametrize(
    ("fmt", "make"),
    [
        ("CHW", lambda a: a.transpose(2, 0, 1)),
        ("HWC", lambda a: a),
        ("WHC", lambda a: a.transpose(1, 0, 2)),
    ],
)
def test_image_dims_and_png_pixels(tmp_path, fmt, make):
    rgb = (np.arange(2 * 3 * 3).reshape(2, 3, 3) * 9).astype(np.uint8)  # H=2, W=3
    with SummaryWriter(tmp_path) as w:
        w.add_image("img", ember.tensor(make(rgb)), 0, dataformats=fmt)
        w.add_image("float", ember.tensor(make(rgb).astype(np.float32) / 255.0), 0, dataformats=fmt)
    acc = _read(tmp_path)
    pixels, ev = _png(acc, "img")
    assert (ev.height, ev.width) == (2, 3)
    assert np.array_equal(pixels, rgb)
    pixels, _ = _png(acc, "float")
    assert np.abs(pixels.astype(int) - rgb).max() <= 1  # scaled by 255 and truncated


def test_grey_images_and_clipping(tmp_path):
    grey = ember.tensor([[0.0, 0.5], [1.0, 2.0]])  # 2.0 clips to 255
    with SummaryWriter(tmp_path) as w:
        w.add_image("hw", grey, 0, dataformats="HW")
        w.add_image("chw1", grey.unsqueeze(0), 0)
    acc = _read(tmp_path)
    want = np.repeat(np.array([[0, 127], [255, 255]], dtype=np.uint8)[:, :, None], 3, axis=2)
    for tag in ("hw", "chw1"):
        pixels, _ = _png(acc, tag)
        assert np.array_equal(pixels, want)


def test_add_images_tiles_the_batch(tmp_path):
    batch = ember.zeros(10, 3, 2, 2, dtype=ember.uint8)
    batch[9] = 200  # the tenth image: row 2, column 2 of an eight-wide grid
    with SummaryWriter(tmp_path) as w:
        w.add_images("b", batch, 0)
    pixels, ev = _png(_read(tmp_path), "b")
    assert (ev.height, ev.width) == (4, 16)
    assert pixels[2:4, 2:4].min() == 200
    assert pixels.sum() == 200 * 4 * 3


def test_image_format_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="size of input tensor and input format are different"):
            w.add_image("x", ember.zeros(3, 2, 2), 0, dataformats="HW")
        with pytest.raises(AssertionError, match="You can not use the same dimension shorthand twice"):
            w.add_image("x", ember.zeros(3, 2, 2), 0, dataformats="CHH")


def test_text(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("note", "héllo *world*", 3)
    ev = _read(tmp_path).Tensors("note/text_summary")[0]
    assert ev.step == 3
    assert list(ev.tensor_proto.string_val) == ["héllo *world*".encode()]


def test_hparams_plugin_data(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_hparams(
            {"lr": 0.1, "opt": "adam", "layers": 3, "flag": True, "drop": None},
            {"hparam/acc": 0.75},
            hparam_domain_discrete={"opt": ["adam", "sgd"]},
            run_name="trial",
        )
    acc = _read(tmp_path / "trial")
    data = acc.PluginTagToContent(hp_meta.PLUGIN_NAME)
    exp = hp_meta.parse_experiment_plugin_data(data[hp_meta.EXPERIMENT_TAG])
    assert [h.name for h in exp.hparam_infos] == ["lr", "opt", "layers", "flag"]
    assert [v.string_value for v in exp.hparam_infos[1].domain_discrete.values] == ["adam", "sgd"]
    assert [m.name.tag for m in exp.metric_infos] == ["hparam/acc"]
    start = hp_meta.parse_session_start_info_plugin_data(data[hp_meta.SESSION_START_INFO_TAG])
    assert start.hparams["lr"].number_value == 0.1
    assert start.hparams["opt"].string_value == "adam"
    assert start.hparams["layers"].number_value == 3
    assert start.hparams["flag"].number_value == 1.0  # a bool is an int to PyTorch's writer too
    end = hp_meta.parse_session_end_info_plugin_data(data[hp_meta.SESSION_END_INFO_TAG])
    assert end.status == 1  # STATUS_SUCCESS
    assert [e.value for e in acc.Scalars("hparam/acc")] == [0.75]


def test_hparams_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(TypeError, match="^hparam_dict and metric_dict should be dictionary.$"):
            w.add_hparams([("lr", 1)], {})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete\[lr\] should be a list of same type"):
            w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": ["a"]})
        with pytest.raises(
            ValueError, match="^value should be one of int, float, str, bool, or ember.Tensor$"
        ):
            w.add_hparams({"lr": [0.1]}, {})


def test_graph_from_the_trace(tmp_path):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    with SummaryWriter(tmp_path) as w:
        w.add_graph(model, ember.randn(5, 3))
    acc = _read(tmp_path)
    nodes = {n.name: n for n in acc.Graph().node}
    ops = [n.op for n in acc.Graph().node]
    assert ops.count("nn.functional.linear") == 2 and ops.count("nn.functional.relu") == 1
    assert ops.count("prim::GetAttr") == 4 and ops.count("IO Node") == 2
    (out,) = [n for n in nodes.values() if n.name.startswith("output/")]
    last = nodes[out.input[0]]
    assert last.op == "nn.functional.linear"
    assert [d.size for d in last.attr["_output_shapes"].list.shape[0].dim] == [5, 2]
    assert "Sequential/2.weight" in last.input
    assert acc.Tags()["run_metadata"] == ["step1"]


def test_graph_of_an_untraceable_model_says_so(tmp_path, capsys):
    def bad(x: ember.Tensor) -> ember.Tensor:
        raise RuntimeError("no trace")

    with SummaryWriter(tmp_path) as w, pytest.raises(RuntimeError, match="no trace"):
        w.add_graph(bad, ember.ones(1))
    assert "Error occurs, No graph saved" in capsys.readouterr().out


def test_figure(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1), dpi=50)
    with SummaryWriter(tmp_path) as w:
        w.add_figure("fig", fig, 0)
        w.add_figure("figs", [plt.figure(figsize=(2, 1), dpi=50) for _ in range(2)], 1)
    acc = _read(tmp_path)
    _, ev = _png(acc, "fig")
    assert (ev.height, ev.width) == (50, 100)
    _, ev = _png(acc, "figs")
    assert (ev.height, ev.width) == (50, 200)
    assert not plt.get_fignums()  # closed after rendering


def test_default_log_dir_purge_step_flush_and_reopen(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp", filename_suffix=".x")
    logdir = w.get_logdir()
    assert re.fullmatch(
        r"runs/[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_" + re.escape(socket.gethostname()) + "_exp", logdir
    )
    w.add_scalar("a", 1.0, 0)
    w.flush()
    assert [e.value for e in _read(logdir).Scalars("a")] == [1.0]  # on disk before close
    w.close()
    w.close()  # a second close does nothing
    w.add_scalar("a", 2.0, 1)  # reopens: a second file in the same run
    w.close()
    files = os.listdir(logdir)
    assert len(files) == 2 and all(f.startswith("events.out.tfevents.") and f.endswith(".x") for f in files)
    assert [e.value for e in _read(logdir).Scalars("a")] == [1.0, 2.0]
    with SummaryWriter("purged", purge_step=1) as p:
        p.add_scalar("a", 9.0, 1)
    assert [(e.step, e.value) for e in _read("purged").Scalars("a")] == [(1, 9.0)]


_SCRIPT = """
import sys, types
import ember
print('eager' if 'ember.utils.tensorboard' in sys.modules or 'tensorboard' in sys.modules else 'lazy')

class Block:
    def find_spec(self, name, path=None, target=None):
        if name == 'tensorboard':
            raise ModuleNotFoundError("No module named 'tensorboard'", name=name)

sys.meta_path.insert(0, Block())
for setup in ('block', 'old'):
    if setup == 'old':
        sys.meta_path.pop(0)
        sys.modules['tensorboard'] = types.SimpleNamespace(__version__='1.14.0')
    try:
        import ember.utils.tensorboard
    except ImportError as e:
        print(type(e).__name__, e)
del sys.modules['tensorboard']
print(ember.utils.tensorboard.SummaryWriter.__name__)
"""


def test_imported_on_first_access_and_missing_or_old_tensorboard_fails_as_pytorch():
    r = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, check=False)
    assert r.stdout.splitlines() == [
        "lazy",
        "ModuleNotFoundError No module named 'tensorboard'",
        "ImportError TensorBoard logging requires TensorBoard version 1.15 or above",
        "SummaryWriter",
    ], r.stderr
