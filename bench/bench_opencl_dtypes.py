"""float16 / bfloat16 beside float32 on OpenCL: ``a * b + c`` over 16M elements.

``python bench/bench_opencl_dtypes.py [--n 16777216]``: the half types are stored in 16 bits
and computed in float32, so an elementwise op moves half float32's bytes; on a bandwidth-bound
device it should take about half the time. Reports seconds and storage throughput (GB/s of
bytes read and written: two ops, each reading two operands and writing one) per dtype, and
each half type's time as a ratio of float32's, in bench/results/opencl_dtypes.json.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ember.backends as eb
from harness import Report, best_time

DTYPES = ("float32", "float16", "bfloat16")


def case(lb: eb.LoadedBackend, dtype: str, n: int) -> tuple[float, int]:
    """(seconds per a * b + c, bytes of storage it moves)."""
    k, be = lb.k, lb.backend
    dt = eb.DTYPES_BY_NAME[dtype]
    rng = np.random.default_rng(0)
    a, b, c = (k["cast"](be.from_numpy(rng.standard_normal(n).astype(np.float32), 0), dt) for _ in range(3))

    def run() -> None:
        k["add"](k["mul"](a, b), c)
        be.synchronize(0)

    return best_time(run, repeat=5), 6 * n * dt.itemsize


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 24)
    args = ap.parse_args()
    lb = eb.get("opencl")
    report = Report("opencl_dtypes")
    times = {}
    for dtype in DTYPES:
        seconds, nbytes = case(lb, dtype, args.n)
        times[dtype] = seconds
        report.add(f"a*b+c n={args.n}", dtype, seconds, GBps=nbytes / seconds / 1e9, bytes=nbytes)
    summary = {f"{d}_time_vs_float32": times[d] / times["float32"] for d in DTYPES[1:]}
    print(summary)
    print("wrote", report.write(os.path.join(os.path.dirname(__file__), "results"), summary))


if __name__ == "__main__":
    main()
