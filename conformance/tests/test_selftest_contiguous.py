"""The contiguous-inputs check must name a kernel of a ``contiguous_only`` backend that gets a
strided array, and pass one whose promise the frontend keeps."""

from __future__ import annotations

from pathlib import Path

from test_selftest import _row, run_suite


def test_strided_array_reaching_a_contiguous_only_kernel_fails(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path, "broken_dense", "-k", "contiguous_inputs", plugin="broken_backends:strided_empty"
    )
    assert rc == 1, out
    row = _row(data, "test_contiguous_inputs[add-transposed-step-float32]")
    assert row["status"] == "fail", row
    assert (
        "contiguous_only backend, yet kernel add (argument 0) received a non-contiguous array"
        in row["message"]
    )
    assert _row(data, "test_contiguous_inputs[matmul-transposed-float32]")["status"] == "fail"


def test_a_contiguous_only_backend_the_frontend_serves_passes(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path, "dense_cpu", "-k", "contiguous_inputs", plugin="broken_backends:contiguous_only"
    )
    assert rc == 0, out
    rows = [t for t in data["tests"] if t["test"].startswith("test_contiguous_inputs[")]
    assert len(rows) == 11 and all(t["status"] == "pass" for t in rows), rows
