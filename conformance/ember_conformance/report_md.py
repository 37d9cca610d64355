"""The Markdown report: summary, op x dtype matrix, composites, checks, failures with repros."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

__all__ = ["markdown"]

_SHORT = {
    "bool": "bool",
    "uint8": "u8",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "f32",
    "float64": "f64",
    "complex64": "c64",
    "complex128": "c128",
}
_CELL = {
    "pass": "ok",
    "fail": "**FAIL**",
    "crash": "**CRASH**",
    "xfail": "xfail",
    "fallback": "fb",
    "unsupported": "uns",
    "not-run": "not-run",
}
_LEGEND = (
    "ok pass · **FAIL** wrong result or raised · **CRASH** killed the worker · xfail known failure "
    "(manifest) · fb right, through the CPU fallback · uns dtype not declared · not-run skipped or "
    "deselected · blank: the op does not take that dtype"
)


def _matrix_table(matrix: dict[str, dict[str, str]]) -> list[str]:
    cols = [d for d in _SHORT if any(d in row for row in matrix.values())]
    out = ["| op | " + " | ".join(_SHORT[d] for d in cols) + " |", "|---|" + "---|" * len(cols)]
    for op, row in matrix.items():
        out.append(f"| {op} | " + " | ".join(_CELL.get(row.get(d, ""), "") for d in cols) + " |")
    return out


def _checks_table(tests: list[dict[str, Any]]) -> list[str]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for t in tests:
        if t.get("kind") != "op":
            counts[t["test"].split("[")[0]][t.get("status", "not-run")] += 1
    out = ["| test | pass | fail | crash | other |", "|---|---|---|---|---|"]
    for name, c in sorted(counts.items()):
        other = sum(v for k, v in c.items() if k not in ("pass", "fail", "crash"))
        out.append(f"| {name} | {c['pass']} | {c['fail']} | {c['crash']} | {other} |")
    return out


def _failure(t: dict[str, Any]) -> list[str]:
    out = [f"### `{t['test']}` — {t['status']}", ""]
    if t.get("case"):
        out.append(f"Worst case: `{t['case']}`")
    out += ["", "```", str(t.get("message", "")).strip(), "```"]
    if t.get("traceback"):
        out += [
            "",
            "<details><summary>traceback</summary>",
            "",
            "```",
            t["traceback"].strip(),
            "```",
            "</details>",
        ]
    w = t.get("worst") or {}
    if w.get("max_abs") is not None:
        rel = w.get("max_rel")
        out.append(
            f"Max abs error {w['max_abs']:.3g}"
            + (f", rel {rel:.3g}" if rel is not None else "")
            + (f" at index {tuple(w['where'])}" if w.get("where") is not None else "")
        )
    if t.get("repro"):
        out += ["", "Repro (paste into Python):", "", "```python", t["repro"], "```"]
    return out + [""]


def _tested_decompositions(r: dict[str, Any]) -> list[str]:
    return [op for op in r.get("composites_decomposed", []) if op in r["matrix"]]


def _inline(r: dict[str, Any]) -> list[str]:
    """Not overridden, decomposed inside the frontend function (no kernel form to test alone)."""
    shown = set(_tested_decompositions(r)) | set(r.get("composite_fallbacks", []))
    return [op for op in r["composites_not_overridden"] if op not in shown]


def markdown(r: dict[str, Any]) -> str:
    """The report as Markdown; ``r`` is ``report.build_report``'s dict."""
    lines = [
        f"# ember conformance: backend `{r['backend']}`",
        "",
        f"**{r.get('verdict', r['result'])}** (exit status {r['exitstatus']}) — "
        + ", ".join(f"{n} {k}" for k, n in r["summary"].items() if n or k in ("pass", "fail")),
        "",
        (
            f"- distribution `{r['distribution']}` {r['version']}, contract {r['contract_version']}, device "
            f"`{r['device']}`"
        ),
        f"- certify: {'yes' if r['certify'] else 'no'}; manifest: {r['manifest'] or 'none'}",
        f"- dtypes tested: {', '.join(r['dtypes_tested'])}",
        f"- primitive fallbacks (no native kernel, run on the CPU): {', '.join(r['fallbacks']) or 'none'}",
        (
            "- composite fallbacks (no kernel and no decomposition, run on the CPU): "
            f"{', '.join(r.get('composite_fallbacks', [])) or 'none'}"
        ),
        "",
    ]
    for e in r["run_errors"]:
        lines.append(f"> **Run failed:** {e}")
    for n in r["notes"]:
        lines.append(f"> Note: {n}")
    lines += ["", "## Op × dtype", "", _LEGEND, ""] + _matrix_table(r["matrix"])
    lines += [
        "",
        "## Composites",
        "",
        f"- overridden by the backend (tested above): {', '.join(r['composites_overridden']) or 'none'}",
        (
            "- decomposed into primitives by the frontend, the decomposition tested above on this "
            f"device: {', '.join(_tested_decompositions(r)) or 'none'}"
        ),
        (
            f"- composite: not overridden (the frontend decomposes them into primitives): "
            f"{', '.join(_inline(r)) or 'none'}"
        ),
        f"- run on the CPU (no kernel, no decomposition): {', '.join(r.get('composite_fallbacks', [])) or 'none'}",
        "",
    ]
    lines += ["## Semantic and contract checks", ""] + _checks_table(r["tests"]) + [""]
    bad = [t for t in r["tests"] if t.get("status") in ("fail", "crash")]
    lines += [f"## Failures ({len(bad)})", ""]
    for t in bad:
        lines += _failure(t)
    xf = [t for t in r["tests"] if t.get("status") == "xfail"]
    if xf:
        lines += ["## Known failures (manifest)", ""] + [
            f"- `{t['test']}`: {t.get('known_failure', '')}" for t in xf
        ]
        lines.append("")
    if r["pending_checks"]:
        lines += ["## Not yet in the suite", ""] + [f"- {p}" for p in r["pending_checks"]]
    return "\n".join(lines) + "\n"
