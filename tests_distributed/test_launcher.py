"""``ember run``: torchrun's environment, failure reporting, and an elastic restart."""

import os
import subprocess
import sys

from ember.distributed import run
from ranks import BIN, WORKERS


def launch(*args, env=None, timeout=120):
    full = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **(env or {})}
    full.pop("OMP_NUM_THREADS", None)  # ember run chooses 1 per rank, as torchrun
    cmd = [sys.executable, "-m", "ember.distributed.run", *args]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, env=full)


def test_command_line_is_torchruns_over_mpiexec():
    a = run._parser().parse_args(
        ["--nproc-per-node", "3", "--master-port", "1234", "train.py", "--lr", "0.1"]
    )
    cmd = run.build_command(a, "mpiexec", "openmpi", "/r", 2)
    assert cmd[:3] == ["mpiexec", "-n", "3"] and "--oversubscribe" in cmd
    assert cmd[cmd.index("--with-ft") + 1] == "ulfm"
    tail = cmd[cmd.index("ember.distributed._worker") + 1 :]
    assert tail[:4] == ["/r", "3", "2", "0"] and tail[5:] == ["1234", "train.py", "--lr", "0.1"]


def test_environment_and_a_failing_rank_without_restarts():
    p = launch("--nproc-per-node", "2", "--master-port", "29555", str(WORKERS / "envs.py"), "x", "--y")
    assert p.returncode != 0
    lines = sorted(line for line in p.stdout.splitlines() if line.startswith("env"))
    assert len(lines) == 2, p.stdout + p.stderr
    for r, line in enumerate(lines):
        assert f"RANK={r} LOCAL_RANK={r} WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=" in line, line
        assert line.endswith("PORT=29555 TORCHELASTIC_RESTART_COUNT=0 OMP_NUM_THREADS=1 argv ['x', '--y']"), (
            line
        )
    assert "[ember run] setting OMP_NUM_THREADS=1 for each rank" in p.stderr
    assert "[ember run] worker group failed (rank(s) [1] failed or died); no restarts left" in p.stderr


def test_elastic_restart_resumes_from_checkpoint(tmp_path):
    p = launch(
        "--nproc-per-node", "2", "--max-restarts", "1", str(WORKERS / "elastic.py"), str(tmp_path),
        env={"EMBER_TEST_KILL_AT": "3"},
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert "[ember run] worker group failed (rank(s) [0, 1] failed or died); restart 1/1" in p.stderr
    assert "rank(s) [1] died" in p.stderr  # the survivor's error named the dead rank
    out = [line for line in p.stdout.splitlines() if line.startswith(("resumed", "finished"))]
    assert out == ["resumed from step 3 (restart 1)", "finished 6 steps; matches one process: True"], p.stdout
