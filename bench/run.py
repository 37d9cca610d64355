"""Run ember's benchmarks: ``python bench/run.py [--device opencl] [--quick]``.

Cases (DESIGN.md, Performance): per-op dispatch overhead of ``a + b`` on 16 float32
elements (without and with a graph node), ``import`` plus a first op in a new process,
``a*b+c`` on 16M float32 elements, float32 matmul 1024² and 2048², and the autograd
overhead of a 100-op chain forward and backward, each beside NumPy and PyTorch's
CPU build (when importable) in the same run. Writes bench/results/<device>.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ember
from harness import Report, best_time, torch_or_none


def _sync(dev: str) -> None:
    if dev != "cpu":
        d = ember.device(dev)
        ember.backends.get(d.type).backend.synchronize(d.index or 0)


def dispatch(rep: Report, dev: str, torch: object) -> None:
    case = "add 16 float32 (dispatch)"
    a_np = np.ones(16, np.float32)
    b_np = np.ones(16, np.float32)
    rep.add(case, "numpy", best_time(lambda: a_np + b_np))
    a, b = ember.ones(16, device=dev), ember.ones(16, device=dev)
    rep.add(case, f"ember[{dev}]", best_time(lambda: a + b))
    if torch is not None:
        ta, tb = torch.ones(16), torch.ones(16)
        rep.add(case, "torch", best_time(lambda: ta + tb))


def dispatch_grad(rep: Report, dev: str, torch: object) -> None:
    """``a + b`` recording a graph node: the per-op cost of autograd bookkeeping."""
    case = "add 16 float32 with grad"
    a, b = ember.ones(16, device=dev, requires_grad=True), ember.ones(16, device=dev)
    rep.add(case, f"ember[{dev}]", best_time(lambda: a + b))
    if torch is not None:
        ta, tb = torch.ones(16, requires_grad=True), torch.ones(16)
        rep.add(case, "torch", best_time(lambda: ta + tb))


def _process_time(code: str, rounds: int = 3) -> float:
    """Best wall time of a fresh interpreter running ``code`` (what a user waits for)."""
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        best = min(best, time.perf_counter() - t)
    return best


def cold_start(rep: Report, dev: str, torch: object) -> None:
    """``import`` plus one small op in a new process, beside a bare interpreter's start."""
    case = "import + first op (new process)"
    rep.add(case, "python -c pass", _process_time("pass"))
    code = f"import ember; ember.ones(3, device={dev!r}) + 1"
    rep.add(case, f"ember[{dev}]", _process_time(code))
    if torch is not None:
        rep.add(case, "torch", _process_time("import torch; torch.ones(3) + 1"))


def elementwise(rep: Report, dev: str, torch: object, n: int) -> None:
    case = f"a*b+c {n // 2**20}M float32"
    rng = np.random.default_rng(0)
    a_np, b_np, c_np = (rng.random(n, dtype=np.float32) for _ in range(3))
    gb = 4 * n * 4 / 1e9  # three reads and one write

    def np_run() -> None:
        a_np * b_np + c_np

    t = best_time(np_run, repeat=3)
    rep.add(case, "numpy", t, GBps=gb / t)
    a, b, c = (ember.from_numpy(x).to(dev) for x in (a_np, b_np, c_np))

    def em_run() -> None:
        a * b + c
        _sync(dev)

    t = best_time(em_run, repeat=3)
    rep.add(case, f"ember[{dev}]", t, GBps=gb / t)
    if dev == "cpu":  # the buffer cache alone, without intra-op threads
        threads = ember.get_num_threads()
        ember.set_num_threads(1)
        t = best_time(em_run, repeat=3)
        ember.set_num_threads(threads)
        rep.add(case, "ember[cpu] 1 thread", t, GBps=gb / t)
    if torch is not None:
        ta, tb, tc = (torch.from_numpy(x) for x in (a_np, b_np, c_np))
        t = best_time(lambda: ta * tb + tc, repeat=3)
        rep.add(case, "torch", t, GBps=gb / t)


def matmul(rep: Report, dev: str, torch: object, n: int) -> None:
    case = f"matmul {n}x{n} float32"
    rng = np.random.default_rng(0)
    a_np, b_np = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    flop = 2 * n**3 / 1e9
    t = best_time(lambda: a_np @ b_np, repeat=3)
    rep.add(case, "numpy", t, GFLOPs=flop / t)
    a, b = ember.from_numpy(a_np).to(dev), ember.from_numpy(b_np).to(dev)

    def em_run() -> None:
        a @ b
        _sync(dev)

    t = best_time(em_run, repeat=3)
    rep.add(case, f"ember[{dev}]", t, GFLOPs=flop / t)
    if torch is not None:
        ta, tb = torch.from_numpy(a_np), torch.from_numpy(b_np)
        t = best_time(lambda: ta @ tb, repeat=3)
        rep.add(case, "torch", t, GFLOPs=flop / t)


def autograd_chain(rep: Report, dev: str, torch: object) -> None:
    case = "autograd chain 100 ops, 64 elems"

    def chain(lib: object, x: object, w: object) -> None:
        y = x
        for _ in range(33):
            y = (y * w + 0.5).tanh()
        y.sum().backward()

    x = ember.rand(64, device=dev)
    w = ember.rand(64, device=dev, requires_grad=True)
    rep.add(case, f"ember[{dev}]", best_time(lambda: chain(ember, x, w), repeat=3))
    if torch is not None:
        tx = torch.rand(64)
        tw = torch.rand(64, requires_grad=True)
        rep.add(case, "torch", best_time(lambda: chain(torch, tx, tw), repeat=3))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cpu")
    p.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = p.parse_args()
    torch = torch_or_none()
    dev = args.device
    rep = Report(dev.replace(":", "_"))
    print(f"ember on {dev}; torch {torch.__version__ if torch else 'not installed'}")
    dispatch(rep, dev, torch)
    dispatch_grad(rep, dev, torch)
    cold_start(rep, dev, torch)
    for n in (1 << 20,) if args.quick else (1 << 20, 1 << 24):
        elementwise(rep, dev, torch, n)
    for n in (256,) if args.quick else (1024, 2048):
        matmul(rep, dev, torch, n)
    autograd_chain(rep, dev, torch)
    em = f"ember[{dev}]"
    summary = {
        "dispatch_overhead_us_vs_numpy": (
            {r["impl"]: r["seconds"] for r in rep.rows if r["case"].startswith("add 16")}[em]
            - {r["impl"]: r["seconds"] for r in rep.rows if r["case"].startswith("add 16")}["numpy"]
        )
        * 1e6,
    }
    for r in rep.rows:
        if r["impl"] == "ember[cpu] 1 thread":
            summary[f"{r['case']}, 1 thread / numpy"] = rep.ratio(r["case"], r["impl"], "numpy")
        if r["impl"] == em:
            for ref in ("numpy", "torch"):
                ratio = rep.ratio(r["case"], em, ref)
                if ratio is not None:
                    summary[f"{r['case']} / {ref}"] = ratio
    print("\nratios (time of ember / time of reference; < 1 is faster):")
    for k, v in summary.items():
        print(f"  {k}: {v:.3f}")
    print("written:", rep.write(args.out, summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
