"""One entry-point group read from the installed distributions, without ``importlib.metadata``.

Importing ``importlib.metadata`` (``email``, ``zipfile``, ``csv``, ...) cost about a tenth of
``import ember`` plus its first op, while the scan itself is a directory listing. So this reads
the ``*.dist-info`` and ``*.egg-info`` directories on ``sys.path`` the way
``importlib.metadata.entry_points`` finds them (path order, the first distribution of a name
wins), on every call: a plugin installed a moment ago is seen. Where the path holds something
only ``importlib.metadata`` reads (a zip or egg file, a meta-path finder of its own
distributions), it asks ``importlib.metadata`` instead.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from typing import Any, NamedTuple

__all__ = ["EntryPoint", "entry_points"]

_INFO = (".dist-info", ".egg-info")
# importlib.metadata's EntryPoint.pattern: module[:attr.path] [extras]
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


class EntryPoint(NamedTuple):
    """An entry point: ``name = value`` in ``group``, of distribution ``dist`` (its name)."""

    name: str
    value: str
    group: str
    dist: str | None

    def load(self) -> Any:
        """Import the module named by ``value`` and return its attribute, as
        ``importlib.metadata.EntryPoint.load`` does."""
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"entry point {self.name!r}: malformed value {self.value!r}")
        module = importlib.import_module(match.group("module"))
        attrs = filter(None, (match.group("attr") or "").split("."))
        return functools.reduce(getattr, attrs, module)


def entry_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group`` of every installed distribution, in
    ``importlib.metadata.entry_points(group=group)``'s order."""
    found = _scan(group)
    return found if found is not None else _from_importlib(group)


def _scan(group: str) -> list[EntryPoint] | None:
    """The directory scan; None where only ``importlib.metadata`` can read the path."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and getattr(finder, "find_distributions", None) is not None:
            return None
    seen: set[str] = set()
    out: list[EntryPoint] = []
    for entry in sys.path:
        root = entry or "."
        if not isinstance(root, str) or root.lower().endswith(".egg") or os.path.isfile(root):
            return None
        try:
            children = os.listdir(root)
        except OSError:
            continue  # not a directory (a path hook's marker, a missing folder): no distributions
        for child in children:
            low = child.lower()
            if not low.endswith(_INFO):
                continue
            key = _normalize(low.rpartition(".")[0].partition("-")[0])
            if key in seen:
                continue  # importlib.metadata keeps the first distribution of a name
            seen.add(key)
            out.extend(_read(os.path.join(root, child), group))
    return out


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _read(info: str, group: str) -> list[EntryPoint]:
    """``group``'s entries in ``info/entry_points.txt`` (an INI file; ``#`` comments)."""
    text = _text(info, "entry_points.txt")
    if not text:
        return []
    eps = []
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section == group:
            name, _, value = line.partition("=")
            eps.append((name.strip(), value.strip()))
    if not eps:
        return []
    dist = _dist_name(info)
    return [EntryPoint(name, value, group, dist) for name, value in eps]


def _dist_name(info: str) -> str | None:
    """The ``Name:`` header of the distribution's metadata."""
    text = _text(info, "METADATA") or _text(info, "PKG-INFO") or ""
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line
        key, _, value = line.partition(":")
        if key.strip().lower() == "name":
            return value.strip()
    return None


def _text(folder: str, name: str) -> str | None:
    try:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def _from_importlib(group: str) -> list[EntryPoint]:
    from importlib import metadata

    return [
        EntryPoint(ep.name, ep.value, group, ep.dist.name if ep.dist is not None else None)
        for ep in metadata.entry_points(group=group)
    ]
