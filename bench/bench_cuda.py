"""CUDA backend throughput against CuPy itself, in one process: ratios, not absolute claims.

* matmul 4096x4096x4096 in float32 and bfloat16 (float16 if this CuPy refuses bfloat16)
  through ember's ``matmul`` kernel and through ``cupy.matmul`` directly (TFLOP/s, ratio);
* ``a * b + c`` on 256M float32 elements through ember's kernels (``mul`` then ``add``:
  ember has no fused multiply-add primitive) against the copy bandwidth ``cupy.copyto``
  reaches on the same buffers, counting each kernel's bytes read and written;
* per-op dispatch cost of ember's ``add`` on 16 floats against ``cupy.add``'s.

Timed with CUDA events, best of ``--repeat`` after a warm-up. Writes JSON to ``--out``.
Usage: python bench/bench_cuda.py --out results.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from typing import Any


def gpu_time(fn: Callable[[], Any], repeat: int) -> float:
    """Best seconds per call of ``fn``, measured with CUDA events on the current stream."""
    import cupy

    fn()
    cupy.cuda.get_current_stream().synchronize()
    best = float("inf")
    for _ in range(repeat):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        best = min(best, cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    return best


def host_time(fn: Callable[[], Any], number: int = 2000) -> float:
    import cupy

    fn()
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    cupy.cuda.get_current_stream().synchronize()
    return (time.perf_counter() - t0) / number


def bench_matmul(k: dict[str, Any], dtype: str, n: int, repeat: int) -> dict[str, Any]:
    import cupy
    import ml_dtypes
    import numpy as np

    nd = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    a = cupy.random.standard_normal((n, n), dtype=np.float32).astype(nd)
    b = cupy.random.standard_normal((n, n), dtype=np.float32).astype(nd)
    flops = 2.0 * n**3
    t_ember = gpu_time(lambda: k["matmul"](a, b), repeat)
    t_cupy = gpu_time(lambda: cupy.matmul(a, b), repeat)
    return {
        "case": f"matmul {n}^3 {dtype}",
        "ember_tflops": flops / t_ember / 1e12,
        "cupy_tflops": flops / t_cupy / 1e12,
        "ember_over_cupy_time": t_ember / t_cupy,
    }


def bench_fma(k: dict[str, Any], n: int, repeat: int) -> dict[str, Any]:
    import cupy
    import numpy as np

    a, b, c = (cupy.random.standard_normal((n,), dtype=np.float32) for _ in range(3))
    dst = cupy.empty_like(a)
    size = a.nbytes
    t_copy = gpu_time(lambda: cupy.copyto(dst, a), repeat)
    t_ember = gpu_time(lambda: k["add"](k["mul"](a, b), c), repeat)
    t_cupy = gpu_time(lambda: a * b + c, repeat)
    moved = 6 * size  # mul reads 2 writes 1, add reads 2 writes 1
    return {
        "case": f"a*b+c float32 n={n}",
        "copy_gbps": 2 * size / t_copy / 1e9,
        "ember_gbps": moved / t_ember / 1e9,
        "ember_over_copy_bandwidth": (moved / t_ember) / (2 * size / t_copy),
        "ember_over_cupy_time": t_ember / t_cupy,
        "ideal_fused_over_ember_time": (4 * size / (2 * size / t_copy)) / t_ember,
    }


def bench_dispatch(k: dict[str, Any]) -> dict[str, Any]:
    import cupy
    import numpy as np

    a = cupy.arange(16, dtype=np.float32)
    t_ember = host_time(lambda: k["add"](a, a))
    t_cupy = host_time(lambda: cupy.add(a, a))
    out: dict[str, Any] = {"case": "add 16 floats", "ember_kernel_us": t_ember * 1e6, "cupy_us": t_cupy * 1e6}
    try:
        import ember

        x = ember.arange(16, dtype=ember.float32, device="cuda")
        out["ember_tensor_us"] = host_time(lambda: x + x) * 1e6
    except Exception as e:  # noqa: BLE001 - report, keep the other numbers
        out["ember_tensor_error"] = f"{type(e).__name__}: {e}"
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--elements", type=int, default=256 * 2**20)
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args()

    import cupy
    from ember.backends import get

    k = get("cuda").k
    props = cupy.cuda.runtime.getDeviceProperties(0)
    report: dict[str, Any] = {
        "device": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "cupy": cupy.__version__,
        "python": platform.python_version(),
        "results": [],
    }
    cases: list[Callable[[], dict[str, Any]]] = [
        lambda: bench_matmul(k, "float32", args.n, args.repeat),
        lambda: bench_half_matmul(k, args.n, args.repeat),
        lambda: bench_fma(k, args.elements, args.repeat),
        lambda: bench_dispatch(k),
    ]
    for case in cases:
        try:
            row = case()
        except Exception as e:  # noqa: BLE001 - one broken case must not hide the others
            row = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(row), flush=True)
        report["results"].append(row)
        cupy.get_default_memory_pool().free_all_blocks()
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
    return 0


def bench_half_matmul(k: dict[str, Any], n: int, repeat: int) -> dict[str, Any]:
    try:
        return bench_matmul(k, "bfloat16", n, repeat)
    except Exception as e:  # noqa: BLE001 - this CuPy has no bfloat16 matmul: measure float16
        row = bench_matmul(k, "float16", n, repeat)
        row["bfloat16_error"] = f"{type(e).__name__}: {e}"
        return row


if __name__ == "__main__":
    raise SystemExit(main())
