"""Starting ``mpiexec`` for the multi-rank tests: ranks see one BLAS thread each, as under ``ember run``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
WORKERS = HERE / "workers"
BIN = Path(sys.executable).parent


def mpiexec(n: int, script: str, *args: str, ft: bool = False, env: dict | None = None, timeout: float = 90):
    """Run ``workers/script`` on ``n`` ranks; returns the CompletedProcess (stdout+stderr)."""
    cmd = [str(BIN / "mpiexec"), "--allow-run-as-root", "--oversubscribe", "-n", str(n)]
    if ft:
        cmd += ["--with-ft", "ulfm"]
    for k in {"OMP_NUM_THREADS", *(env or {})}:
        cmd += ["-x", k]
    cmd += [sys.executable, str(WORKERS / script), *args]
    env = {"OMP_NUM_THREADS": "1", **(env or {})}  # as ember run: one BLAS thread per rank
    full = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **env}
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, env=full)
