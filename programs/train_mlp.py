"""A classifier trained with a DataLoader, SGD with momentum and a StepLR schedule."""

import numpy as np
import torch
from torch import nn
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


def init_from_numpy(model: nn.Module, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            bound = 1.0 / np.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((96, 8)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] ** 2 > 0.5).astype(np.int64) + (x[:, 2] > 1.0).astype(np.int64)
    dataset = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    order = rng.permutation(len(dataset)).tolist()
    loader = DataLoader(dataset, batch_size=16, sampler=order, drop_last=False)

    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 3))
    init_from_numpy(model, 1)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scheduler = StepLR(optimizer, step_size=2, gamma=0.5)

    for epoch in range(4):
        model.train()
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * xb.shape[0]
            print(f"loss {loss.item():.8f}")
        scheduler.step()
        print(f"epoch {epoch} mean {total / len(dataset):.8f} lr {scheduler.get_last_lr()[0]:.8f}")

    model.eval()
    with torch.no_grad():
        logits = model(torch.from_numpy(x))
        accuracy = (logits.argmax(dim=1) == torch.from_numpy(y)).float().mean()
    print(f"accuracy {accuracy.item():.8f}")


if __name__ == "__main__":
    main()
