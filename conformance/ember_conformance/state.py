"""The run's state, kept in ``config.stash``: the backend under test, what to test, results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ember  # noqa: F401 - importing the frontend declares its decompositions to the registry
import pytest
from ember.backends import ALL_OPS, COMPOSITES, LoadedBackend

from .catalog import CASES
from .checks import Ctx
from .groups import check_ids
from .harness import result_dtypes
from .manifest import Manifest
from .pool import WorkerPool

__all__ = ["STATE", "State", "state_of"]


@dataclass
class State:
    name: str
    plugin: str | None
    index: int
    lb: LoadedBackend
    manifest: Manifest
    certify: bool
    report: str | None
    dtypes: list[str]  # dtypes under test: the manifest's, or every one the backend declares
    pool: WorkerPool
    max_fallbacks: int = 0  # more ops than this through the CPU fails a run (not certify)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # nodeid -> report row
    errors: list[str] = field(default_factory=list)  # reasons the whole run fails
    notes: list[str] = field(default_factory=list)
    deselected: int = 0

    def op_dtypes(self, op: str) -> list[str]:
        """The dtypes ``op`` is tested in: its record's, narrowed to those under test whose
        results are under test too (``complex`` of float32 parts gives complex64)."""
        r = CASES[op]
        return [d for d in r.dtypes if d in self.dtypes and set(result_dtypes(r, d)) <= set(self.dtypes)]

    def op_params(self) -> list[tuple[str, str]]:
        """(op, dtype) pairs for ``test_op``: composites where the backend overrides them or the
        frontend's decomposition has a kernel form (then the decomposition is what is tested)."""
        return [
            (op, d)
            for op in ALL_OPS
            if not (op in COMPOSITES and self.lb.kernel(op) is None)
            for d in self.op_dtypes(op)
        ]

    def fallback_ops(self) -> list[str]:
        """Every op the backend runs through the CPU: primitives, then composites."""
        return self.lb.fallbacks() + self.lb.composite_fallbacks()

    def check_params(self, group: str) -> list[str]:
        return check_ids(Ctx(self.lb, self.dtypes, self.index), group)

    def row(self, nodeid: str, name: str) -> dict[str, Any]:
        return self.rows.setdefault(nodeid, {"test": name})


STATE = pytest.StashKey[State]()


def state_of(config: pytest.Config) -> State:
    """The run's State; a usage error when the suite runs without ``--ember-backend``."""
    st = config.stash.get(STATE, None)
    if st is None:
        raise pytest.UsageError(
            "ember_conformance needs a backend to test: pass --ember-backend NAME "
            "(see `pytest --help`, section ember-conformance)"
        )
    return st
