"""The generic properties must catch what values alone cannot: run the suite in certify
mode on each backend of ``broken_properties`` and check it fails naming the op and the
property (every one of these backends returns the right values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ember.backends import ALL_OPS, get
from ember_conformance.properties import WRITES, is_c_contiguous, shares_storage
from test_selftest import run_suite


def _op_rows(data: dict[str, Any], op: str) -> list[dict[str, Any]]:
    return [t for t in data["tests"] if t["test"].startswith(f"test_op[{op}-")]


# plugin object, -k expression, op, the property its message must name, a dtype that must fail
CASES = [
    ("log_softmax_in_place", "log_softmax-float32", "log_softmax", "inputs unchanged"),
    ("clone_returns_input", "clone-float32", "clone", "result shares no storage with inputs"),
    ("cat_one_returns_it", "cat-int64", "cat", "result shares no storage with inputs"),
    ("scatter_into_x", "scatter-float64", "scatter", "inputs unchanged"),
    ("sgd_changes_grad", "sgd_update-float32", "sgd_update", "inputs unchanged"),
    ("clone_keeps_strides", "clone-float64", "clone", "fresh result is C-contiguous"),
    ("reshape_copies_3d", "reshape-float32", "reshape", "view shares storage with its base"),
    ("masked_result", "exp-float32", "exp", "result array type"),
    ("byte_swapped", "neg-float64", "neg", "result dtype"),
]


@pytest.mark.parametrize(("plugin", "select", "op", "prop"), CASES, ids=[c[0] for c in CASES])
def test_a_broken_property_fails_certify(
    tmp_path: Path, plugin: str, select: str, op: str, prop: str
) -> None:
    rc, data, out = run_suite(
        tmp_path, f"broken_{plugin}", "--ember-certify", "-k", select, plugin=f"broken_properties:{plugin}"
    )
    assert rc == 1, out
    (row,) = _op_rows(data, op)
    assert row["status"] == "fail", row
    assert f"{op}: property '{prop}' broken" in row["message"], row["message"]


def test_undeclared_nondeterminism_fails(tmp_path: Path) -> None:
    """Duplicates summed in another order on each call: some dtype's two runs differ."""
    rc, data, out = run_suite(
        tmp_path,
        "broken_scatter_order",
        "--ember-certify",
        "-k",
        "test_op and scatter-",
        plugin="broken_properties:scatter_random_order",
    )
    assert rc == 1, out
    says = "scatter: property 'two runs bit-identical' broken"
    failed = [r for r in _op_rows(data, "scatter") if says in r.get("message", "")]
    assert len(failed) >= 2, [r.get("message") for r in _op_rows(data, "scatter")]
    assert "add-duplicates" in failed[0]["case"]


def test_declared_nondeterminism_is_exempt(tmp_path: Path) -> None:
    _, data, out = run_suite(
        tmp_path,
        "scatter_order_declared",
        "-k",
        "test_op and scatter-",
        plugin="broken_properties:scatter_order_declared",
    )
    rows = _op_rows(data, "scatter")
    assert len(rows) == 12 and all(r["status"] == "pass" for r in rows), out[-3000:]


def test_writes_out_ignoring_a_0d_out_fails(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path,
        "broken_out_0d",
        "--ember-certify",
        "-k",
        "writes_out and (add-float32 or mul-float32)",
        plugin="broken_properties:out_ignored_0d",
    )
    assert rc == 1, out
    rows = {t["test"]: t for t in data["tests"]}
    assert rows["test_writes_out[add-float32]"]["status"] == "fail"
    assert "add into a 0-d out: out holds 7.0" in rows["test_writes_out[add-float32]"]["message"]
    assert rows["test_writes_out[mul-float32]"]["status"] == "pass"


def test_frontend_checks_a_batched_matmul_of_the_wrong_shape(tmp_path: Path) -> None:
    rc, data, out = run_suite(
        tmp_path,
        "broken_bmm",
        "--ember-certify",
        "-k",
        "matmul_batched",
        plugin="broken_properties:bmm_wrong_shape",
    )
    assert rc == 1, out
    row = next(t for t in data["tests"] if t["test"] == "test_gradient_matches_cpu[matmul_batched]")
    assert row["status"] == "fail"
    assert (
        "RuntimeError: matmul (in ember._ops.matmul._core): backend 'broken_bmm' returned shape (6, 2) "
        "and dtype float32, expected shape (2, 3, 2) and dtype float32 (kernel result check)"
    ) in out


def test_writes_names_ops_and_their_array_arguments() -> None:
    for op, written in WRITES.items():
        assert op in ALL_OPS and max(written) < ALL_OPS[op].inputs, op


def test_contiguity_ignores_strides_of_sizes_0_and_1() -> None:
    assert is_c_contiguous((2, 3), (3, 1)) and is_c_contiguous((), ())
    assert is_c_contiguous((2, 1, 3), (3, 99, 1)) and is_c_contiguous((0, 3), (1, 7))
    assert not is_c_contiguous((2, 3), (1, 2)) and not is_c_contiguous((4,), (2,))


def test_shares_storage_on_the_cpu() -> None:
    lb = get("cpu")
    a = np.arange(6.0)
    assert shares_storage(lb, a, a[1:].reshape(1, 5)) and not shares_storage(lb, a, a.copy())
    assert shares_storage(lb, a, np.frombuffer(a.data, dtype=np.float64))  # another root, one buffer
