"""The JUnit XML report (one testcase per test, failures with their message and repro)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

__all__ = ["junit_xml"]


def junit_xml(r: dict[str, Any]) -> str:
    tests = r["tests"]
    failures = sum(1 for t in tests if t.get("status") in ("fail", "crash"))
    skipped = sum(1 for t in tests if t.get("status") in ("not-run", "xfail"))
    suite = ET.Element(
        "testsuite",
        name=f"ember-conformance[{r['backend']}]",
        tests=str(len(tests)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
    )
    props = ET.SubElement(suite, "properties")
    for key in ("backend", "distribution", "version", "device", "result"):
        ET.SubElement(props, "property", name=key, value=str(r[key]))
    for t in tests:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=t.get("module", "ember_conformance"),
            name=t["test"],
            time=f"{t.get('duration', 0.0):.4f}",
        )
        status = t.get("status", "not-run")
        if status in ("fail", "crash"):
            el = ET.SubElement(
                case, "failure", message=f"{status}: {str(t.get('message', ''))[:500]}", type=status
            )
            el.text = str(t.get("message", "")) + ("\n\nrepro:\n" + t["repro"] if t.get("repro") else "")
        elif status in ("not-run", "xfail"):
            ET.SubElement(case, "skipped", message=f"{status}: {t.get('message', '')}")
        elif status == "fallback":
            ET.SubElement(case, "system-out").text = "passed through the CPU fallback (no native kernel)"
    if r["run_errors"]:
        case = ET.SubElement(suite, "testcase", classname="ember_conformance", name="run")
        ET.SubElement(case, "failure", message="; ".join(r["run_errors"]), type="run")
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
