"""The wheel holds every subpackage: a folder under core/ missing from pyproject's package list
imports in an editable checkout and fails after the README's `pip install .`."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_of_core_is_listed_in_pyproject() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^packages = \[(.*?)\]", text, re.DOTALL | re.MULTILINE)
    assert block is not None
    listed = set(re.findall(r'"([\w.]+)"', block.group(1)))
    found = {"ember"} | {
        "ember." + ".".join(p.parent.relative_to(ROOT / "core").parts)
        for p in (ROOT / "core").rglob("*.py")
        if "__pycache__" not in p.parts and p.parent != ROOT / "core"
    }
    found |= {"ember.backends"}
    assert sorted(found - listed) == []
    assert sorted(listed - found) == []
