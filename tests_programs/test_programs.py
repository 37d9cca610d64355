"""Whole PyTorch programs, unchanged, print the same losses under ember as under PyTorch.

Each script in ``programs/`` runs twice through ``programs/run.py``: once with ``torch`` aliased
to ember, once with real PyTorch (the interpreter in ``EMBER_TORCH_PYTHON``, else this one; the
tox env ``programs`` has both). Inputs and initial weights come from NumPy, so the two runs see
the same numbers; every printed line must have the same words, and every number must agree to
float32 training accuracy: rtol 1e-4 plus atol 1e-6 (values print with 8 decimals).
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
RUNNER = PROGRAMS / "run.py"
SCRIPTS = sorted(p.name for p in PROGRAMS.glob("*.py") if p.name != "run.py")
RTOL, ATOL = 1e-4, 1e-6
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")
TORCH_PYTHON = os.environ.get("EMBER_TORCH_PYTHON", sys.executable)


def _start(python: str, framework: str, *scripts: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [python, str(RUNNER), "--framework", framework, *scripts],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=PROGRAMS,
    )


class Run(NamedTuple):
    """One framework's run of every script: each script's printed lines, and stderr."""

    sections: dict[str, list[str]]
    stderr: str


def _finish(proc: subprocess.Popen[str]) -> Run:
    out, err = proc.communicate(timeout=300)
    sections: dict[str, list[str]] = {}
    lines: list[str] = []
    for line in out.splitlines():
        if line.startswith("==> "):
            lines = sections.setdefault(line[4:], [])
        else:
            lines.append(line)
    return Run(sections, err)


@pytest.fixture(scope="session")
def runs() -> dict[str, Run]:
    """Both frameworks run all scripts at once, side by side: imports are paid once each."""
    probe = subprocess.run([TORCH_PYTHON, "-c", "import torch"], check=False, capture_output=True)
    if probe.returncode:
        pytest.skip(f"{TORCH_PYTHON} cannot import torch; set EMBER_TORCH_PYTHON (tox env: programs)")
    ember_run = _start(sys.executable, "ember", *SCRIPTS)
    torch_run = _start(TORCH_PYTHON, "torch", *SCRIPTS)
    return {"ember": _finish(ember_run), "torch": _finish(torch_run)}


def _lines(run: Run, framework: str, script: str) -> list[str]:
    lines = run.sections.get(script)
    assert lines is not None, f"{framework} never reached {script}:\n{run.stderr[-4000:]}"
    failed = [line for line in lines if line.startswith("==! ")]
    assert not failed, f"{framework}: {failed[0]}\n{run.stderr[-4000:]}"
    return lines


def _compare(a: list[str], b: list[str]) -> None:
    assert len(a) == len(b) and a, f"ember printed {len(a)} lines, PyTorch {len(b)}:\n{a}\n---\n{b}"
    for line_a, line_b in zip(a, b):
        assert NUMBER.sub("#", line_a) == NUMBER.sub("#", line_b), f"{line_a!r} != {line_b!r}"
        for x, y in zip(NUMBER.findall(line_a), NUMBER.findall(line_b)):
            assert math.isclose(float(x), float(y), rel_tol=RTOL, abs_tol=ATOL), (
                f"ember {line_a!r} vs PyTorch {line_b!r}"
            )


@pytest.mark.parametrize("script", SCRIPTS)
def test_program_matches_pytorch(script: str, runs: dict[str, Run]) -> None:
    theirs = _lines(runs["torch"], "torch", script)
    ours = _lines(runs["ember"], "ember", script)
    _compare(ours, theirs)


def test_alias_gives_ember_and_never_pytorch(tmp_path: Path) -> None:
    """A run that silently imported the installed PyTorch would make every comparison vacuous."""
    script = tmp_path / "probe.py"
    script.write_text(
        "import sys, torch, torch.nn as nn, torch.optim.lr_scheduler, torch.serialization\n"
        "from torch.utils.data import DataLoader\n"
        "print(torch.__name__, nn.__name__, DataLoader.__module__.split('.')[0])\n"
        "print('torch._C' in sys.modules)\n"
        "try:\n    import torch.no_such_module\nexcept ModuleNotFoundError as e:\n    print(e.name)\n"
    )
    run = _finish(_start(sys.executable, "ember", str(script)))
    assert _lines(run, "ember", str(script)) == ["ember ember.nn ember", "False", "torch.no_such_module"]


def test_every_program_is_collected() -> None:
    assert len(SCRIPTS) >= 4, SCRIPTS
