"""Run-level verdicts: the reasons a run fails even when every executed test passed."""

from __future__ import annotations

from .state import State

__all__ = ["EXECUTED", "fallback_errors", "run_level_errors"]

EXECUTED = ("pass", "fail", "crash", "xfail", "fallback")
FRONTEND_PENDING = "frontend pending:"


def fallback_errors(st: State) -> list[str]:
    """Ops run on the CPU: none allowed in certify mode, at most ``--ember-max-fallbacks`` else."""
    ops = st.fallback_ops()
    composites = st.lb.composite_fallbacks()
    if st.certify and composites:
        msg = (
            "--ember-certify allows no fallbacks; composites without a kernel or a decomposition "
            f"run on the CPU: {composites}"
        )
        return [msg]
    if not st.certify and len(ops) > st.max_fallbacks:
        msg = (
            f"{len(ops)} ops run through the CPU fallback, more than --ember-max-fallbacks "
            f"{st.max_fallbacks} allows: {ops}"
        )
        return [msg]
    return []


def run_level_errors(st: State) -> list[str]:
    """Zero executed tests, too many fallbacks, and in certify mode any skip, deselection or
    composite fallback fail the run."""
    errors = fallback_errors(st)
    statuses = [r.get("status") for r in st.rows.values()]
    if not any(s in EXECUTED for s in statuses):
        errors.append(
            f"no conformance test ran against backend '{st.name}' (all deselected, skipped or "
            "uncollected): a run that checks nothing is not a pass"
        )
    if st.certify:
        skipped = [
            r["test"]
            for r in st.rows.values()
            if r.get("status") == "not-run" and not str(r.get("message", "")).startswith(FRONTEND_PENDING)
        ]
        if skipped:
            errors.append(f"--ember-certify allows no skips; skipped: {skipped[:10]}")
        if st.deselected:
            errors.append(f"--ember-certify runs the whole suite; {st.deselected} tests were deselected")
    pending = [
        r["test"]
        for r in st.rows.values()
        if r.get("status") == "not-run" and str(r.get("message", "")).startswith(FRONTEND_PENDING)
    ]
    if pending:
        st.notes.append(f"{len(pending)} frontend-level checks are waiting for the frontend (not counted)")
    return errors
