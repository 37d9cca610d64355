"""A GAN on 2-D points: a generator and a discriminator, each with its own optimizer."""

import numpy as np
import torch
from torch import nn

NOISE, BATCH = 4, 32


def init_from_numpy(model: nn.Module, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            bound = 1.0 / np.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


def main() -> None:
    rng = np.random.default_rng(0)
    generator = nn.Sequential(nn.Linear(NOISE, 32), nn.LeakyReLU(0.2), nn.Linear(32, 2))
    discriminator = nn.Sequential(
        nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1)
    )
    init_from_numpy(generator, 1)
    init_from_numpy(discriminator, 2)
    criterion = nn.BCEWithLogitsLoss()
    opt_g = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.5, 0.999))
    real_label, fake_label = torch.ones(BATCH, 1), torch.zeros(BATCH, 1)

    for step in range(8):
        angles = rng.uniform(0, 2 * np.pi, BATCH)
        real = torch.from_numpy(np.stack([np.cos(angles), np.sin(angles)], 1).astype(np.float32))
        noise = torch.from_numpy(rng.standard_normal((BATCH, NOISE)).astype(np.float32))
        fake = generator(noise)

        # Discriminator: real vs. a detached fake, so no gradient reaches the generator.
        opt_d.zero_grad()
        d_loss = criterion(discriminator(real), real_label) + criterion(
            discriminator(fake.detach()), fake_label
        )
        d_loss.backward()
        opt_d.step()

        # Generator: fool the updated discriminator; its stray gradients are cleared next step.
        opt_g.zero_grad()
        g_loss = criterion(discriminator(fake), real_label)
        g_loss.backward()
        opt_g.step()
        print(f"step {step} d_loss {d_loss.item():.8f} g_loss {g_loss.item():.8f}")

    with torch.no_grad():
        samples = generator(torch.from_numpy(rng.standard_normal((256, NOISE)).astype(np.float32)))
    print(f"mean radius {samples.norm(dim=1).mean().item():.8f}")


if __name__ == "__main__":
    main()
