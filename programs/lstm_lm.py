"""An LSTM language model: train a few steps, pickle the whole model, load it back safely."""

import os
import tempfile

import numpy as np
import torch
from torch import nn

VOCAB, EMBED, HIDDEN, SEQ, BATCH = 20, 12, 16, 10, 4


class LanguageModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, num_layers=2, batch_first=True)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out)


def init_from_numpy(model: nn.Module, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            bound = 1.0 / np.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


def main() -> None:
    rng = np.random.default_rng(0)
    # A corpus with structure to learn: each token mostly follows its predecessor by +3 mod VOCAB.
    corpus = [int(rng.integers(VOCAB))]
    for _ in range(400):
        step = 3 if rng.random() < 0.8 else int(rng.integers(VOCAB))
        corpus.append((corpus[-1] + step) % VOCAB)
    corpus = np.array(corpus, dtype=np.int64)

    model = LanguageModel()
    init_from_numpy(model, 1)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.03)

    for step in range(8):
        starts = rng.integers(0, len(corpus) - SEQ - 1, size=BATCH)
        window = np.stack([corpus[s : s + SEQ + 1] for s in starts])
        inputs, targets = torch.from_numpy(window[:, :-1]), torch.from_numpy(window[:, 1:])
        optimizer.zero_grad()
        logits = model(inputs)
        loss = criterion(logits.reshape(-1, VOCAB), targets.reshape(-1))
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        print(f"step {step} loss {loss.item():.8f} grad_norm {norm.item():.8f}")

    probe = torch.from_numpy(corpus[: SEQ + 1].copy())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.pt")
        torch.save(model, path)
        allowed = [LanguageModel, nn.Embedding, nn.LSTM, nn.Linear]
        with torch.serialization.safe_globals(allowed):
            loaded = torch.load(path, weights_only=True)

    model.eval()
    loaded.eval()
    with torch.no_grad():
        before = criterion(model(probe[None, :-1])[0], probe[1:])
        after = criterion(loaded(probe[None, :-1])[0], probe[1:])
    print(f"reloaded {type(loaded).__name__} probe loss {before.item():.8f} {after.item():.8f}")


if __name__ == "__main__":
    main()
