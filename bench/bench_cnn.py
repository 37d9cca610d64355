"""Time one training step of a small CNN: ember beside PyTorch's CPU build in one run.

``python bench/bench_cnn.py [--device cpu] [--batch 64]``: Conv2d(1,32,3)-ReLU-MaxPool2d(2)-
Conv2d(32,64,3)-ReLU-MaxPool2d(2)-Flatten-Linear(1600,10) on batch×1×28×28 float32,
CrossEntropyLoss, SGD(lr=0.01). Writes bench/results/cnn_<device>.json; the target (issue
#21) is at most PyTorch's time per step. On a shared machine, also compare with one thread
each (``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``): the frameworks' own cost.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ember
from harness import Report, best_time, torch_or_none


def build(nn: object) -> object:
    return nn.Sequential(  # type: ignore[attr-defined]
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),  # type: ignore[attr-defined]
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),  # type: ignore[attr-defined]
        nn.Flatten(),
        nn.Linear(1600, 10),  # type: ignore[attr-defined]
    )


def _sgd(lib: object, params: list) -> object:
    optim = getattr(lib, "optim", None)
    if optim is not None and hasattr(optim, "SGD"):
        return optim.SGD(params, lr=0.01)
    return None


def step_fn(lib: object, model: object, x: object, y: object) -> object:
    loss_fn = lib.nn.CrossEntropyLoss()  # type: ignore[attr-defined]
    params = list(model.parameters())  # type: ignore[attr-defined]
    opt = _sgd(lib, params)

    def step() -> None:
        if opt is not None:
            opt.zero_grad()
        else:
            for p in params:
                p.grad = None
        loss = loss_fn(model(x), y)  # type: ignore[operator]
        loss.backward()
        if opt is not None:
            opt.step()
        else:
            with lib.no_grad():  # type: ignore[attr-defined]
                for p in params:
                    p.sub_(p.grad * 0.01)

    return step


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((args.batch, 1, 28, 28)).astype(np.float32)
    y_np = rng.integers(0, 10, args.batch)
    rep = Report(f"cnn_{args.device}")
    case = f"cnn step batch {args.batch}"
    ember.manual_seed(0)
    model = build(ember.nn).to(args.device)  # type: ignore[attr-defined]
    x, y = ember.tensor(x_np, device=args.device), ember.tensor(y_np, device=args.device)
    em_step = step_fn(ember, model, x, y)
    torch = torch_or_none()
    t_step = None
    if torch is not None:
        t_step = step_fn(torch, build(torch.nn), torch.from_numpy(x_np), torch.from_numpy(y_np))
    # Alternate the two in rounds and keep each one's best: a busy machine then slows both alike.
    t_em = t_t = float("inf")
    for _ in range(args.rounds):
        t_em = min(t_em, best_time(em_step, repeat=args.repeat, min_time=0.5))
        if t_step is not None:
            t_t = min(t_t, best_time(t_step, repeat=args.repeat, min_time=0.5))
    rep.add(case, f"ember[{args.device}]", t_em, steps_per_s=1 / t_em)
    summary: dict[str, object] = {"ember_s": t_em}
    if t_step is not None:
        rep.add(case, "torch", t_t, steps_per_s=1 / t_t)
        summary.update(torch_s=t_t, ratio=t_em / t_t)
        print(f"ember / torch: {t_em / t_t:.2f}x (target <= 1x)")
    print("wrote", rep.write(os.path.join(os.path.dirname(__file__), "results"), summary))


if __name__ == "__main__":
    main()
