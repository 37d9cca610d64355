"""ember.distributed against the raw engine: DDP step time at 1 vs 2 ranks, and all_reduce
bandwidth beside mpi4py's own ``Allreduce`` on NumPy arrays, in the same run.

``python bench/bench_distributed.py`` launches itself with ``mpiexec`` at 1 and 2 ranks (one
BLAS thread per rank, as ``ember run`` sets) and writes bench/results/distributed.json. Ratios: ``ddp_2_over_1`` (weak scaling: per-rank batch
fixed, so 1.0 is perfect) and ``allreduce_<size>_ember_over_mpi4py`` (ember's overhead over the
engine it drives; 1.0 is none). Timings are the slowest rank's, best of 5 repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def _timed(comm: object, fn: object, iters: int, repeat: int = 5) -> float:
    """Seconds per call: best over repeats of the slowest rank (every rank runs the same count)."""
    from mpi4py import MPI

    fn()  # warm up
    best = float("inf")
    for _ in range(repeat):
        comm.Barrier()  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()  # type: ignore[operator]
        dt = comm.allreduce((time.perf_counter() - t0) / iters, op=MPI.MAX)  # type: ignore[attr-defined]
        best = min(best, dt)
    return best


def worker() -> None:
    import ember
    import ember.distributed as dist
    import numpy as np
    from ember import nn
    from ember.nn.parallel import DistributedDataParallel as DDP
    from mpi4py import MPI

    dist.init_process_group("mpi")
    comm, rank, world = MPI.COMM_WORLD, dist.get_rank(), dist.get_world_size()
    rows = []

    ember.manual_seed(0)
    model = DDP(
        nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    )
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    x, y = ember.randn(64, 256), ember.randint(0, 10, (64,))

    def step() -> None:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    rows.append({"case": "ddp_step_mlp", "ranks": world, "seconds": _timed(comm, step, 10)})
    if world > 1:
        for label, nbytes in (("1MB", 1 << 20), ("64MB", 64 << 20)):
            n = nbytes // 4
            t = ember.ones(n)
            a = np.ones(n, np.float32)
            iters = 20 if nbytes < (8 << 20) else 3
            te = _timed(comm, lambda t=t: dist.all_reduce(t), iters)
            tm = _timed(comm, lambda a=a: comm.Allreduce(MPI.IN_PLACE, a), iters)
            bus = 2 * (world - 1) / world * nbytes
            rows.append(
                {
                    "case": f"allreduce_{label}",
                    "impl": "ember",
                    "ranks": world,
                    "seconds": te,
                    "busbw_GBps": bus / te / 1e9,
                }
            )
            rows.append(
                {
                    "case": f"allreduce_{label}",
                    "impl": "mpi4py",
                    "ranks": world,
                    "seconds": tm,
                    "busbw_GBps": bus / tm / 1e9,
                }
            )
    if rank == 0:
        print("ROWS " + json.dumps(rows), flush=True)
    dist.destroy_process_group()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--out", default=str(HERE / "results"))
    a = p.parse_args()
    if a.worker:
        worker()
        return 0
    mpiexec = shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
    rows = []
    for n in (1, 2):
        cmd = [mpiexec, "-n", str(n), "--oversubscribe"]
        cmd += ["--allow-run-as-root"] if os.geteuid() == 0 else []
        cmd += ["-x", "OMP_NUM_THREADS"]  # one BLAS thread per rank at 1 and 2 ranks alike (as ember run)
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
        out = subprocess.run(
            [*cmd, sys.executable, __file__, "--worker"], check=True, capture_output=True, text=True, env=env
        )
        rows += json.loads(next(line[5:] for line in out.stdout.splitlines() if line.startswith("ROWS ")))
    t = {(r["case"], r.get("impl", "ember"), r["ranks"]): r["seconds"] for r in rows}
    summary = {"ddp_2_over_1": t[("ddp_step_mlp", "ember", 2)] / t[("ddp_step_mlp", "ember", 1)]}
    for label in ("1MB", "64MB"):
        c = f"allreduce_{label}"
        summary[f"{c}_ember_over_mpi4py"] = t[(c, "ember", 2)] / t[(c, "mpi4py", 2)]
    for r in rows:
        extra = f"  busbw {r['busbw_GBps']:.2f} GB/s" if "busbw_GBps" in r else ""
        print(
            f"{r['case']:<16} {r.get('impl', 'ember'):<7} ranks={r['ranks']}  {r['seconds'] * 1e3:9.3f} ms{extra}"
        )
    for k, v in summary.items():
        print(f"{k}: {v:.3f}")
    os.makedirs(a.out, exist_ok=True)
    path = Path(a.out, "distributed.json")
    meta = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    path.write_text(json.dumps({"meta": meta, "rows": rows, "summary": summary}, indent=2))
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
