"""An encoder-decoder nn.Transformer learning to reverse sequences: causal masks, a LambdaLR
warm-up, the whole model saved and restored (weights_only=False), then greedy decoding."""

import io

import numpy as np
import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR

VOCAB, D, LENGTH, BOS = 12, 16, 6, 1


class Reverser(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.transformer = nn.Transformer(
            D,
            nhead=2,
            num_encoder_layers=1,
            num_decoder_layers=1,
            dim_feedforward=32,
            dropout=0.0,
            batch_first=True,
            norm_first=True,
        )
        self.out = nn.Linear(D, VOCAB)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        h = self.transformer(self.embed(src), self.embed(tgt), tgt_mask=mask, tgt_is_causal=True)
        return self.out(h)


def init_from_numpy(model: nn.Module, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                continue
            bound = 1.0 / np.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


def main() -> None:
    rng = np.random.default_rng(0)
    model = Reverser()
    init_from_numpy(model, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    scheduler = LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 4))
    criterion = nn.CrossEntropyLoss(label_smoothing=0.05)
    for step in range(8):
        src = torch.from_numpy(rng.integers(2, VOCAB, (16, LENGTH)))
        target = src.flip(1)
        tgt_in = torch.cat([torch.full((16, 1), BOS), target[:, :-1]], dim=1)
        optimizer.zero_grad()
        loss = criterion(model(src, tgt_in).reshape(-1, VOCAB), target.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        print(f"step {step} loss {loss.item():.8f} lr {scheduler.get_last_lr()[0]:.8f}")

    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    restored = torch.load(buffer, weights_only=False)
    restored.eval()
    src = torch.from_numpy(rng.integers(2, VOCAB, (4, LENGTH)))
    with torch.no_grad():
        decoded = torch.full((4, 1), BOS)
        for _ in range(LENGTH):
            logits = restored(src, decoded)
            decoded = torch.cat([decoded, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
        final = nn.functional.log_softmax(restored(src, decoded[:, :-1]), dim=-1)
    print(f"decoded {decoded[:, 1:].flatten().tolist()}")
    print(f"log-likelihood {final.max(dim=-1).values.sum().item():.8f}")


if __name__ == "__main__":
    main()
