"""The ``ember`` command: ``ember info`` through the console script and ``python -m``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def _check_info(out: str) -> None:
    lines = out.splitlines()
    assert lines[0] == "ember 0.1.0; backends found through entry point group 'ember.backends':"
    assert "  cpu 0.1.0 (ember-cpu): available" in lines
    assert "    device cpu:1: " in out and "    device cpu:0: " in out
    assert (
        "    dtypes: bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, "
        "complex64, complex128" in lines
    )


def test_ember_info_console_script():
    exe = shutil.which("ember")
    assert exe is not None, "the ember console script is not installed (pip install -e .)"
    r = _run(exe, "info")
    assert r.returncode == 0, r.stderr
    _check_info(r.stdout)


def test_python_m_ember_cli_info():
    r = _run(sys.executable, "-m", "ember.cli", "info")
    assert r.returncode == 0, r.stderr
    _check_info(r.stdout)


def test_info_json_and_one_backend_in_process(capsys):
    from ember.cli import main

    assert main(["info", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["cpu"]["available"] is True and rows["cpu"]["fallbacks"] == []
    assert "index" in rows["cpu"]["overrides"]
    assert main(["info", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "    primitive fallbacks (no kernel; run on the CPU and copied back): none" in out
    assert (
        "    composite fallbacks (no kernel, no decomposition; run on the CPU and copied back): none" in out
    )
    assert main(["info", "--backend", "nosuch"]) == 2
    assert "no backend named 'nosuch' is installed" in capsys.readouterr().err


def test_ember_alone_prints_help():
    r = _run(sys.executable, "-m", "ember.cli")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: ember [-h] {info,example,conformance,run,demo} ...")
    assert "train a small CNN on scikit-learn's digits" in r.stdout


def test_an_unknown_device_is_one_line_before_any_work():
    r = _run(sys.executable, "-m", "ember.cli", "demo", "--device", "nosuch")
    assert r.returncode == 2 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith("ember: cannot use device 'nosuch': Expected one of cpu")
    assert "device type at start of device string: nosuch (installed backends: cpu" in line


def test_a_shipped_backend_not_installed_says_how_to_install_it(monkeypatch, capsys):
    import ember
    import pytest
    from ember import cli

    if "cuda" in {row["name"] for row in ember.backends.registry.status()}:
        pytest.skip("ember-cuda is installed here: there is nothing to suggest")
    monkeypatch.setenv("EMBER_DEVICE", "cuda")
    assert cli.main(["demo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ember: cannot use device 'cuda': ")
    assert err.rstrip().endswith("; to add it: pip install ./backend_cuda (from a clone of ember)")
