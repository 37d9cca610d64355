"""The ``ember demo`` command, one epoch (the full run reaches >= 97% test accuracy)."""

from __future__ import annotations

import os

import ember
import pytest

pytest.importorskip("sklearn", reason="the demo needs the optional extra ember[demo]")


def test_demo_one_epoch_saves_and_reloads(tmp_path, capsys) -> None:
    from ember.cli import main

    path = tmp_path / "digits.pt"
    assert main(["demo", "--epochs", "1", "--checkpoint", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\r" not in out  # no progress frames when stdout is not a terminal (tqdm)
    assert "epoch 1/1 loss " in out and "reloaded model test accuracy" in out
    assert f"checkpoint {path}\n" in out and "loaded data in " in out and " s, first step " in out
    assert " s (kernels compile on first use), trained in " in out  # the first step timed apart
    acc = float(out.strip().rsplit(" ", 1)[1])
    assert acc > 0.3
    sd = ember.load(path)
    assert next(iter(sd)) == "0.weight" and tuple(sd["0.weight"].shape) == (16, 1, 3, 3)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_demo_default_checkpoint_is_in_the_user_cache(tmp_path, monkeypatch, capsys) -> None:
    from ember.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert main(["demo", "--epochs", "1"]) == 0
    want = tmp_path / "ember" / "demo" / "digits_cnn.pt"
    assert f"checkpoint {want}\n" in capsys.readouterr().out
    assert want.is_file()


def test_demo_plot_writes_the_curve_and_confusion_matrix(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs the optional extra ember[plot]")
    from ember.cli import main

    png = tmp_path / "curve.png"
    assert main(["demo", "--epochs", "2", "--checkpoint", str(tmp_path / "d.pt"), "--plot", str(png)]) == 0
    assert f"plot {png}\n" in capsys.readouterr().out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
