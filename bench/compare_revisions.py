"""Is a change slower? ``python bench/compare_revisions.py BASE [HEAD] [--rounds 3] [--threads N]``.

Checks out ``BASE`` (and ``HEAD``, default: the working tree) into temporary git worktrees
and times, in alternating child processes so that machine noise hits both alike: W1 (``a + b``
on 16 float32, no grad: the per-op dispatch cost), the MLP training step and the CNN
training step of ``bench_training.py`` and ``bench_cnn.py``, with PyTorch's CPU build beside
them when importable (measured in every round too, so its column sees the same noise). Prints the best time of each and the ratio HEAD/BASE. Nothing is
written to the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from harness import best_time
import bench_cnn, bench_training
lib = __import__(sys.argv[2])
out = {}
a, b = lib.ones(16), lib.ones(16)
out["W1 add 16 float32"] = best_time(lambda: a + b)
out["MLP step"] = best_time(bench_training._mlp_step(lib), repeat=5)
rng = np.random.default_rng(0)
x = lib.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
y = lib.tensor(rng.integers(0, 10, 64))
lib.manual_seed(0)
out["CNN step"] = best_time(bench_cnn.step_fn(lib, bench_cnn.build(lib.nn), x, y), repeat=3)
print(json.dumps(out))
"""


def _tree(rev: str | None, tmp: str) -> str:
    """A folder whose ``ember`` and ``ember_cpu`` are those of ``rev`` (None: this tree)."""
    src = ROOT
    if rev is not None:
        src = os.path.join(tmp, "src-" + rev.replace("/", "_"))
        subprocess.run(
            ["git", "-C", ROOT, "worktree", "add", "--detach", src, rev], check=True, capture_output=True
        )
    path = os.path.join(tmp, "path-" + os.path.basename(src))
    os.makedirs(path)
    os.symlink(os.path.join(src, "core"), os.path.join(path, "ember"))
    os.symlink(os.path.join(src, "backend_cpu", "ember_cpu"), os.path.join(path, "ember_cpu"))
    return path


def _measure(path: str | None, lib: str, threads: int | None = None) -> dict[str, float]:
    env = dict(os.environ)
    if threads is not None:  # BLAS, OpenMP (PyTorch) and ember's own intra-op threads alike
        n = str(threads)
        env.update(OMP_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n, MKL_NUM_THREADS=n)
    if path is not None:
        env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, HERE, lib], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("head", nargs="?")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, help="threads for every library (1: each framework's own cost)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ember-compare-")
    paths = {"base": _tree(args.base, tmp), "head": _tree(args.head, tmp)}
    best: dict[str, dict[str, float]] = {"base": {}, "head": {}, "torch": {}}
    try:
        have_torch = True
        for _ in range(args.rounds):
            for who in ("base", "head", "torch"):
                if who == "torch" and not have_torch:
                    continue
                try:
                    lib = "torch" if who == "torch" else "ember"
                    got = _measure(paths[who] if who != "torch" else None, lib, args.threads)
                except subprocess.CalledProcessError:
                    if who != "torch":
                        raise
                    have_torch = False  # no PyTorch here: its columns stay empty
                    continue
                for case, t in got.items():
                    best[who][case] = min(t, best[who].get(case, t))
    finally:  # the checkouts go with their temporary folder
        for path in paths.values():
            src = os.path.realpath(os.path.join(path, "ember", ".."))
            if src != ROOT:
                subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", src], check=False)
        subprocess.run(["git", "-C", ROOT, "worktree", "prune"], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'case':22} {'base':>12} {'head':>12} {'head/base':>10} {'torch':>12} {'head/torch':>11}")
    for case, t0 in best["base"].items():
        t1, tt = best["head"][case], best["torch"].get(case)
        torch_cols = f"{tt * 1e6:10.1f}us {t1 / tt:10.2f}x" if tt else f"{'-':>12} {'-':>11}"
        print(f"{case:22} {t0 * 1e6:10.1f}us {t1 * 1e6:10.1f}us {t1 / t0:9.2f}x {torch_cols}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
