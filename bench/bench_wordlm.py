"""Word-level language model training: ``python bench/bench_wordlm.py [--quick] [--rounds N]``.

The training loop of pytorch/examples' word_language_model (embedding 32, hidden 32, two
layers, bptt 20, batch 10, dropout 0.2, gradient clipping 0.25, plain SGD on ``p.data``,
hidden state carried and detached between batches) on a synthetic corpus of fixed seed with
a 10000-word vocabulary, for an LSTM, a GRU and a Transformer encoder (2 heads), with the
models of ``tests_onnx/programs/word_language_model.py`` (that example's model code), ember's
CPU backend beside PyTorch's CPU build in the same run, each (model, library) in a process of
its own as a user runs it (``--same-process`` shares one). Each round times one pass over the
corpus for every (model, library), one process at a time, interleaved so that machine noise hits
both alike; the summary holds the median of the rounds and the ratio ember / PyTorch. Writes
bench/results/wordlm.json.
On a shared machine pass ``--threads 1`` with ``OPENBLAS_NUM_THREADS=1`` in the environment:
oversubscribed OpenMP/BLAS threads spin and make both columns slow and noisy; the line also
gives the ratio of the calling thread's CPU time, which other processes disturb less.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import multiprocessing
import os
import resource
import statistics
import sys
import time
import warnings
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))
import ember
import numpy as np
from harness import Report, torch_or_none

VOCAB, EMBED, HIDDEN, LAYERS, BPTT, BATCH, DROPOUT, CLIP, LR = 10000, 32, 32, 2, 20, 10, 0.2, 0.25, 20.0
MODELS = ("LSTM", "GRU", "Transformer")


def corpus(batches: int) -> np.ndarray:
    """(tokens, BATCH) int64: a Zipf-like stream of word ids, as batchify lays it out."""
    rng = np.random.default_rng(1234)
    n = batches * BPTT + 1
    ids = np.minimum(rng.zipf(1.3, size=n * BATCH) - 1, VOCAB - 1)
    return ids.reshape(BATCH, n).T.copy()


PROGRAM = os.path.join(os.path.dirname(__file__), "..", "tests_onnx", "programs", "word_language_model.py")


def program(lib: Any) -> Any:
    """The word-LM program's module (its RNNModel and TransformerModel) with ``torch`` bound to ``lib``.

    The program is plain PyTorch code (the ONNX tests run it under ember); it is loaded once per
    library, with ``torch`` and its submodules pointing at ``lib`` while it imports.
    """
    names = {
        "torch": lib,
        "torch.nn": lib.nn,
        "torch.nn.functional": lib.nn.functional,
        "torch.onnx": lib.onnx,
    }
    saved = {k: sys.modules.get(k) for k in names}
    sys.modules.update(names)
    try:
        spec = importlib.util.spec_from_file_location(f"_word_lm_{lib.__name__}", PROGRAM)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return mod


def build(lib: Any, kind: str) -> Any:
    """The example's RNNModel (LSTM, GRU) or TransformerModel (2 heads), at this bench's sizes."""
    prog = program(lib)
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note on nested tensors and batch_first
        if kind == "Transformer":
            return prog.TransformerModel(VOCAB, EMBED, 2, HIDDEN, LAYERS, DROPOUT)
        return prog.RNNModel(kind, VOCAB, EMBED, HIDDEN, LAYERS, DROPOUT)


def detach(h: Any) -> Any:
    if h is None:
        return None
    return tuple(detach(v) for v in h) if isinstance(h, tuple) else h.detach()


def make_step(lib: Any, model: Any, compiled: bool = False) -> Any:
    """One batch of the example's ``train()``: forward, NLL loss, backward, clipping, and the
    plain SGD update on ``p.data``; under ``ember.compile`` when ``compiled``."""
    criterion = lib.nn.NLLLoss()
    rnn = hasattr(model, "init_hidden")

    def step(x: Any, y: Any, hidden: Any) -> Any:
        model.zero_grad()
        if rnn:
            out, hidden = model(x, hidden)
        else:
            out = model(x).view(-1, VOCAB)
        loss = criterion(out, y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-LR)
        return loss, hidden

    return lib.compile(step) if compiled else step


def epoch(lib: Any, model: Any, data: Any, step: Any) -> float:
    """One training pass over ``data`` as the example's ``train()``; returns the last loss."""
    model.train()
    hidden = model.init_hidden(BATCH) if hasattr(model, "init_hidden") else None
    loss = None
    for i in range(0, data.size(0) - 1, BPTT):
        x, y = data[i : i + BPTT], data[i + 1 : i + 1 + BPTT].reshape(-1)
        loss, hidden = step(x, y, detach(hidden))
    return float(loss.item()) if loss is not None else math.nan


