"""What the profiler costs per op: the same small ops with no profiler, inside
``ember.profiler.profile`` (CPU activity, and with shapes and memory). (That nothing is left hooked once a
profile exits is proved structurally in tests/test_profiler.py, not timed.) PyTorch's own ratio
is printed beside ember's when torch is importable.

    python bench/bench_profiler.py [--calls 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable
from typing import Any

import ember
import ember.nn.functional as F
from ember.profiler import ProfilerActivity, profile


def per_call(
    work: Callable[[], Any], calls: int, repeat: int, modes: dict[str, Callable[[], Any]]
) -> dict[str, float]:
    """Best microseconds per call of ``work`` in each mode (a fresh ``ctx()`` per run); the
    modes take turns within each repeat, so machine noise hits them alike."""
    best = dict.fromkeys(modes, float("inf"))
    work()
    for _ in range(repeat):
        for mode, ctx in modes.items():
            with ctx():
                t0 = time.perf_counter()
                for _ in range(calls):
                    work()
                best[mode] = min(best[mode], time.perf_counter() - t0)
    return {mode: t / calls * 1e6 for mode, t in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    x, w = ember.ones(8, 16), ember.ones(4, 16)
    cases = {
        "add (1 kernel)": lambda: ember.add(x, x),
        "nn.functional.linear (2 kernels)": lambda: F.linear(x, w),
    }
    modes = {
        "off": contextlib.nullcontext,
        "profile(CPU)": lambda: profile(activities=[ProfilerActivity.CPU]),
        "profile(CPU, shapes, memory)": lambda: profile(
            activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True
        ),
    }
    print(f"{'op':34} {'mode':30} {'us/call':>9} {'x off':>7}")
    for name, work in cases.items():
        times = per_call(work, args.calls, args.repeat, modes)
        for mode, t in times.items():
            print(f"{name:34} {mode:30} {t:9.2f} {t / times['off']:7.2f}")
    try:
        import torch
    except ImportError:
        return
    tx, tw = torch.ones(8, 16), torch.ones(4, 16)
    tcases = {
        "torch add": lambda: torch.add(tx, tx),
        "torch linear": lambda: torch.nn.functional.linear(tx, tw),
    }
    tmodes = {
        "off": contextlib.nullcontext,
        "profile(CPU)": lambda: torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]),
    }
    for name, work in tcases.items():
        times = per_call(work, args.calls, args.repeat, tmodes)
        for mode, t in times.items():
            print(f"{name:34} {mode:30} {t:9.2f} {t / times['off']:7.2f}")


if __name__ == "__main__":
    main()
