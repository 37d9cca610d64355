"""ember.compile against eager and other JITs: ``python bench/bench_compile.py [--device cpu] [--rounds 5]``.

Cases: a 100-op autograd chain (``x = (x * 1.01 + 0.1).tanh()`` 50 times, ``.sum().backward()``)
on 16x16 (Python overhead) and 256x256 (kernel time); the MLP step of bench_training
(784-512-256-10, batch 128, SGD momentum); the CNN step of bench_cnn (batch 64, SGD). Columns:
ember eager, ``ember.compile``, PyTorch eager, ``torch.compile`` (a failure is reported, not
raised), tinygrad's ``TinyJit`` (in a subprocess with ``--tinygrad-python`` when tinygrad is
not importable here) on its CPU device (which needs ``clang``) and on its CL device (PoCL: also
the CPU here). ``--device opencl``: ember's OpenCL eager/compiled beside tinygrad's CL device.

Every (case, column) is warmed up (JIT capture and compile times are excluded), calibrated to
a loop of about ``--min-time`` seconds, then timed once per round, the columns interleaved
within each round so machine noise hits them alike. The table shows medians; each ratio is
the median of the ratios within a round. Writes bench/results/compile_<device>.json. On a
shared machine pass ``--threads 1`` with ``OPENBLAS_NUM_THREADS=1`` in the environment.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))

CASES = ("chain 16x16", "chain 256x256", "MLP b128", "CNN b64")
TITLES = {
    "chain 16x16": "100-op chain 16x16 fwd+bwd",
    "chain 256x256": "100-op chain 256x256 fwd+bwd",
    "MLP b128": "MLP 784-512-256-10 b128 SGD-momentum step",
    "CNN b64": "bench_cnn CNN b64 SGD step",
}
TINYGRAD_PYTHON = "/tmp/oclk_tg/bin/python"
WARMUP = 3  # TinyJit captures on its second call and replays from the third


def _loop(fn: Callable[[], Any], sync: Callable[[], Any], number: int) -> float:
    """Seconds per call of ``number`` calls, the device drained once at the end."""
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    sync()
    return (time.perf_counter() - t0) / number


def _calibrate(fn: Callable[[], Any], sync: Callable[[], Any], min_time: float) -> int:
    for _ in range(WARMUP):
        fn()
    sync()
    number = 1
    while _loop(fn, sync, number) * number < min_time / 4 and number < 1 << 16:
        number *= 4
    return number


# --- ember and PyTorch: the same code, ``lib`` is either module -------------------------------


def _chain(lib: Any, n: int, device: str) -> Callable[[], Any]:
    lib.manual_seed(0)
    x = lib.randn(n, n, device=device, requires_grad=True)

    def step() -> Any:
        x.grad = None
        y = x
        for _ in range(50):
            y = (y * 1.01 + 0.1).tanh()
        y.sum().backward()
        return x.grad

    return step


def _mlp(lib: Any, device: str) -> Callable[[], Any]:
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
    model = model.to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = lib.randn(128, 784, device=device)
    y = lib.randint(0, 10, (128,), device=device)

    def step() -> Any:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _cnn(lib: Any, device: str) -> Callable[[], Any]:
    from bench_cnn import build

    lib.manual_seed(0)
    model = build(lib.nn).to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = lib.nn.CrossEntropyLoss()
    x = lib.randn(64, 1, 28, 28, device=device)
    y = lib.randint(0, 10, (64,), device=device)

    def step() -> Any:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def make_step(lib: Any, case: str, device: str) -> Callable[[], Any]:
    if case.startswith("chain"):
        return _chain(lib, int(case.split()[1].split("x")[0]), device)
    return _mlp(lib, device) if case.startswith("MLP") else _cnn(lib, device)


class Local:
    """A column run in this process."""

    def __init__(self, fn: Callable[[], Any], sync: Callable[[], Any]) -> None:
        self.fn, self.sync, self.number = fn, sync, 1

    def calibrate(self, min_time: float) -> None:
        self.number = _calibrate(self.fn, self.sync, min_time)

    def time(self) -> float:
        return _loop(self.fn, self.sync, self.number)


# --- tinygrad: a worker process speaking JSON lines ----------------------------------------------


def _tinygrad_step(case: str, dev: str) -> Callable[[], Any]:
    from tinygrad import Tensor, TinyJit, nn

    Tensor.manual_seed(0)
    if case.startswith("chain"):
        n = int(case.split()[1].split("x")[0])
        x = Tensor.randn(n, n, device=dev).realize()
        x.requires_grad = True

        @TinyJit
        def chain(x: Tensor) -> Tensor:
            x.grad = None
            y = x
            for _ in range(50):
                y = (y * 1.01 + 0.1).tanh()
            y.sum().backward()
            assert x.grad is not None
            return x.grad.realize()

        return lambda: chain(x)
    if case.startswith("MLP"):
        layers = [nn.Linear(784, 512), nn.Linear(512, 256), nn.Linear(256, 10)]

        def model(t: Tensor) -> Tensor:
            return layers[2](layers[1](layers[0](t).relu()).relu())

        batch, momentum = 128, 0.9
        xb = Tensor.randn(batch, 784, device=dev).realize()
    else:
        c1, c2, fc = nn.Conv2d(1, 32, 3), nn.Conv2d(32, 64, 3), nn.Linear(1600, 10)
        layers = [c1, c2, fc]

        def model(t: Tensor) -> Tensor:
            t = c1(t).relu().max_pool2d((2, 2))
            return fc(c2(t).relu().max_pool2d((2, 2)).flatten(1))

        batch, momentum = 64, 0.0
        xb = Tensor.randn(batch, 1, 28, 28, device=dev).realize()
    yb = Tensor.randint(batch, high=10, device=dev).realize()
    params = nn.state.get_parameters(layers)
    for p in params:
        p.to_(dev)
        p.realize()
    opt = nn.optim.SGD(params, lr=0.01, momentum=momentum)

    @TinyJit
    def step(x: Tensor, y: Tensor) -> Tensor:
        opt.zero_grad()
        loss = model(x).sparse_categorical_crossentropy(y)
        loss.backward()
        opt.step()
        return loss.realize()

    return lambda: step(xb, yb)


def worker(dev: str) -> int:
    """``--worker DEV``: reads ``setup CASE``, ``calibrate CASE SECONDS``, ``time CASE`` lines."""
    steps: dict[str, Callable[[], Any]] = {}
    numbers: dict[str, int] = {}

    def sync() -> None:
        from tinygrad import Device

        Device[dev].synchronize()

    for line in sys.stdin:
        cmd, _, rest = line.strip().partition(" ")
        try:
            if cmd == "setup":
                steps[rest] = _tinygrad_step(rest, dev)
                out: dict[str, Any] = {"ok": True}
            elif cmd == "calibrate":
                case, _, min_time = rest.rpartition(" ")
                numbers[case] = _calibrate(steps[case], sync, float(min_time))
                out = {"number": numbers[case]}
            else:
                out = {"seconds": _loop(steps[rest], sync, numbers[rest])}
        except Exception as e:  # noqa: BLE001 - reported to the parent as this column's failure
            why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
            if "clang" in why:
                why = f"tinygrad's {dev} device needs clang, not installed here ({why})"
            out = {"error": why}
        print(json.dumps(out), flush=True)
    return 0


class Remote:
    """One tinygrad column served by the worker process."""

    def __init__(self, proc: subprocess.Popen, case: str) -> None:
        self.proc, self.case = proc, case
        self.ask(f"setup {case}")

    def ask(self, line: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError("tinygrad worker exited")
        out = json.loads(reply)
        if "error" in out:
            raise RuntimeError(out["error"])
        return out

    def calibrate(self, min_time: float) -> None:
        self.ask(f"calibrate {self.case} {min_time}")

    def time(self) -> float:
        return float(self.ask(f"time {self.case}")["seconds"])


def tinygrad_worker(python: str, dev: str, threads: int | None) -> subprocess.Popen | str:
    """The worker process, or why there is none."""
    if importlib.util.find_spec("tinygrad") is not None:
        python = sys.executable
    elif not os.path.exists(python):
        return f"no tinygrad python at {python}"
    env = dict(os.environ, TRAINING="1")  # tinygrad's optimizers refuse to step without it
    if dev == "CL":
        env["GPU"] = "1"
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    proc = subprocess.Popen(
        [python, os.path.abspath(__file__), "--worker", dev],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    return proc


# --- the run ---------------------------------------------------------------------------------


def columns(device: str, torch: Any, tgs: dict[str, subprocess.Popen | str], case: str) -> dict[str, Any]:
    """Column name -> Local/Remote, or a string saying why that column is missing."""
    import ember

    cols: dict[str, Any] = {}
    if device == "cpu":
        esync: Callable[[], Any] = lambda: None
    else:
        esync = lambda: ember.accelerator.synchronize(device)
    cols["ember eager"] = Local(make_step(ember, case, device), esync)
    cols["ember.compile"] = Local(ember.compile(make_step(ember, case, device)), esync)
    if device == "cpu":
        if torch is None:
            cols["torch eager"] = cols["torch.compile"] = "PyTorch not importable"
        else:
            cols["torch eager"] = Local(make_step(torch, case, "cpu"), lambda: None)
            cols["torch.compile"] = Local(torch.compile(make_step(torch, case, "cpu")), lambda: None)
    for name, tg in tgs.items():
        try:
            cols[name] = tg if isinstance(tg, str) else Remote(tg, case)
        except RuntimeError as e:
            cols[name] = f"failed: {e}"
    return cols


def _why(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"failed: {type(e).__name__}: {msg[-1] if msg else ''}"[:160]


def run(args: argparse.Namespace) -> dict[str, Any]:
    import ember
    from harness import Report, torch_or_none

    torch = torch_or_none() if args.device == "cpu" else None
    if args.threads is not None:
        ember.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    try:
        ember.empty(0, device=args.device)
    except (RuntimeError, ValueError) as e:
        raise SystemExit(f"bench_compile: device {args.device!r} unavailable: {e}") from None
    # On cpu, tinygrad's CL device (PoCL, itself on the CPU here) stands beside its CPU device,
    # which needs clang.
    devs = {"TinyJit CPU": "CPU", "TinyJit PoCL": "CL"} if args.device == "cpu" else {"TinyJit CL": "CL"}
    tgs = {name: tinygrad_worker(args.tinygrad_python, dev, args.threads) for name, dev in devs.items()}
    cases = [c for c in CASES if not args.cases or any(k in c for k in args.cases.split(","))]
    table: dict[str, dict[str, Any]] = {}
    for case in cases:
        cols = {}
        for name, col in columns(args.device, torch, tgs, case).items():
            if not isinstance(col, str):
                t0 = time.perf_counter()
                try:
                    col.calibrate(args.min_time)
                except Exception as e:  # noqa: BLE001 - a column that cannot run is reported
                    col = _why(e)
                else:
                    print(f"  {case}: {name} ready in {time.perf_counter() - t0:.1f} s", flush=True)
            cols[name] = col
        table[case] = cols
    times: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        for case, cols in table.items():
            for name, col in cols.items():
                if isinstance(col, str):
                    continue
                try:
                    times.setdefault((case, name), []).append(col.time())
                except Exception as e:  # noqa: BLE001
                    cols[name] = _why(e)
        print(f"  round {r + 1}/{args.rounds} done", flush=True)
    for tg in tgs.values():
        if not isinstance(tg, str):
            assert tg.stdin is not None
            tg.stdin.close()
            tg.wait(timeout=60)
    rep = Report(f"compile_{args.device}")
    summary: dict[str, Any] = {"threads": args.threads, "rounds": args.rounds, "missing": {}}
    for case, cols in table.items():
        for name, col in cols.items():
            if isinstance(col, str):
                summary["missing"][f"{case} / {name}"] = col
            else:
                ts = times[(case, name)]
                rep.add(TITLES[case], name, statistics.median(ts), rounds=[round(t, 9) for t in ts])
    return {"rep": rep, "summary": summary, "table": table}


def paired_ratio(rep: Any, case: str, impl: str, ref: str) -> float | None:
    """The median over rounds of ``impl / ref`` timed in the same round (load drifts between rounds)."""
    t = {r["impl"]: r["rounds"] for r in rep.rows if r["case"] == case}
    if impl not in t or ref not in t:
        return None
    return statistics.median(a / b for a, b in zip(t[impl], t[ref], strict=False))


def print_table(out: dict[str, Any]) -> None:
    rep, summary, table = out["rep"], out["summary"], out["table"]
    names = list(next(iter(table.values())))
    ratios = [("/torch eager", "torch eager")] if "torch eager" in names else []
    ratios += [(f"/{n}", n) for n in names if n.startswith("TinyJit")]
    ratios.append(("/ember eager", "ember eager"))
    print()
    print(
        f"{'':<44}{'median ms per step':^{15 * len(names)}}{'ember.compile, per round':^{15 * len(ratios)}}"
    )
    head = f"{'case':<44}" + "".join(f"{n:>15}" for n in names) + "".join(f"{r:>15}" for r, _ in ratios)
    print(head)
    for case in table:
        title = TITLES[case]
        cells = []
        for n in names:
            t = {r["impl"]: r["seconds"] for r in rep.rows if r["case"] == title}.get(n)
            cells.append(f"{t * 1e3:15.3f}" if t is not None else f"{'n/a':>15}")
        line = f"{title:<44}" + "".join(cells)
        for label, ref in ratios:
            ratio = paired_ratio(rep, title, "ember.compile", ref)
            summary[f"{case}: ember.compile / {ref}"] = ratio
            line += f"{ratio:15.2f}" if ratio is not None else f"{'n/a':>15}"
        print(line)
    why_cases: dict[tuple[str, str], list[str]] = {}
    for what, why in summary["missing"].items():
        case, _, name = what.partition(" / ")
        why_cases.setdefault((name, why), []).append(case)
    for (name, why), cases in why_cases.items():
        print(f"n/a: {name} ({', '.join(cases)}): {why}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", help="cpu or opencl")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None, help="intra-op threads of every library")
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per timed loop (default 0.2)")
    ap.add_argument("--cases", default="", help="comma-separated substrings of case names (default all)")
    ap.add_argument("--tinygrad-python", default=TINYGRAD_PYTHON, help="a python that imports tinygrad")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    if args.threads is not None:  # PoCL (ember's OpenCL, tinygrad's CL) reads these when it starts
        for var in ("OMP_NUM_THREADS", "POCL_CPU_MAX_CU_COUNT", "POCL_MAX_PTHREAD_COUNT"):
            os.environ[var] = str(args.threads)
    out = run(args)
    print_table(out)
    print("wrote", out["rep"].write(os.path.join(os.path.dirname(__file__), "results"), out["summary"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