def _library(impl: str) -> Any:
    return torch_or_none() if impl == "torch" else ember


def _setup(kind: str, impl: str, batches: int, threads: int | None) -> tuple[Any, Any, Any, Any]:
    """(lib, model, data, step) for one (model, library), warmed up: lazy imports, caches and
    ember.compile's capture happen before the timed rounds."""
    lib = _library(impl)
    if threads is not None:
        lib.set_num_threads(threads)
    model = build(lib, kind)
    data = lib.tensor(corpus(batches))
    step = make_step(lib, model, impl == "ember.compile")
    epoch(lib, model, data[: 3 * BPTT + 1], step)
    return lib, model, data, step


def _timed_epoch(lib: Any, model: Any, data: Any, step: Any) -> tuple[float, float, float, int]:
    """(wall seconds, calling thread's CPU seconds, last loss, the process's minor page faults)
    of one epoch."""
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t0, c0 = time.perf_counter(), time.thread_time()
    loss = epoch(lib, model, data, step)
    wall, on_cpu = time.perf_counter() - t0, time.thread_time() - c0
    return wall, on_cpu, loss, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0


def _worker(conn: Any, kind: str, impl: str, batches: int, threads: int | None) -> None:
    """One (model, library) in a process of its own, as a user runs it: set up, then time one
    epoch per request until told to stop (None)."""
    try:
        setup = _setup(kind, impl, batches, threads)
        conn.send("ready")
        while conn.recv() is not None:
            conn.send(_timed_epoch(*setup))
    except BaseException as e:  # the parent reports it; a hung pipe would hide it
        conn.send(f"{type(e).__name__}: {e}")
        raise


class _Workers:
    """A process per (model, library), started together; each round asks each for one epoch in
    turn, so only one computes at a time and machine noise falls on every column alike."""

    def __init__(self, keys: list[tuple[str, str]], batches: int, threads: int | None) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conns: dict[tuple[str, str], Any] = {}
        self.procs = []
        for key in keys:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child, *key, batches, threads), daemon=True)
            proc.start()
            self.conns[key] = parent
            self.procs.append(proc)
        for key, conn in self.conns.items():
            self._answer(key, conn.recv())

    @staticmethod
    def _answer(key: tuple[str, str], got: Any) -> Any:
        if isinstance(got, str) and got != "ready":  # the worker's exception
            raise RuntimeError(f"{key} failed in its process: {got}")
        return got

    def epoch(self, key: tuple[str, str]) -> tuple[float, float, float, int]:
        self.conns[key].send(True)
        return self._answer(key, self.conns[key].recv())

    def close(self) -> None:
        for conn in self.conns.values():
            conn.send(None)
        for proc in self.procs:
            proc.join(timeout=30)


