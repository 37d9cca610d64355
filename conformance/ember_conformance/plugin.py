"""The pytest plugin (entry point ``pytest11``): options, backend loading, outcomes, report.

Registered for every pytest run once installed, so it stays inert unless
``--ember-backend`` is given or the ``ember_conformance`` tests are collected (which then
requires ``--ember-backend``). It is never silently green: a backend that cannot be
loaded, a missing device, a malformed manifest, zero executed tests, or (in certify mode)
a skip or a deselection fails the run with a message saying which.
"""

from __future__ import annotations

from typing import Any

import pytest

from .manifest import ManifestError, load_manifest
from .pool import WorkerPool
from .state import STATE, State

__all__ = ["pytest_addoption", "pytest_configure"]


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("ember-conformance", "ember backend conformance suite")
    g.addoption(
        "--ember-backend", metavar="NAME", help="the backend to test (an ember.backends entry point name)"
    )
    g.addoption("--ember-device", metavar="NAME:INDEX", help="device to run on (default NAME:0)")
    g.addoption("--ember-report", metavar="PATH", help="write PATH.md, PATH.json and PATH.xml (JUnit)")
    g.addoption("--ember-manifest", metavar="FILE", help="the backend's manifest (TOML or JSON)")
    g.addoption("--ember-certify", action="store_true", help="no skips, no known failures, no fallbacks")
    g.addoption(
        "--ember-max-fallbacks",
        type=int,
        default=0,
        metavar="N",
        help="without --ember-certify, a run whose backend runs more than N ops (primitives or "
        "composites) through the CPU fails (default 0)",
    )
    g.addoption(
        "--ember-plugin",
        metavar="MODULE:OBJECT",
        help="register this plugin object under --ember-backend's name first (backends not installed)",
    )
    g.addoption(
        "--ember-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="a case running longer than this is reported as a crash (default 120)",
    )


def _device_index(name: str, spec: str | None, lb: Any) -> int:
    from ember.backends import device

    if spec is None:
        index = 0
    else:
        d = device(spec)
        if d.type != name:
            raise pytest.UsageError(
                f"--ember-device {spec} names backend '{d.type}', but --ember-backend is '{name}'"
            )
        index = d.index or 0
    count = lb.backend.device_count()
    if index >= count:
        raise pytest.UsageError(
            f"ember-conformance: device '{name}:{index}' is missing: backend '{name}' has {count} device(s)"
        )
    return index


def _dtypes(lb: Any, manifest: Any, certify: bool) -> list[str]:
    from ember.backends import ALL_DTYPES

    declared = [d.name for d in ALL_DTYPES if d in lb.backend.dtypes]
    if manifest.dtypes is None:
        return declared
    extra = sorted(set(manifest.dtypes) - set(declared))
    if extra:
        raise pytest.UsageError(
            f"manifest {manifest.path} declares dtypes {extra} that backend "
            f"'{lb.name}' does not (its dtypes: {declared})"
        )
    narrowed = [d for d in declared if d not in manifest.dtypes]
    if certify and narrowed:
        raise pytest.UsageError(
            f"--ember-certify: manifest {manifest.path} leaves out declared dtypes {narrowed}"
        )
    return [d for d in declared if d in manifest.dtypes]


def _max_fallbacks(config: pytest.Config) -> int:
    n = config.getoption("--ember-max-fallbacks")
    if n < 0:
        raise pytest.UsageError(f"--ember-max-fallbacks must be 0 or more, got {n}")
    return int(n)


def pytest_configure(config: pytest.Config) -> None:
    name = config.getoption("--ember-backend", None)
    if not name:
        return
    from .loading import load_backend

    plugin, certify = config.getoption("--ember-plugin"), config.getoption("--ember-certify")
    try:
        lb = load_backend(name, plugin)
    except Exception as e:  # unknown name, broken plugin, contract mismatch, unavailable
        raise pytest.UsageError(
            f"ember-conformance: cannot test backend '{name}': {type(e).__name__}: {e}"
        ) from e
    try:
        manifest = load_manifest(config.getoption("--ember-manifest"))
    except ManifestError as e:
        raise pytest.UsageError(str(e)) from e
    if certify and manifest.known_failures:
        raise pytest.UsageError(
            f"--ember-certify allows no known failures; {manifest.path} lists {len(manifest.known_failures)}"
        )
    index = _device_index(name, config.getoption("--ember-device"), lb)
    pool = WorkerPool(name, index, plugin, config.getoption("--ember-timeout"))
    st = State(
        name,
        plugin,
        index,
        lb,
        manifest,
        certify,
        config.getoption("--ember-report"),
        _dtypes(lb, manifest, certify),
        pool,
        _max_fallbacks(config),
    )
    config.stash[STATE] = st
    config.add_cleanup(pool.close)
    from ember._kernel_check import set_kernel_checks

    set_kernel_checks(True)  # frontend-level tests: every kernel result checked as it is wrapped
    config.add_cleanup(lambda: set_kernel_checks(False))


