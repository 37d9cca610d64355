"""Time a training step of an MLP in float32 and under autocast + GradScaler, ember beside
PyTorch's CPU build in one run, and the cost autocast adds to one small matmul.

``python bench/bench_amp.py [--device cpu] [--batch 64] [--width 256]``: Linear-ReLU-Linear-
ReLU-Linear, MSELoss, SGD. Writes bench/results/amp_<device>.json. On the CPU backend the
lower dtype costs time (NumPy has no bfloat16 arithmetic); the numbers say how much, and
how much of it is autocast's own bookkeeping.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ember
import ember.amp
from harness import Report, best_time, torch_or_none


def _step(lib: Any, amp: Any, dev: str, width: int, x: Any, y: Any, mixed: bool) -> Any:
    nn = lib.nn
    model = nn.Sequential(
        nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1)
    )
    model = model.to(dev)
    opt = lib.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    scaler = amp.GradScaler(dev.split(":")[0], enabled=mixed)

    def step() -> None:
        opt.zero_grad()
        region = amp.autocast(dev.split(":")[0]) if mixed else contextlib.nullcontext()
        with region:
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    return step


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--width", type=int, default=256)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((args.batch, args.width)).astype(np.float32)
    y_np = rng.standard_normal((args.batch, 1)).astype(np.float32)
    rep = Report(f"amp_{args.device}")
    libs: list[tuple[str, Any, Any, Any]] = [
        (f"ember[{args.device}]", ember, ember.amp, lambda a: ember.tensor(a, device=args.device))
    ]
    torch = torch_or_none()
    if torch is not None and args.device == "cpu":
        libs.append(("torch", torch, torch.amp, torch.from_numpy))
    summary: dict[str, float] = {}
    for impl, lib, amp, make in libs:
        x, y = make(x_np), make(y_np)
        for mixed in (False, True):
            t = best_time(_step(lib, amp, args.device, args.width, x, y, mixed), min_time=0.5)
            case = f"mlp step {'amp' if mixed else 'float32'}"
            rep.add(case, impl, t)
            summary[f"{impl} {case}"] = t
        small = make(rng.standard_normal((4, 4)).astype(np.float32)).to(lib.bfloat16)
        plain = best_time(lambda small=small: small @ small)
        with amp.autocast(args.device.split(":")[0]):
            inside = best_time(lambda small=small: small @ small)
        rep.add("4x4 bf16 matmul, no region", impl, plain)
        rep.add("4x4 bf16 matmul, in a region", impl, inside, overhead_us=(inside - plain) * 1e6)
        summary[f"{impl} autocast overhead per op (s)"] = inside - plain
    print("wrote", rep.write(os.path.join(os.path.dirname(__file__), "results"), summary))


if __name__ == "__main__":
    main()
