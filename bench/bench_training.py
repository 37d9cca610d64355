"""Training benchmarks: ``python bench/bench_training.py [--quick]``.

Cases: one SGD-momentum training step of an MLP (784-512-256-10, ReLU, batch 128,
cross-entropy) for ember and PyTorch's CPU build (when importable) in the same run, with the
default threads and with one thread each (threadpoolctl, when installed); and a
DataLoader epoch over a map-style dataset whose items cost Python work, with 2 worker
processes against none, beside the same work in a plain pool of 2 processes (the machine's
ceiling: shared or hyperthreaded CPUs give less than 2x). Writes bench/results/training.json.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import ember
from harness import Report, best_time, torch_or_none


def _mlp_step(lib: object) -> object:
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = lib.randn(128, 784)
    y = lib.randint(0, 10, (128,))

    def step() -> None:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def mlp(rep: Report, torch: object, case: str = "MLP step 784-512-256-10 b128 SGD") -> float | None:
    rep.add(case, "ember[cpu]", best_time(_mlp_step(ember), repeat=7))
    if torch is not None:
        rep.add(case, "torch", best_time(_mlp_step(torch), repeat=7))
    return rep.ratio(case, "ember[cpu]", "torch")


def mlp_one_thread(rep: Report, torch: object) -> float | None:
    """The same step with one BLAS/OpenMP thread each: the frameworks' own cost, without threading luck."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    threads = torch.get_num_threads() if torch is not None else 0
    if torch is not None:
        torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            return mlp(rep, torch, "MLP step, 1 thread each")
    finally:
        if torch is not None:
            torch.set_num_threads(threads)


class Costly(ember.utils.data.Dataset):
    """Each item costs pure-Python work (decoding, augmentation...), as real datasets do."""

    def __init__(self, n: int, work: int) -> None:
        self.n, self.work = n, work

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple:
        acc = 0
        for k in range(self.work):
            acc = (acc * 31 + k + i) % 1000003
        return ember.full((16,), float(acc)), i


def loader(rep: Report, quick: bool) -> float | None:
    case = "DataLoader epoch, Python-heavy items"
    ds = Costly(128 if quick else 256, 20000)
    for workers in (0, 2):
        dl = ember.utils.data.DataLoader(
            ds, batch_size=16, num_workers=workers, persistent_workers=workers > 0
        )
        t = best_time(lambda dl=dl: sum(1 for _ in dl), repeat=3, min_time=0.0)
        rep.add(case, f"workers={workers}", t)
    r = rep.ratio(case, "workers=0", "workers=2")
    return r


def _spin(n: int) -> int:
    acc = 0
    for k in range(n):
        acc = (acc * 31 + k) % 1000003
    return acc


def parallel_ceiling(rep: Report, quick: bool) -> float | None:
    """What two processes gain on this machine right now (shared or hyperthreaded CPUs gain < 2x)."""
    import multiprocessing as mp

    case = "raw Python work, 2 processes"
    n = 20000 * (128 if quick else 256) // 2
    rep.add(case, "serial", best_time(lambda: [_spin(n), _spin(n)], repeat=3, min_time=0.0))
    with mp.get_context().Pool(2) as pool:
        rep.add(case, "pool of 2", best_time(lambda: pool.map(_spin, [n, n]), repeat=3, min_time=0.0))
    return rep.ratio(case, "serial", "pool of 2")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smaller DataLoader case")
    args = p.parse_args(argv)
    torch = torch_or_none()
    rep = Report("training")
    ratio = mlp(rep, torch)
    ratio1 = mlp_one_thread(rep, torch)
    speedup = loader(rep, args.quick)
    ceiling = parallel_ceiling(rep, args.quick)
    summary = {
        "mlp_ember_over_torch": ratio,
        "mlp_ember_over_torch_1_thread": ratio1,
        "loader_speedup_2_workers": speedup,
        "machine_speedup_2_processes": ceiling,
    }
    if ratio is not None:
        print(f"MLP step: ember / torch = {ratio:.2f} (target <= 1.3)")
    if ratio1 is not None:
        print(f"MLP step, one thread each: ember / torch = {ratio1:.2f}")
    print(f"DataLoader: 2 workers are {speedup:.2f}x faster than 0 (target >= 1.6)")
    print(f"  for scale: two plain processes are {ceiling:.2f}x faster than one on this machine right now")
    path = rep.write(os.path.join(os.path.dirname(__file__), "results"), summary)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
