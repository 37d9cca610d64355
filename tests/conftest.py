"""Shared fixtures: in-process backends that exercise the frontend's own code paths.

``cpu_prims`` reuses the CPU backend but registers only the primitive kernels, so every
composite (``index``, ``index_put``, ``nonzero``, ``amin``, ``round``, ...) runs through
the frontend's decomposition instead of the CPU backend's NumPy shortcut.

``--ember-test-backend`` (or ``EMBER_TEST_BACKEND``) ``contig|prims|lacking`` runs the whole session on one of the
capability-limited backends of ``fixtures/limited_backends.py`` (the default device for every
test; fallback policy ``silent`` for ``lacking``), so each dispatch branch runs under the
frontend's tests (tox env ``frontend-limited``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

import ember
import pytest
from ember.backends import PRIMITIVES
from ember_cpu.kernels import KERNELS
from fixtures.limited_backends import register, register_limited

TEST_BACKEND = os.environ.get("EMBER_TEST_BACKEND", "")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--ember-test-backend",
        default=TEST_BACKEND,
        choices=("", "contig", "prims", "lacking"),
        help="run on a capability-limited backend (default: $EMBER_TEST_BACKEND, else cpu)",
    )


def pytest_configure(config: pytest.Config) -> None:
    global TEST_BACKEND
    config.addinivalue_line(
        "markers", "cpu_only: tests of the cpu backend itself, left out of limited-backend runs"
    )
    TEST_BACKEND = config.getoption("--ember-test-backend", default=TEST_BACKEND) or ""
    if TEST_BACKEND:
        ember.set_default_device(register_limited(TEST_BACKEND))
        if TEST_BACKEND == "lacking":
            ember.backends.set_fallback_policy("silent")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``EMBER_TEST_BACKEND``, leave out the tests marked ``cpu_only`` (deselected, not skipped)."""
    if not TEST_BACKEND:
        return
    cpu_only = [item for item in items if item.get_closest_marker("cpu_only")]
    if cpu_only:
        config.hook.pytest_deselected(items=cpu_only)
        items[:] = [item for item in items if not item.get_closest_marker("cpu_only")]


def pytest_report_header(config: pytest.Config) -> str | None:
    return f"ember test backend: {TEST_BACKEND}" if TEST_BACKEND else None


def _register(name: str, ops: dict[str, Callable[..., Any]]) -> str:
    return register(name, ops)


@pytest.fixture(scope="session")
def cpu_prims() -> str:
    """Device name of a CPU backend with primitive kernels only (composites decompose)."""
    return _register("cpu_prims", {op: fn for op, fn in KERNELS.items() if op in PRIMITIVES})


@pytest.fixture
def backend_without() -> Callable[[str], str]:
    """Factory: a CPU-like backend lacking one primitive; unregistered after the test."""
    names: list[str] = []

    def make(op: str) -> str:
        name = f"cpu_no_{op}"
        names.append(name)
        return _register(name, {k: fn for k, fn in KERNELS.items() if k in PRIMITIVES and k != op})

    yield make
    for name in names:
        ember.backends.unregister(name)


@pytest.fixture
def fallback_policy() -> Callable[[str], None]:
    """Set the fallback policy for one test, restoring the previous one afterwards."""
    old = ember.backends.get_fallback_policy()
    yield ember.backends.set_fallback_policy
    ember.backends.set_fallback_policy(old)


@pytest.fixture(autouse=True)
def _restore_global_state() -> None:
    dtype, device = ember.get_default_dtype(), ember.get_default_device()
    with warnings.catch_warnings():
        yield
    ember.set_default_dtype(dtype)
    ember.set_default_device(device)