def _ours(item: pytest.Item) -> bool:
    mod = getattr(item, "module", None)
    return mod is not None and mod.__name__.startswith("ember_conformance.")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Known failures become strict xfails; stale manifest entries fail the run."""
    st = config.stash.get(STATE, None)
    if st is None:
        if any(_ours(i) for i in items):
            raise pytest.UsageError("ember_conformance needs a backend to test: pass --ember-backend NAME")
        return
    names = {i.name for i in items if _ours(i)}
    stale = sorted(set(st.manifest.known_failures) - names)
    if stale:
        st.errors.append(
            f"manifest {st.manifest.path} lists known failures that are not tests of this suite: {stale}"
        )
    for item in items:
        reason = st.manifest.known_failures.get(item.name) if _ours(item) else None
        if reason:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
            st.row(item.nodeid, item.name)["known_failure"] = reason


def pytest_deselected(items: list[pytest.Item]) -> None:
    for item in items:
        st = item.config.stash.get(STATE, None)
        if st is not None and _ours(item):
            st.deselected += 1


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    rep = yield
    st = item.config.stash.get(STATE, None)
    if st is None or not _ours(item):
        return rep
    row = st.row(item.nodeid, item.name)
    row["module"] = item.module.__name__  # type: ignore[attr-defined]
    row["duration"] = row.get("duration", 0.0) + rep.duration
    if rep.when == "call" or rep.outcome != "passed":
        _record(row, rep)
    return rep


def _record(row: dict[str, Any], rep: pytest.TestReport) -> None:
    """The report status of one test from pytest's outcome and what the test body noted."""
    if hasattr(rep, "wasxfail"):
        row["status"] = "xfail" if rep.skipped else "fail"
        row.setdefault("message", rep.wasxfail)
    elif rep.skipped:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        row.update(status="not-run", message=reason.removeprefix("Skipped: "))
    elif rep.failed:
        if "XPASS(strict)" in str(rep.longrepr):
            row.update(
                status="fail", message="unexpected pass of a known failure: remove it from the manifest"
            )
        elif row.get("status") not in ("crash", "fail"):
            row.update(status="fail", message=row.get("message") or _short(rep))
    elif "status" not in row:
        row["status"] = "pass"


def _short(rep: pytest.TestReport) -> str:
    text = rep.longreprtext.strip().splitlines()
    return text[-1] if text else "failed"


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Run-level verdicts (never silently green, certify) and the report files."""
    st = session.config.stash.get(STATE, None)
    if st is None:
        return
    from .report import write_report
    from .verdict import run_level_errors

    st.errors += run_level_errors(st)
    if st.errors and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if st.report:
        write_report(st, st.report, int(session.exitstatus))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    st = config.stash.get(STATE, None)
    if st is None:
        return
    from .report import summary_line

    tr = terminalreporter
    tr.section("ember-conformance")
    for note in st.notes:
        tr.write_line(f"note: {note}")
    for err in st.errors:
        tr.write_line(f"RUN FAILED: {err}", red=True, bold=True)
    failed = bool(st.errors) or int(exitstatus) != 0
    line = summary_line(st, failed)
    # Green only for a clean pass: a pass with fallbacks is yellow, over the limit red.
    if failed:
        tr.write_line(line, red=True, bold=True)
    elif st.fallback_ops():
        tr.write_line(line, yellow=True, bold=True)
    else:
        tr.write_line(line, green=True)
    if st.report:
        tr.write_line(f"report: {st.report}.md, {st.report}.json, {st.report}.xml")


@pytest.fixture
def ember_state(request: pytest.FixtureRequest) -> State:
    """The run's State (backend, dtypes under test, worker pool)."""
    from .state import state_of

    return state_of(request.config)
