"""pytorch/examples' word_language_model export path (``--onnx-export``), run as plain PyTorch
code with ``import torch`` resolving to ember (programs/run.py's alias): each of its model
families exports, the file passes onnx.checker, and ONNX Runtime reproduces ember's outputs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = Path(__file__).resolve().parent / "programs" / "word_language_model.py"
MODELS = ["LSTM", "GRU", "RNN_TANH", "Transformer"]
# Runs the program as __main__ once per model family in one process (imports paid once), with
# torch aliased to ember: argv[1] programs/, argv[2] the program, argv[3] the output folder.
RUN = """
import runpy, sys
sys.path.insert(0, sys.argv[1])
import run
run.install_alias()
program, out = sys.argv[2], sys.argv[3]
for m in sys.argv[4:]:
    sys.argv = [program, "--model", m, "--onnx-export", f"{out}/{m}.onnx", "--probe", f"{out}/{m}.npz"]
    runpy.run_path(program, run_name="__main__")
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """Every model family exported by the program, its outputs on a probe saved beside."""
    out = tmp_path_factory.mktemp("wlm")
    cmd = [sys.executable, "-c", RUN, str(ROOT / "programs"), str(PROGRAM), str(out), *MODELS]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.split() == [w for m in MODELS for w in ("exported", m)]
    return out


@pytest.mark.parametrize("model", MODELS)
def test_export_runs_in_onnx_runtime(exported: Path, model: str) -> None:
    path = exported / f"{model}.onnx"
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    probe = np.load(exported / f"{model}.npz")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    n_in = sum(k.startswith("in") for k in probe.files)
    assert len(names) == n_in  # tokens, then the flattened hidden state
    got = session.run(None, {name: probe[f"in{i}"] for i, name in enumerate(names)})
    assert len(got) == len(probe.files) - n_in
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, probe[f"out{i}"], rtol=1e-5, atol=1e-5)
    if model != "Transformer":
        ops = {n.op_type for n in onnx.load(str(path)).graph.node}
        assert {"LSTM": "LSTM", "GRU": "GRU"}.get(model, "RNN") in ops