def run(
    batches: int,
    rounds: int,
    models: tuple[str, ...],
    threads: int | None = None,
    compiled: bool = False,
    same_process: bool = False,
) -> dict[str, Any]:
    """Time ``rounds`` epochs per (model, library). By default each (model, library) runs in a
    process of its own: sharing one process, the libraries share one malloc heap, and NumPy's
    buffers there keep glibc from returning PyTorch's freed 8 MB buffers to the system, which
    PyTorch alone does (its epoch then page-faults ~15-50 thousand times); ``same_process``
    times them side by side in this process instead."""
    impls = ["ember[cpu]"] + (["ember.compile"] if compiled else []) + (["torch"] if torch_or_none() else [])
    keys = [(kind, impl) for kind in models for impl in impls]
    times: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    faults: dict[tuple[str, str], list[int]] = {}
    if same_process:
        setups = {key: _setup(*key, batches, threads) for key in keys}
        timed = lambda key: _timed_epoch(*setups[key])
        workers = None
    else:
        workers = _Workers(keys, batches, threads)
        timed = workers.epoch
    try:
        for _ in range(rounds):
            for key in keys:
                wall, on_cpu, loss, flt = timed(key)
                times.setdefault(key, []).append(wall)
                cpu.setdefault(key, []).append(on_cpu)
                faults.setdefault(key, []).append(flt)
                if not math.isfinite(loss):
                    raise RuntimeError(f"{key}: loss {loss}")
    finally:
        if workers is not None:
            workers.close()
    rep = Report("wordlm")
    summary: dict[str, Any] = {
        "batches": batches,
        "rounds": rounds,
        "vocab": VOCAB,
        "threads": threads,
        "processes": "one per library" if workers else "shared",
    }
    for kind in models:
        case = f"word LM {kind} {batches}x(bptt {BPTT}, batch {BATCH})"
        for impl in impls:
            ts = times[(kind, impl)]
            flt = int(statistics.median(faults[(kind, impl)]))
            rep.add(case, impl, statistics.median(ts), rounds=[round(t, 4) for t in ts], page_faults=flt)
        ratio = rep.ratio(case, "ember[cpu]", "torch")
        summary[f"{kind.lower()}_ratio_vs_torch"] = ratio
        if ratio is not None:
            best = min(times[(kind, "ember[cpu]")]) / min(times[(kind, "torch")])
            summary[f"{kind.lower()}_best_ratio_vs_torch"] = best
            # the calling thread's CPU time: with --threads 1 both libraries compute on it, and
            # it does not count the time other processes of a shared machine hold the core
            on_cpu = statistics.median(cpu[(kind, "ember[cpu]")]) / statistics.median(cpu[(kind, "torch")])
            summary[f"{kind.lower()}_cpu_ratio_vs_torch"] = on_cpu
            flt_e, flt_t = (int(statistics.median(faults[(kind, i)])) for i in ("ember[cpu]", "torch"))
            print(
                f"{kind}: ember / torch = {ratio:.2f}x (median of {rounds}), best/best {best:.2f}x, "
                f"thread CPU time {on_cpu:.2f}x; page faults per epoch {flt_e} / {flt_t}",
                flush=True,
            )
        if compiled and "torch" in impls:
            cr = rep.ratio(case, "ember.compile", "torch")
            summary[f"{kind.lower()}_compile_ratio_vs_torch"] = cr
            if cr is not None:
                print(f"{kind}: ember.compile / torch = {cr:.2f}x (median of {rounds})", flush=True)
    return {"rep": rep, "summary": summary}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="10 batches, 3 rounds")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--threads", type=int, default=None, help="intra-op threads of both libraries")
    ap.add_argument(
        "--compile", action="store_true", help="also time ember with the step under ember.compile"
    )
    ap.add_argument(
        "--models", default=",".join(MODELS), help="comma-separated subset of LSTM,GRU,Transformer"
    )
    ap.add_argument(
        "--same-process",
        action="store_true",
        help="run every library in this process (default: a process per model and library)",
    )
    args = ap.parse_args()
    batches, rounds = (10, 3) if args.quick else (args.batches, args.rounds)
    models = tuple(m for m in args.models.split(",") if m)
    out = run(batches, rounds, models, args.threads, args.compile, args.same_process)
    path = out["rep"].write(os.path.join(os.path.dirname(__file__), "results"), out["summary"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
