"""Variable-length sequences: a padding collate_fn, a packed bidirectional GRU, a custom
autograd Function in the head, and ReduceLROnPlateau on a validation loss."""

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.optim.lr_scheduler import ReduceLROnPlateau
from torch.utils.data import DataLoader, Dataset

FEATURES, HIDDEN = 3, 10


class Sequences(Dataset):
    """Random walks; the target is the sum of the steps' first feature (of any length)."""

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        lengths = rng.integers(2, 9, n)
        self.items = [rng.standard_normal((k, FEATURES)).astype(np.float32) for k in lengths]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.from_numpy(self.items[i])
        return x, x[:, 0].sum().reshape(1)


def collate(batch: list[tuple[torch.Tensor, torch.Tensor]]):
    xs, ys = zip(*batch)
    lengths = torch.tensor([len(x) for x in xs])
    return pad_sequence(list(xs), batch_first=True), lengths, torch.stack(ys)


class SoftClip(torch.autograd.Function):
    """x / (1 + |x| / 10), with a hand-written backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x / (1 + x.abs() / 10)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return grad / (1 + x.abs() / 10) ** 2


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(FEATURES, HIDDEN, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * HIDDEN, 1)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        _, h = self.gru(packed)
        return SoftClip.apply(self.head(torch.cat([h[0], h[1]], dim=1)))


def init_from_numpy(model: nn.Module, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            bound = 1.0 / np.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


def main() -> None:
    rng = np.random.default_rng(0)
    train = DataLoader(Sequences(48, rng), batch_size=12, collate_fn=collate)
    valid = DataLoader(Sequences(16, rng), batch_size=16, collate_fn=collate)
    model = Regressor()
    init_from_numpy(model, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    scheduler = ReduceLROnPlateau(optimizer, factor=0.5, patience=0)
    for epoch in range(4):
        model.train()
        for x, lengths, y in train:
            optimizer.zero_grad()
            loss = nn.functional.smooth_l1_loss(model(x, lengths), y)
            loss.backward()
            optimizer.step()
            print(f"epoch {epoch} loss {loss.item():.8f}")
        model.eval()
        with torch.no_grad():
            val = sum(nn.functional.mse_loss(model(x, k), y, reduction="sum").item() for x, k, y in valid)
        scheduler.step(val)
        print(f"epoch {epoch} val {val:.8f} lr {optimizer.param_groups[0]['lr']:.8f}")


if __name__ == "__main__":
    main()
