"""The samples must reach the edges: each backend in ``broken_samples`` is right on tame
inputs and wrong at one edge, and certify mode must fail it, naming the op and the sample."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_selftest import run_suite

# plugin attribute, backend name, -k expression, op, a dtype it must fail, the worst failing
# sample's label (alternatives separated by |)
BROKEN = [
    ("exp_offset", "broken_exp_offset", "exp-float32", "exp", "float32", "strided"),
    ("add_big", "broken_add_big", "add-float32", "add", "float32", "large"),
    ("cast_int64_via_int32", "broken_cast_i64", "cast-float64", "cast", "float64", "to_int64"),
    ("cast_bf16_truncate", "broken_cast_bf16", "cast-float32", "cast", "float32", "to_bfloat16"),
    ("int8_saturates", "broken_int8_add", "add-int8", "add", "int8", "limits"),
    ("abs_negative_zero", "broken_abs_zero", "abs-float32", "abs", "float32", "special"),
    ("sort_nan_first", "broken_sort_nan", "sort-float32", "sort", "float32", "nan|limits"),
    ("conv_batch0", "broken_conv_batch0", "conv2d-float32", "conv2d", "float32", "batch-0"),
    ("scatter_0d", "broken_scatter_0d", "scatter-float32", "scatter", "float32", "0-d"),
    (
        "index_put_dups_once",
        "broken_index_put_acc",
        "index_put-float32",
        "index_put",
        "float32",
        "accumulate",
    ),
    ("adam_no_max", "broken_adam_amsgrad", "adam_update-float32", "adam_update", "float32", "amsgrad"),
    (
        "softmax_half",
        "broken_softmax_half",
        "softmax-float16 and not log_softmax",
        "softmax",
        "float16",
        "long-row",
    ),
]


@pytest.mark.parametrize(("attr", "backend", "k", "op", "dtype", "label"), BROKEN, ids=[b[0] for b in BROKEN])
def test_edge_sample_finds_the_broken_kernel(
    tmp_path: Path, attr: str, backend: str, k: str, op: str, dtype: str, label: str
) -> None:
    rc, data, out = run_suite(tmp_path, backend, "--ember-certify", "-k", k, plugin=f"broken_samples:{attr}")
    assert rc == 1, out
    assert data["matrix"][op][dtype] in ("fail", "crash"), data["matrix"].get(op)
    row = next(t for t in data["tests"] if t["test"] == f"test_op[{op}-{dtype}]")
    assert row["case"].startswith(f"{op}[{dtype}]/"), row
    assert any(part in row["case"].split("/", 1)[1] for part in label.split("|")), row["case"]
    assert f"{op} {dtype}:" in out
