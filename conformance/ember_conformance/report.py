"""The report: ``PATH.json`` (everything), ``PATH.md`` (for people), ``PATH.xml`` (JUnit)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ember.backends import ALL_OPS, COMPOSITES

from .catalog import CASES
from .dtypes import ALL
from .report_md import markdown
from .report_xml import junit_xml
from .state import State
from .todo_autograd_nn import PENDING
from .verdict import fallback_errors

__all__ = ["STATUSES", "build_report", "summary_line", "write_report"]

STATUSES = ("pass", "fail", "crash", "xfail", "fallback", "unsupported", "not-run")


def _matrix(st: State) -> dict[str, dict[str, str]]:
    """op -> dtype -> status; '' where the op's semantics do not admit the dtype."""
    cells = {
        (r["op"], r["dtype"]): r.get("status", "not-run") for r in st.rows.values() if r.get("kind") == "op"
    }
    out: dict[str, dict[str, str]] = {}
    for op in ALL_OPS:
        if op in COMPOSITES and st.lb.kernel(op) is None:
            continue
        row = {}
        tested = st.op_dtypes(op)
        for d in ALL:
            if d not in CASES[op].dtypes:
                continue
            row[d] = cells.get((op, d), "not-run" if d in tested else "unsupported")
        out[op] = row
    return out


def _counts(st: State, matrix: dict[str, dict[str, str]]) -> dict[str, int]:
    c = Counter(r.get("status", "not-run") for r in st.rows.values())
    c["unsupported"] = sum(1 for row in matrix.values() for s in row.values() if s == "unsupported")
    return {s: c.get(s, 0) for s in STATUSES}


def verdict_word(st: State, failed: bool) -> str:
    """FAILED when a test failed or certify refused; else PASSED, saying how many ops ran on
    the CPU if any (a run over ``--ember-max-fallbacks`` still exits non-zero)."""
    c = Counter(r.get("status") for r in st.rows.values())
    only_fallbacks = set(st.errors) <= set(fallback_errors(st))
    if (failed and st.certify) or c["fail"] or c["crash"] or not only_fallbacks:
        return "FAILED"
    fb = st.fallback_ops()
    if fb:
        return f"PASSED with {len(fb)} fallback{'s' if len(fb) != 1 else ''}"
    return "FAILED" if failed else "PASSED"


def summary_line(st: State, failed: bool) -> str:
    c = _counts(st, _matrix(st))
    parts = ", ".join(f"{c[s]} {s}" for s in STATUSES if c[s] or s in ("pass", "fail"))
    mode = " (certify)" if st.certify else ""
    fb = st.fallback_ops()
    tail = f"; run on the CPU: {', '.join(fb)}" if fb else ""
    return (
        f"ember-conformance{mode}: backend '{st.name}' on {st.name}:{st.index}: "
        f"{verdict_word(st, failed)} — {parts}{tail}"
    )


def build_report(st: State, exitstatus: int) -> dict[str, Any]:
    be = st.lb.backend
    matrix = _matrix(st)
    failed = exitstatus != 0 or bool(st.errors)
    return {
        "backend": st.name,
        "distribution": st.lb.dist,
        "version": getattr(be, "version", "?"),
        "contract_version": getattr(be, "contract_version", "?"),
        "device": f"{st.name}:{st.index}",
        "certify": st.certify,
        "manifest": st.manifest.path,
        "dtypes_declared": [d for d in ALL if d in {x.name for x in be.dtypes}],
        "dtypes_tested": st.dtypes,
        "result": "FAILED" if failed else "PASSED",
        "verdict": verdict_word(st, failed),
        "exitstatus": exitstatus,
        "summary": _counts(st, matrix),
        "summary_line": summary_line(st, failed),
        "run_errors": st.errors,
        "notes": st.notes,
        "matrix": matrix,
        "fallbacks": st.lb.fallbacks(),
        "composite_fallbacks": st.lb.composite_fallbacks(),
        "fallback_count": len(st.fallback_ops()),
        "max_fallbacks": None if st.certify else st.max_fallbacks,
        "composites_overridden": st.lb.overridden_composites(),
        "composites_decomposed": st.lb.decomposed_composites(),
        "composites_not_overridden": [op for op in COMPOSITES if st.lb.k[op] is None],
        "tests": sorted(st.rows.values(), key=lambda r: r["test"]),
        "pending_checks": PENDING,
    }


def write_report(st: State, path: str, exitstatus: int) -> None:
    """Write PATH.json, PATH.md and PATH.xml (creating PATH's folder)."""
    data = build_report(st, exitstatus)
    base = Path(path)
    base.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{path}.json").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    Path(f"{path}.md").write_text(markdown(data), encoding="utf-8")
    Path(f"{path}.xml").write_text(junit_xml(data), encoding="utf-8")
