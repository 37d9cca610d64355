"""Without a GPU (or without CuPy) the backend loads, reports why, and never breaks ember.

These are the CI checks for a machine with no CUDA driver; on a machine with a GPU the
unavailability assertions do not apply and are skipped (test_gpu.py runs instead).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from ember.backends import DType, UnsupportedDTypeError, registry
from ember_cuda import CUDABackend, runtime
from ember_cuda.dtypes import check

no_gpu = pytest.mark.skipif(runtime.unavailable_reason() is None, reason="a CUDA device is present")


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )


@no_gpu
def test_backend_reports_the_drivers_reason() -> None:
    reason = CUDABackend().unavailable_reason()
    assert reason and ("CUDA" in reason or "cuda" in reason)
    assert CUDABackend().device_count() == 0


@no_gpu
def test_registry_lists_cuda_unavailable_with_the_reason() -> None:
    rows = {r["name"]: r for r in registry.status()}
    assert rows["cuda"]["available"] is False
    assert rows["cuda"]["reason"] == runtime.unavailable_reason()
    with pytest.raises(registry.BackendUnavailableError, match="unavailable: .*CUDA"):
        registry.get("cuda")


@no_gpu
def test_ember_info_lists_cuda_as_unavailable() -> None:
    proc = _run("import sys; from ember.cli import main; sys.exit(main(['info']))")
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.strip().startswith("cuda:"))
    assert "unavailable" in line and "CUDA" in line


def test_import_ember_does_not_touch_cuda() -> None:
    proc = _run("import sys, ember; print('ember_cuda' in sys.modules, 'cupy' in sys.modules)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False"]


def test_without_cupy_the_backend_is_unavailable_not_broken() -> None:
    code = (
        "import sys; sys.modules['cupy'] = None\n"
        "import ember\n"
        "from ember.backends import registry\n"
        "row = {r['name']: r for r in registry.status()}['cuda']\n"
        "print(row['available']); print(row['reason'])\n"
    )
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr
    available, reason = proc.stdout.splitlines()[:2]
    assert available == "False"
    assert reason.startswith("CuPy could not be imported")


def test_undeclared_dtype_names_backend_and_dtype() -> None:
    uint32 = DType("uint32", 4, 1, False)
    with pytest.raises(UnsupportedDTypeError, match=r"backend 'cuda' has no uint32 support"):
        check(uint32)


def test_declares_every_ember_dtype() -> None:
    from ember.backends import ALL_DTYPES

    assert CUDABackend.dtypes == frozenset(ALL_DTYPES)
    assert CUDABackend.nondeterministic == frozenset()
