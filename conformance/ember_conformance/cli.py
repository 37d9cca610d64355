"""``ember conformance``: the suite as a subcommand of the ``ember`` console script.

``ember conformance --backend NAME [--device NAME:I] [--report PATH] [--certify]
[--manifest FILE] [--plugin MODULE:OBJECT] [--max-fallbacks N] [-- extra pytest args]`` runs
``pytest --pyargs ember_conformance`` with the matching ``--ember-*`` options and returns
pytest's exit code (0 only for a passing run).
"""

from __future__ import annotations

import argparse
import os

__all__ = ["build_pytest_args", "main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ember conformance", description="Run ember's backend conformance suite."
    )
    p.add_argument("--backend", required=True, help="backend name (its ember.backends entry point)")
    p.add_argument("--device", help="device to run on, NAME:INDEX (default NAME:0)")
    p.add_argument("--report", metavar="PATH", help="write PATH.md, PATH.json and PATH.xml")
    p.add_argument("--certify", action="store_true", help="no skips, no known failures, no fallbacks")
    p.add_argument("--manifest", metavar="FILE", help="the backend's manifest (TOML or JSON)")
    p.add_argument("--plugin", metavar="MODULE:OBJECT", help="register a plugin object that is not installed")
    p.add_argument(
        "--max-fallbacks",
        type=int,
        metavar="N",
        help="fail a non-certify run whose backend runs more than N ops on the CPU (default 0)",
    )
    p.add_argument("pytest_args", nargs="*", help="extra pytest arguments, after --")
    return p


def build_pytest_args(ns: argparse.Namespace) -> list[str]:
    """The pytest command line for parsed ``ember conformance`` arguments."""
    args = ["--pyargs", "ember_conformance", "--ember-backend", ns.backend, "-p", "no:cacheprovider"]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        args += ["-p", "ember_conformance.plugin"]
    for flag, value in (
        ("--ember-device", ns.device),
        ("--ember-report", ns.report),
        ("--ember-manifest", ns.manifest),
        ("--ember-plugin", ns.plugin),
    ):
        if value:
            args += [flag, value]
    if ns.max_fallbacks is not None:
        args += ["--ember-max-fallbacks", str(ns.max_fallbacks)]
    if ns.certify:
        args.append("--ember-certify")
    return args + list(ns.pytest_args)


def main(argv: list[str] | None = None) -> int:
    """Run the suite; the exit status is pytest's (non-zero for any failed or empty run)."""
    import pytest

    ns = _parser().parse_args(argv)
    return int(pytest.main(build_pytest_args(ns)))
