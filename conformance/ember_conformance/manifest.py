"""The backend's manifest: declared dtypes, declared fallbacks and known failures.

A TOML (or JSON) file kept in the backend's repository::

    dtypes = ["float32", "int64", "bool"]      # optional; default: the backend's dtypes
    fallbacks = ["erf", "linalg_eig"]           # ops knowingly run on the CPU: primitives
                                                # without a kernel, composites without a kernel
                                                # or a decomposition

    [[known_failures]]
    test = "test_op[erf-float16]"               # one test id per entry
    reason = "our erf is a float32 polynomial; float16 rounds differently"

Known failures become strict xfails: a known failure that passes fails the run, so the
file cannot rot. The checks here are about the file itself; what they mean for the run is
decided in ``plugin.py``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ember.backends import ALL_OPS, DTYPES_BY_NAME

__all__ = ["Manifest", "ManifestError", "load_manifest"]

_KEYS = {"dtypes", "fallbacks", "known_failures"}


class ManifestError(ValueError):
    """The manifest file is malformed; the message names the file and the entry."""


@dataclass
class Manifest:
    path: str | None = None
    dtypes: list[str] | None = None
    fallbacks: list[str] = field(default_factory=list)
    known_failures: dict[str, str] = field(default_factory=dict)  # test id -> reason


def _read(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib.loads(text)


def load_manifest(path: str | None) -> Manifest:
    """Parse and validate ``path`` (None gives the empty manifest)."""
    if path is None:
        return Manifest()
    p = Path(path)
    try:
        data = _read(p)
    except (OSError, ValueError) as e:
        raise ManifestError(f"manifest {path}: cannot read it: {e}") from e
    unknown = set(data) - _KEYS
    if unknown:
        raise ManifestError(f"manifest {path}: unknown keys {sorted(unknown)} (allowed: {sorted(_KEYS)})")
    m = Manifest(path=str(p))
    if "dtypes" in data:
        m.dtypes = _names(path, "dtypes", data["dtypes"], DTYPES_BY_NAME)
    m.fallbacks = _names(path, "fallbacks", data.get("fallbacks", []), ALL_OPS)
    for i, entry in enumerate(data.get("known_failures", [])):
        test, reason = entry.get("test"), entry.get("reason")
        if not isinstance(test, str) or not test or not isinstance(reason, str) or not reason.strip():
            raise ManifestError(
                f"manifest {path}: known_failures[{i}] needs a 'test' id and a non-empty 'reason'"
            )
        if test in m.known_failures:
            raise ManifestError(f"manifest {path}: test {test!r} is listed twice in known_failures")
        m.known_failures[test] = reason
    return m


def _names(path: str, key: str, value: Any, allowed: dict[str, Any]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"manifest {path}: '{key}' must be a list of names")
    bad = [v for v in value if v not in allowed]
    if bad:
        raise ManifestError(f"manifest {path}: '{key}' has unknown names {bad}")
    return list(value)
