"""A small transformer encoder that classifies token sequences, trained with AdamW."""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, D_MODEL, HEADS, SEQ, CLASSES = 16, 32, 4, 12, 2


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL, padding_idx=0)
        self.position = nn.Parameter(torch.zeros(1, SEQ, D_MODEL))
        layer = nn.TransformerEncoderLayer(
            D_MODEL, HEADS, dim_feedforward=64, dropout=0.0, activation="gelu", batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, CLASSES)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        padding = tokens == 0
        h = self.encoder(self.embed(tokens) + self.position, src_key_padding_mask=padding)
        keep = (~padding).unsqueeze(-1).to(h.dtype)
        pooled = (h * keep).sum(dim=1) / keep.sum(dim=1)
        return self.head(self.norm(pooled))


def init_from_numpy(model: nn.Module, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                continue  # LayerNorm keeps its ones and zeros
            bound = 1.0 / np.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


def make_batch(rng: np.random.Generator, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    tokens = rng.integers(1, VOCAB, size=(size, SEQ))
    lengths = rng.integers(4, SEQ + 1, size=size)
    for row, length in enumerate(lengths):
        tokens[row, length:] = 0
    # Class 1: token 7 appears before token 3 (an order-dependent rule attention must find).
    labels = []
    for row, length in zip(tokens, lengths):
        seq = list(row[:length])
        labels.append(int(7 in seq and (3 not in seq or seq.index(7) < seq.index(3))))
    return torch.from_numpy(tokens.astype(np.int64)), torch.tensor(labels)


def main() -> None:
    rng = np.random.default_rng(0)
    model = Classifier()
    init_from_numpy(model, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    for step in range(6):
        tokens, labels = make_batch(rng, 16)
        optimizer.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.8f}")

    model.eval()
    tokens, labels = make_batch(rng, 32)
    with torch.no_grad():
        logits = model(tokens)
        loss = F.cross_entropy(logits, labels)
        probs = logits.softmax(dim=-1)
    print(f"eval loss {loss.item():.8f} mean p1 {probs[:, 1].mean().item():.8f}")


if __name__ == "__main__":
    main()
