"""One rank of ``ember run``: set torchrun's environment from MPI's, run the script, and leave a
marker when it succeeded (so the launcher tells a clean exit from a rank that died).

Started by ``mpiexec`` as ``python -m ember.distributed._worker RUN_DIR NPROC RESTART MAXR ADDR PORT
[-m] TARGET ARGS...``; it does not initialise MPI itself (the script does, through
``init_process_group``).
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

_RANK = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MPI_LOCALRANKID")
_SIZE = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")
_LOCAL = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MPI_LOCAL_RANK")


def _first(names: tuple[str, ...], default: int) -> int:
    for n in names:
        if n in os.environ:
            return int(os.environ[n])
    return default


def main(argv: list[str]) -> int:
    run_dir, nproc, restart, max_restarts, addr, port, *rest = argv
    rank = _first(_RANK, 0)
    local = _first(_LOCAL, rank % int(nproc))
    os.environ.update(
        RANK=str(rank),
        LOCAL_RANK=str(local),
        WORLD_SIZE=str(_first(_SIZE, 1)),
        LOCAL_WORLD_SIZE=nproc,
        GROUP_RANK=str(rank // int(nproc)),
        MASTER_ADDR=addr,
        MASTER_PORT=port,
        TORCHELASTIC_RESTART_COUNT=restart,
        TORCHELASTIC_MAX_RESTARTS=max_restarts,
    )
    module = rest[0] == "-m"
    target, args = (rest[1], rest[2:]) if module else (rest[0], rest[1:])
    sys.argv = [target, *args]
    code = 0
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, str(Path(target).resolve().parent))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    if code == 0:
        Path(run_dir, f"rank-{rank}.ok").touch()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
