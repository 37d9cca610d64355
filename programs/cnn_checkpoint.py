"""A small CNN on synthetic images: a custom Dataset, BatchNorm, OneCycleLR, gradient
accumulation, and a state_dict checkpoint (model + optimizer + scheduler) resumed mid-run."""

import io

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import OneCycleLR
from torch.utils.data import DataLoader, Dataset


class Stripes(Dataset):
    """8x8 images of horizontal (0) or vertical (1) stripes plus noise."""

    def __init__(self, n: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, 2, n)
        base = np.zeros((n, 1, 8, 8), dtype=np.float32)
        base[self.labels == 0, :, ::2, :] = 1.0
        base[self.labels == 1, :, :, ::2] = 1.0
        self.images = base + 0.5 * rng.standard_normal(base.shape).astype(np.float32)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        return torch.from_numpy(self.images[i]), int(self.labels[i])


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 8, 3)
        self.fc = nn.Linear(8 * 2 * 2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        return self.fc(torch.flatten(x, 1))


def init_from_numpy(model: nn.Module, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("bn"):
                continue
            bound = 1.0 / np.sqrt(p[0].numel())
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


def build(steps: int) -> tuple[nn.Module, torch.optim.Optimizer, OneCycleLR]:
    model = Net()
    init_from_numpy(model, 1)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-2, alpha=0.9)
    scheduler = OneCycleLR(optimizer, max_lr=2e-2, total_steps=steps)
    return model, optimizer, scheduler


def main() -> None:
    loader = DataLoader(Stripes(64, 0), batch_size=8, shuffle=False)
    accumulate, epochs = 2, 2
    steps = epochs * len(loader) // accumulate
    model, optimizer, scheduler = build(steps)
    checkpoint = io.BytesIO()

    for epoch in range(epochs):
        if epoch == 1:
            # Resume from the checkpoint written at the end of epoch 0 into fresh objects.
            checkpoint.seek(0)
            state = torch.load(checkpoint)
            model, optimizer, scheduler = build(steps)
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
        model.train()
        for i, (images, labels) in enumerate(loader):
            loss = F.cross_entropy(model(images), labels) / accumulate
            loss.backward()
            if (i + 1) % accumulate == 0:
                optimizer.step()
                optimizer.zero_grad()
                scheduler.step()
            print(f"epoch {epoch} batch {i} loss {loss.item():.8f} lr {scheduler.get_last_lr()[0]:.8f}")
        if epoch == 0:
            state = {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "epoch": epoch,
            }
            torch.save(state, checkpoint)

    model.eval()
    test = Stripes(32, 1)
    images = torch.stack([test[i][0] for i in range(len(test))])
    with torch.no_grad():
        logits = model(images)
    labels = torch.from_numpy(test.labels)
    print(f"test loss {F.cross_entropy(logits, labels).item():.8f}")
    print(
        f"running_mean {model.bn1.running_mean.sum().item():.8f} var {model.bn1.running_var.sum().item():.8f}"
    )


if __name__ == "__main__":
    main()
