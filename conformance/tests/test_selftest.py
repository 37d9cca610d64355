"""The suite must be able to fail: run it on deliberately broken backends and check it
reports each breakage with the right status (and that a good backend passes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
MINIMAL = HERE.parent.parent / "examples" / "minimal_backend"


def run_suite(
    tmp_path: Path, backend: str, *extra: str, plugin: str | None = None
) -> tuple[int, dict[str, Any], str]:
    """``pytest --pyargs ember_conformance`` in a subprocess; (exit code, report JSON, output)."""
    report = tmp_path / "report"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "--pyargs",
        "ember_conformance",
        "-p",
        "no:cacheprovider",
        "-q",
        "--ember-backend",
        backend,
        "--ember-report",
        str(report),
        *extra,
    ]
    if plugin:
        cmd += ["--ember-plugin", plugin]
    path = os.pathsep.join([str(HERE), str(_minimal_package()), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.run(
        cmd,
        cwd=tmp_path,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, PYTHONPATH=path),
    )
    out = proc.stdout + proc.stderr
    data = json.loads((tmp_path / "report.json").read_text()) if (tmp_path / "report.json").exists() else {}
    return proc.returncode, data, out


def _minimal_package() -> Path:
    """A folder holding a copy of the minimal example's package and nothing else: the example's
    own folder gains an ``ember_minimal.egg-info`` whenever another tox env installs it, which
    (mid-run, with envs in parallel) registered the backend a second time in the suite."""
    global _MINIMAL_COPY
    if _MINIMAL_COPY is None:
        _MINIMAL_COPY = Path(tempfile.mkdtemp(prefix="ember-minimal-"))
        shutil.copytree(MINIMAL / "ember_minimal", _MINIMAL_COPY / "ember_minimal")
    return _MINIMAL_COPY


_MINIMAL_COPY: Path | None = None


def _row(data: dict[str, Any], test: str) -> dict[str, Any]:
    return next(t for t in data["tests"] if t["test"] == test)


def test_wrong_value_is_a_failure_with_worst_error_and_repro(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path,
        "broken_value",
        "-k",
        "add-float32 or add-float64 or sub-float32",
        plugin="broken_backends:wrong_value",
    )
    assert rc == 1, out
    m = data["matrix"]
    assert (m["add"]["float32"], m["add"]["float64"], m["sub"]["float32"]) == ("fail", "pass", "pass")
    row = _row(data, "test_op[add-float32]")
    assert row["worst"]["max_abs"] == pytest.approx(1.0)
    assert "lb.k['add'](" in row["repro"] and "reference_of" in row["repro"]
    md = (tmp_path / "report.md").read_text()
    assert "| add |" in md and "**FAIL**" in md and "```python" in md
    assert 'failures="1"' in (tmp_path / "report.xml").read_text()


def test_repro_snippet_runs(tmp_path: Path) -> None:
    _, data, _ = run_suite(
        tmp_path, "broken_value", "-k", "add-float32", plugin="broken_backends:wrong_value"
    )
    repro = _row(data, "test_op[add-float32]")["repro"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-c", repro], check=False, capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "got" in proc.stdout and "want" in proc.stdout


def test_view_that_copies_fails_aliasing(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path,
        "broken_view",
        "-k",
        "view_aliasing or permute-float32",
        plugin="broken_backends:view_copies",
    )
    assert rc == 1, out
    assert _row(data, "test_view_aliasing[permute-write-float32]")["status"] == "fail"
    assert _row(data, "test_view_aliasing[permute-read-float32]")["status"] == "fail"
    assert _row(data, "test_view_aliasing[reshape-write-float32]")["status"] == "pass"
    # The values alone look right; the op's own cases check every call's aliasing (properties.py).
    msg = _row(data, "test_op[permute-float32]")["message"]
    assert "permute: property 'view shares storage with its base' broken" in msg


def test_wrong_dtype_is_a_failure(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path, "broken_dtype", "-k", "sum-float32 or sum-float64", plugin="broken_backends:wrong_dtype"
    )
    assert rc == 1, out
    assert data["matrix"]["sum"]["float32"] == "fail" and data["matrix"]["sum"]["float64"] == "pass"
    assert "returned dtype float64, expected float32" in _row(data, "test_op[sum-float32]")["message"]


def test_a_writes_out_kernel_that_ignores_out_fails(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path, "broken_out", "-k", "writes_out", plugin="broken_backends:out_ignored"
    )
    assert rc == 1, out
    row = _row(data, "test_writes_out[mul-float32]")
    assert row["status"] == "fail" and "mul into a fresh out" in row["message"]
    assert _row(data, "test_writes_out[add-float32]")["status"] == "pass"
    assert _row(data, "test_writes_out[marked-kernels-are-binary]")["status"] == "pass"


def test_a_scalar_instead_of_an_array_fails(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path, "broken_scalar", "-k", "exp-float32", plugin="broken_backends:scalar_result"
    )
    assert rc == 1, out
    msg = _row(data, "test_op[exp-float32]")["message"]
    assert "returned a numpy.float32, not the backend's array type numpy.ndarray" in msg


def test_crash_is_isolated_and_reported(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path,
        "broken_crash",
        "-k",
        "test_op and (exp- or neg- or add-)",
        plugin="broken_backends:crash_on_empty",
    )
    assert rc == 1, out
    m = data["matrix"]
    assert m["exp"]["float32"] == "crash" and m["neg"]["float32"] == "crash"
    assert m["add"]["float32"] == "pass"  # the run went on after the crashes
    assert "exit code 3" in _row(data, "test_op[exp-float32]")["message"]
    assert "SIGSEGV" in _row(data, "test_op[neg-float32]")["message"]


def test_hang_is_a_crash_after_the_timeout(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path,
        "broken_hang",
        "-k",
        "exp-float32 or exp-float64",
        "--ember-timeout",
        "3",
        plugin="broken_backends:hangs",
    )
    assert rc == 1, out
    assert data["matrix"]["exp"]["float32"] == "crash" and data["matrix"]["exp"]["float64"] == "crash"
    assert "killed after the timeout" in _row(data, "test_op[exp-float32]")["message"]


def test_malformed_manifest_is_a_usage_error(tmp_path: Path) -> None:
    manifest = tmp_path / "m.toml"
    manifest.write_text('fallbacks = ["not_an_op"]\n')
    rc, _, out = run_suite(tmp_path, "cpu", "--ember-manifest", str(manifest))
    assert rc != 0 and "unknown names ['not_an_op']" in out


def test_cli_main_runs_the_suite(tmp_path: Path) -> None:
    code = (
        "import sys; from ember_conformance.cli import main; "
        "sys.exit(main(['--backend', 'no_such_backend', '--report', 'r']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], check=False, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode != 0 and "no_such_backend" in proc.stdout + proc.stderr
    from ember_conformance.cli import _parser, build_pytest_args

    args = build_pytest_args(
        _parser().parse_args(["--backend", "x", "--certify", "--manifest", "m.toml", "--", "-x"])
    )
    assert args[:4] == ["--pyargs", "ember_conformance", "--ember-backend", "x"]
    assert "--ember-certify" in args and args[-1] == "-x" and "m.toml" in args
    args = build_pytest_args(_parser().parse_args(["--backend", "x", "--max-fallbacks", "3"]))
    assert args[args.index("--ember-max-fallbacks") + 1] == "3"


def test_missing_kernel_is_fallback_not_failure_but_the_run_is_not_green(tmp_path: Path) -> None:
    args = ("-k", "test_op and (tanh- or erf-)")
    rc, data, out = run_suite(tmp_path, "broken_missing", *args, plugin="broken_backends:missing_kernels")
    assert rc == 1, out  # two fallbacks, more than the default --ember-max-fallbacks 0
    assert data["matrix"]["tanh"]["float32"] == "fallback" and data["fallbacks"] == ["tanh", "erf"]
    assert "PASSED with 2 fallbacks" in out and "run on the CPU: tanh, erf" in out
    assert "2 ops run through the CPU fallback, more than --ember-max-fallbacks 0 allows" in out
    assert data["verdict"] == "PASSED with 2 fallbacks" and data["result"] == "FAILED"
    rc, data, out = run_suite(
        tmp_path,
        "broken_missing",
        *args,
        "--ember-max-fallbacks",
        "2",
        plugin="broken_backends:missing_kernels",
    )
    assert rc == 0, out
    assert "PASSED with 2 fallbacks" in out and data["fallback_count"] == 2


def test_backend_with_only_views_and_assign_is_not_green(tmp_path: Path) -> None:
    """No compute kernel at all: every test passes through the CPU, and the run says so."""
    args = ("-k", "test_op and (add-float32 or exp-float32 or erfc-float32 or softmax)")
    rc, data, out = run_suite(tmp_path, "broken_views_only", *args, plugin="broken_backends:views_only")
    assert rc == 1, out
    n = len(data["fallbacks"])
    assert n == 39 and data["composite_fallbacks"] == [], data["fallbacks"]
    assert f"PASSED with {n} fallbacks" in out, out[-2000:]
    assert "run on the CPU: full, arange, philox, cast, neg" in out
    assert data["matrix"]["add"]["float32"] == "fallback" and data["matrix"]["erfc"]["float32"] == "pass"
    rc, data, out = run_suite(
        tmp_path,
        "broken_views_only",
        *args,
        "--ember-max-fallbacks",
        "1000",
        plugin="broken_backends:views_only",
    )
    assert rc == 0, out
    assert f"PASSED with {n} fallbacks" in out


def test_certify_names_a_composite_without_kernel_or_decomposition(tmp_path: Path) -> None:
    args = ("-k", "test_composite_runs_on_the_device")
    rc, data, out = run_suite(
        tmp_path, "broken_no_eig", *args, "--ember-certify", plugin="broken_backends:no_eig"
    )
    assert rc == 1, out
    assert "composites without a kernel or a decomposition run on the CPU: ['linalg_eig']" in out
    row = _row(data, "test_composite_runs_on_the_device[linalg_eig]")
    assert row["status"] == "fail" and "certify mode allows no fallbacks" in row["message"]
    assert _row(data, "test_composite_runs_on_the_device[linalg_svd]")["status"] == "pass"
    assert data["composite_fallbacks"] == ["linalg_eig"]
    # Without certify: a declared composite fallback is allowed under --ember-max-fallbacks.
    manifest = tmp_path / "m.toml"
    manifest.write_text('fallbacks = ["linalg_eig"]\n')
    rc, data, out = run_suite(
        tmp_path,
        "broken_no_eig",
        *args,
        "--ember-manifest",
        str(manifest),
        "--ember-max-fallbacks",
        "1",
        plugin="broken_backends:no_eig",
    )
    assert rc == 0, out
    assert "PASSED with 1 fallback " in out and "run on the CPU: linalg_eig" in out
    assert _row(data, "test_composite_runs_on_the_device[linalg_eig]")["status"] == "fallback"


def test_fallback_fails_certify_and_undeclared_fallback_fails_manifest(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path,
        "broken_missing",
        "-k",
        "tanh-float32",
        "--ember-certify",
        plugin="broken_backends:missing_kernels",
    )
    assert rc == 1, out
    assert "certify" in _row(data, "test_op[tanh-float32]")["message"] or "certify" in out
    manifest = tmp_path / "m.toml"
    manifest.write_text('fallbacks = ["tanh"]\n')
    rc, data, out = run_suite(
        tmp_path,
        "broken_missing",
        "-k",
        "tanh-float32 or erf-float32",
        "--ember-manifest",
        str(manifest),
        plugin="broken_backends:missing_kernels",
    )
    assert rc == 1, out
    assert data["matrix"]["tanh"]["float32"] == "fallback" and data["matrix"]["erf"]["float32"] == "fail"


def test_known_failure_is_xfail_and_unexpected_pass_fails(tmp_path: Path) -> None:
    manifest = tmp_path / "m.toml"
    manifest.write_text('[[known_failures]]\ntest = "test_op[add-float32]"\nreason = "off by one"\n')
    args = ("-k", "add-float32 or add-float64", "--ember-manifest", str(manifest))
    rc, data, out = run_suite(tmp_path, "broken_value", *args, plugin="broken_backends:wrong_value")
    assert rc == 0, out
    assert data["matrix"]["add"]["float32"] == "xfail"
    manifest.write_text('[[known_failures]]\ntest = "test_op[add-float64]"\nreason = "claims a bug"\n')
    rc, data, out = run_suite(
        tmp_path,
        "broken_value",
        "-k",
        "add-float64",
        "--ember-manifest",
        str(manifest),
        plugin="broken_backends:wrong_value",
    )
    assert rc == 1, out
    assert "unexpected pass" in _row(data, "test_op[add-float64]")["message"]


def test_index_error_must_be_raised(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path, "broken_index", "-k", "index_error", plugin="broken_backends:no_index_error"
    )
    assert rc == 1, out
    assert _row(data, "test_index_error[gather-too-large]")["status"] == "fail"
    assert _row(data, "test_index_error[scatter-too-large]")["status"] == "pass"


def test_undeclared_dtype_must_be_refused(tmp_path: Path) -> None:
    rc, data, out = run_suite(tmp_path, "broken_lax", "-k", "undeclared", plugin="broken_backends:lax_dtypes")
    assert rc == 1, out
    assert _row(data, "test_undeclared_dtype[bfloat16]")["status"] == "fail"


@pytest.mark.parametrize(
    ("backend", "extra", "plugin", "says"),
    [
        ("no_such_backend", (), None, "Unknown device type 'no_such_backend'"),
        ("broken_unavailable", (), "broken_backends:unavailable", "no such hardware"),
        ("broken_x", (), "no_such_module:plugin", "No module named 'no_such_module'"),
        ("cpu", ("--ember-device", "cpu:7"), None, "device 'cpu:7' is missing"),
        ("cpu", ("-k", "matches_nothing_at_all"), None, "no conformance test ran"),
        ("cpu", ("--ember-max-fallbacks", "-1"), None, "--ember-max-fallbacks must be 0 or more, got -1"),
    ],
)
def test_never_silently_green(
    tmp_path: Path, backend: str, extra: tuple[str, ...], plugin: str | None, says: str
) -> None:
    rc, _, out = run_suite(tmp_path, backend, *extra, plugin=plugin)
    assert rc != 0, out
    assert says in out


def test_minimal_backend_passes_certify(tmp_path: Path) -> None:
    from importlib.metadata import distributions

    # Discovered the way the suite's subprocess will see it: installed in this environment, or
    # else registered from the copy of its package on the subprocess's path.
    dists = distributions(path=[str(HERE), str(_minimal_package()), *sys.path])
    installed = any(
        ep.group == "ember.backends" and ep.name == "minimal" for d in dists for ep in d.entry_points
    )
    rc, data, out = run_suite(
        tmp_path,
        "minimal",
        "--ember-certify",
        "--ember-manifest",
        str(MINIMAL / "conformance.toml"),
        plugin=None if installed else "ember_minimal:plugin",
    )
    assert rc == 0, out[-3000:]
    assert data["summary"]["fail"] == 0 and data["summary"]["crash"] == 0 and data["fallbacks"] == []
    assert data["composite_fallbacks"] == [] and data["verdict"] == "PASSED"
    md = (tmp_path / "report.md").read_text()
    assert "composite: not overridden" in md
    # The decompositions ran on the minimal device, cell by cell, and passed.
    assert data["matrix"]["linalg_eig"]["float64"] == "pass" and data["matrix"]["erfinv"]["float32"] == "pass"
