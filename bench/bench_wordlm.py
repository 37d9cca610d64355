"""Word-level language model training: ``python bench/bench_wordlm.py [--quick] [--rounds N]``.

The training loop of pytorch/examples' word_language_model (embedding 32, hidden 32, two
layers, bptt 20, batch 10, dropout 0.2, gradient clipping 0.25, plain SGD on ``p.data``,
hidden state carried and detached between batches) on a synthetic corpus of fixed seed with
a 10000-word vocabulary, for an LSTM, a GRU and a Transformer encoder, ember's CPU backend
beside PyTorch's CPU build in the same process. Each round times one pass over the corpus
for every (model, library), interleaved so that machine noise hits both alike; the summary
holds the median of the rounds and the ratio ember / PyTorch. Writes bench/results/wordlm.json.
On a shared machine pass ``--threads 1`` with ``OPENBLAS_NUM_THREADS=1`` in the environment:
oversubscribed OpenMP/BLAS threads spin and make both columns slow and noisy.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
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


def build(lib: Any, kind: str) -> Any:
    """The example's RNNModel / TransformerModel, written against ``lib`` (ember or torch)."""
    nn = lib.nn

    class RNNModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.drop = nn.Dropout(DROPOUT)
            self.encoder = nn.Embedding(VOCAB, EMBED)
            self.rnn = getattr(nn, kind)(EMBED, HIDDEN, LAYERS, dropout=DROPOUT)
            self.decoder = nn.Linear(HIDDEN, VOCAB)
            nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

        def forward(self, x: Any, hidden: Any) -> tuple:
            out, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
            logits = self.decoder(self.drop(out)).view(-1, VOCAB)
            return nn.functional.log_softmax(logits, dim=1), hidden

        def init_hidden(self) -> Any:
            h = lib.zeros(LAYERS, BATCH, HIDDEN)
            return (h, h.clone()) if kind == "LSTM" else h

    class PositionalEncoding(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.drop = nn.Dropout(DROPOUT)
            pos = np.arange(BPTT)[:, None]
            div = np.exp(np.arange(0, EMBED, 2) * (-math.log(10000.0) / EMBED))
            pe = np.zeros((BPTT, 1, EMBED), dtype=np.float32)
            pe[:, 0, 0::2], pe[:, 0, 1::2] = np.sin(pos * div), np.cos(pos * div)
            self.register_buffer("pe", lib.tensor(pe))

        def forward(self, x: Any) -> Any:
            return self.drop(x + self.pe[: x.size(0)])

    class TransformerModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.pos = PositionalEncoding()
            layer = nn.TransformerEncoderLayer(EMBED, 2, HIDDEN, DROPOUT)
            self.body = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
            self.encoder = nn.Embedding(VOCAB, EMBED)
            self.decoder = nn.Linear(EMBED, VOCAB)
            nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
            self.mask = nn.Transformer.generate_square_subsequent_mask(BPTT)

        def forward(self, x: Any, hidden: Any) -> tuple:
            h = self.pos(self.encoder(x) * math.sqrt(EMBED))
            out = self.decoder(self.body(h, self.mask))
            return nn.functional.log_softmax(out, dim=-1).view(-1, VOCAB), hidden

        def init_hidden(self) -> Any:
            return None

    lib.manual_seed(0)
    return TransformerModel() if kind == "Transformer" else RNNModel()


def detach(h: Any) -> Any:
    if h is None:
        return None
    return tuple(detach(v) for v in h) if isinstance(h, tuple) else h.detach()


def epoch(lib: Any, model: Any, data: Any) -> float:
    """One training pass over ``data`` as the example's ``train()``; returns the last loss."""
    model.train()
    criterion = lib.nn.NLLLoss()
    hidden = model.init_hidden()
    loss = None
    for i in range(0, data.size(0) - 1, BPTT):
        x, y = data[i : i + BPTT], data[i + 1 : i + 1 + BPTT].reshape(-1)
        model.zero_grad()
        hidden = detach(hidden)
        out, hidden = model(x, hidden)
        loss = criterion(out, y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-LR)
    return float(loss.item()) if loss is not None else math.nan


def run(batches: int, rounds: int, models: tuple[str, ...], threads: int | None = None) -> dict[str, Any]:
    torch = torch_or_none()
    if threads is not None:
        ember.set_num_threads(threads)
        if torch is not None:
            torch.set_num_threads(threads)
    libs: dict[str, Any] = {"ember[cpu]": ember}
    if torch is not None:
        libs["torch"] = torch
    ids = corpus(batches)
    rep = Report("wordlm")
    times: dict[tuple[str, str], list[float]] = {}
    setups = {
        (kind, impl): (lib, build(lib, kind), lib.tensor(ids))
        for kind in models
        for impl, lib in libs.items()
    }
    for lib, model, data in setups.values():
        epoch(lib, model, data[: 2 * BPTT + 1])  # warm up lazy imports and caches
    for _ in range(rounds):
        for key, (lib, model, data) in setups.items():
            t0 = time.perf_counter()
            loss = epoch(lib, model, data)
            times.setdefault(key, []).append(time.perf_counter() - t0)
            if not math.isfinite(loss):
                raise RuntimeError(f"{key}: loss {loss}")
    summary: dict[str, Any] = {"batches": batches, "rounds": rounds, "vocab": VOCAB, "threads": threads}
    for kind in models:
        case = f"word LM {kind} {batches}x(bptt {BPTT}, batch {BATCH})"
        for impl in libs:
            ts = times[(kind, impl)]
            rep.add(case, impl, statistics.median(ts), rounds=[round(t, 4) for t in ts])
        ratio = rep.ratio(case, "ember[cpu]", "torch")
        summary[f"{kind.lower()}_ratio_vs_torch"] = ratio
        if ratio is not None:
            best = min(times[(kind, "ember[cpu]")]) / min(times[(kind, "torch")])
            summary[f"{kind.lower()}_best_ratio_vs_torch"] = best
            print(
                f"{kind}: ember / torch = {ratio:.2f}x (median of {rounds}), best/best {best:.2f}x",
                flush=True,
            )
    return {"rep": rep, "summary": summary}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="10 batches, 3 rounds")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--threads", type=int, default=None, help="intra-op threads of both libraries")
    ap.add_argument(
        "--models", default=",".join(MODELS), help="comma-separated subset of LSTM,GRU,Transformer"
    )
    args = ap.parse_args()
    batches, rounds = (10, 3) if args.quick else (args.batches, args.rounds)
    out = run(batches, rounds, tuple(m for m in args.models.split(",") if m), args.threads)
    path = out["rep"].write(os.path.join(os.path.dirname(__file__), "results"), out["summary"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
