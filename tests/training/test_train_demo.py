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
    assert "\r" in out and "epoch 1/1" in out and "reloaded model test accuracy" in out
    acc = float(out.strip().rsplit(" ", 1)[1])
    assert acc > 0.3
    sd = ember.load(path)
    assert next(iter(sd)) == "0.weight" and tuple(sd["0.weight"].shape) == (16, 1, 3, 3)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
