"""Turn worker verdicts into a test outcome and a report row (the body of every test)."""

from __future__ import annotations

from typing import Any

import pytest

from .pool import GROUP_CRASH
from .repro import repro_snippet
from .state import State

__all__ = ["check_op", "check_semantic"]


def _worst(cases: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The failing case with the largest absolute error (errors without numbers last)."""
    return max(cases.items(), key=lambda kv: kv[1].get("max_abs") or -1.0)


def _summary(cases: dict[str, dict[str, Any]], limit: int = 6) -> str:
    lines = [
        f"  {cid.split('/', 1)[-1]}: {v['status']}: {v['message'].splitlines()[0] if v['message'] else ''}"
        for cid, v in list(cases.items())[:limit]
    ]
    if len(cases) > limit:
        lines.append(f"  ... and {len(cases) - limit} more")
    return "\n".join(lines)


def check_op(st: State, nodeid: str, name: str, op: str, dtype: str) -> None:
    """Pass, fail, crash or fallback for one (op, dtype) cell of the matrix."""
    row = st.row(nodeid, name)
    row.update(kind="op", op=op, dtype=dtype)
    results = st.pool.run("op", op, st.op_dtypes(op))
    prefix = f"{op}[{dtype}]/"
    mine = {cid: v for cid, v in results.items() if cid.startswith(prefix)}
    if not mine and GROUP_CRASH in results:
        mine = {prefix + "(start)": results[GROUP_CRASH]}
    row["cases"] = len(mine)
    bad = {cid: v for cid, v in mine.items() if v["status"] != "ok"}
    crashed = {cid: v for cid, v in bad.items() if v["status"] == "crash"}
    if crashed or bad:
        worst_id, worst = _worst(crashed or bad)
        row.update(
            status="crash" if crashed else "fail",
            case=worst_id,
            message=worst["message"],
            traceback=worst.get("traceback"),
            worst={k: worst.get(k) for k in ("max_abs", "max_rel", "where")},
        )
        row["repro"] = repro_snippet(st, op, dtype, worst_id.split("/", 1)[1])
        head = f"{op} {dtype}: {len(bad)} of {len(mine)} cases " + (
            "crashed the worker" if crashed else "failed"
        )
        pytest.fail(
            f"{head}\n{_summary(crashed or bad)}\nrepro (also in the report):\n{row['repro']}", pytrace=False
        )
    if not mine:
        row.update(status="fail", message="no case ran for this op and dtype")
        pytest.fail(f"{op} {dtype}: no case ran", pytrace=False)
    if op in st.lb.fallbacks():
        _fallback(st, row, op)


def _fallback(st: State, row: dict[str, Any], op: str) -> None:
    """Values were right, through the CPU fallback: allowed unless certifying or undeclared."""
    row["status"] = "fallback"
    if st.certify:
        pytest.fail(
            f"{op}: no native kernel (runs through the CPU fallback); certify mode allows no fallbacks",
            pytrace=False,
        )
    if st.manifest.path and op not in st.manifest.fallbacks:
        pytest.fail(
            f"{op}: no native kernel, and the manifest {st.manifest.path} does not declare it in "
            "'fallbacks'; implement it or declare it",
            pytrace=False,
        )


def check_semantic(st: State, nodeid: str, name: str, group: str, cid: str) -> None:
    """Pass, fail or crash for one semantic check."""
    row = st.row(nodeid, name)
    row.update(kind="check", group=group, case=cid)
    results = st.pool.run("check", group, st.dtypes)
    v = results.get(cid) or results.get(GROUP_CRASH)
    if v is None:
        row.update(status="fail", message="the check did not run")
        pytest.fail(f"{group}/{cid}: did not run", pytrace=False)
    if v["status"] != "ok":
        row.update(
            status="crash" if v["status"] == "crash" else "fail",
            message=v["message"],
            traceback=v.get("traceback"),
        )
        pytest.fail(f"{group}/{cid}: {v['message']}", pytrace=False)
