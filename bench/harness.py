"""A tiny benchmark harness: best-of-N wall time per case, JSON out, ratios in one run.

Each case times ember beside its references (NumPy, and PyTorch's CPU build when it is
importable) in the same process, so the ratios are not at the mercy of machine noise
between runs.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Report", "best_time", "torch_or_none"]


def best_time(fn: Callable[[], Any], *, repeat: int = 5, min_time: float = 0.2) -> float:
    """Seconds per call: the best of ``repeat`` runs, each looping for at least ``min_time``."""
    fn()  # warm up caches, kernel compilation and lazy imports
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time / 4 or number >= 1 << 20:
            break
        number *= 4
    best = elapsed / number
    for _ in range(repeat - 1):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def torch_or_none() -> Any:
    try:
        import torch

        torch.set_num_threads(os.cpu_count() or 1)
        return torch
    except ImportError:
        return None


class Report:
    """Collects rows ``{case, impl, seconds, metric}`` and writes them as JSON."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rows: list[dict[str, Any]] = []

    def add(self, case: str, impl: str, seconds: float, **extra: Any) -> None:
        row = {"case": case, "impl": impl, "seconds": seconds, **extra}
        self.rows.append(row)
        metric = "  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in extra.items())
        print(f"{case:<34} {impl:<14} {seconds * 1e6:12.2f} us  {metric}", flush=True)

    def ratio(self, case: str, impl: str, ref: str) -> float | None:
        t = {r["impl"]: r["seconds"] for r in self.rows if r["case"] == case}
        if impl in t and ref in t:
            return t[impl] / t[ref]
        return None

    def write(self, folder: str, summary: dict[str, Any]) -> str:
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{self.name}.json")
        meta = {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version()}
        with open(path + ".tmp", "w") as f:
            json.dump({"meta": meta, "rows": self.rows, "summary": summary}, f, indent=2)
        os.replace(path + ".tmp", path)
        return path
