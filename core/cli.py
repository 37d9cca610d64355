"""The ``ember`` command: ``ember info``, ``ember conformance``, ``ember example``, ``ember demo``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _info(args: argparse.Namespace) -> int:
    import ember
    from ember.backends import registry

    rows = registry.status()
    if args.backend:
        rows = [r for r in rows if r["name"] == args.backend]
        if not rows:
            print(f"ember info: no backend named '{args.backend}' is installed", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0

    print(f"ember {ember.__version__}; backends found through entry point group 'ember.backends':")
    for r in rows:
        if not r["available"]:
            print(f"  {r['name']}: unavailable: {r['reason']}")
            continue
        print(f"  {r['name']} {r['version']} ({r['distribution']}): available")
        for i, d in enumerate(r["devices"]):
            print(f"    device {r['name']}:{i}: {d}")
        print(f"    dtypes: {', '.join(r['dtypes'])}")
        _print_fallbacks(r, bool(args.backend))
    return 0


def _print_fallbacks(r: dict, detail: bool) -> None:
    """Both kinds of CPU fallback, labelled; with ``--backend`` also how composites run."""
    if detail or r["fallbacks"]:
        fb = ", ".join(r["fallbacks"]) or "none"
        print(f"    primitive fallbacks (no kernel; run on the CPU and copied back): {fb}")
    if detail or r["composite_fallbacks"]:
        fb = ", ".join(r["composite_fallbacks"]) or "none"
        print(f"    composite fallbacks (no kernel, no decomposition; run on the CPU and copied back): {fb}")
    if r.get("fallback_calls"):
        calls = ", ".join(f"{op} x{n}" for op, n in r["fallback_calls"].items())
        print(f"    CPU fallback calls in this process: {calls}")
    if detail:
        print(f"    composites with their own kernels: {', '.join(r['overrides']) or 'none'}")
        print(
            f"    composites decomposed into primitives on the device: {', '.join(r['decomposed']) or 'none'}"
        )


def _conformance(rest: Sequence[str]) -> int:
    try:
        from ember_conformance.cli import main as run
    except ImportError:
        print("ember conformance: install the suite first: pip install ./conformance", file=sys.stderr)
        return 2
    return int(run(list(rest)))


def _example(args: argparse.Namespace) -> int:
    import ember as torch

    dev = args.device
    x = torch.tensor([[1.0], [2.0]], device=dev)
    y = torch.tensor([1.0, 2.0], device=dev)
    print(f"on {x.device}: x + y =", (x + y).cpu())
    w = torch.randn(3, 3, device=dev, requires_grad=True)
    loss = ((w @ w.T) ** 2).mean()
    loss.backward()
    print("loss:", loss.item(), " grad norm:", w.grad.pow(2).sum().sqrt().item())
    return 0


# The backends this repository ships, by device type: where the README installs them from.
_SHIPPED = {"cpu": "./backend_cpu", "opencl": "./backend_opencl", "cuda": "./backend_cuda"}


def _device_problem(name: str) -> str | None:
    """One line saying why ``name`` cannot be used (checked before any work), or None."""
    import ember
    from ember.backends import registry

    try:
        ember.empty(0, device=name)
    except (RuntimeError, ValueError) as e:
        reason = str(e).splitlines()[0]
        kind = name.split(":")[0]
        rows = registry.status()
        names = {row["name"] for row in rows}
        installed = ", ".join(f"{r['name']}" + ("" if r["available"] else " (unavailable)") for r in rows)
        hint = (
            f"; to add it: pip install {_SHIPPED[kind]} (from a clone of ember)"
            if kind in _SHIPPED and kind not in names
            else ""
        )
        return f"ember: cannot use device {name!r}: {reason} (installed backends: {installed}){hint}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "run":
        from ember.distributed.run import main as run_main  # heavy: only for `ember run`

        return run_main(argv[1:])
    if argv and argv[0] == "conformance":
        return _conformance(argv[1:])
    p = argparse.ArgumentParser(
        prog="ember", description="ember: a PyTorch-style framework with pluggable backends"
    )
    sub = p.add_subparsers(dest="cmd")
    info = sub.add_parser("info", help="list installed backends, their devices, dtypes and fallbacks")
    info.add_argument("--backend", help="show one backend in detail (fallbacks, overridden composites)")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    ex = sub.add_parser("example", help="run a tiny computation with a gradient on a device")
    ex.add_argument("--device", default=None, help="device string, e.g. cpu, opencl, cuda:0")
    sub.add_parser("conformance", help="run the conformance suite (pip install ./conformance)")
    sub.add_parser("run", help="launch a distributed script over mpiexec (ember run --help)")
    demo = sub.add_parser("demo", help="train a small CNN on scikit-learn's digits, save and reload it")
    from ember.demo import add_arguments as demo_arguments  # the demo's flags, declared there

    demo_arguments(demo)
    args = p.parse_args(argv)
    if args.cmd is None:
        p.print_help()
        return 0
    if args.cmd in ("demo", "example"):
        problem = _device_problem(args.device or os.environ.get("EMBER_DEVICE") or "cpu")
        if problem:
            print(problem, file=sys.stderr)
            return 2
    if args.cmd == "info":
        return _info(args)
    if args.cmd == "demo":
        from ember.demo import main as demo_main

        return demo_main(args)
    return _example(args)


if __name__ == "__main__":
    raise SystemExit(main())
