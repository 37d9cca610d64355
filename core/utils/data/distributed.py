"""``DistributedSampler``: each process of a data-parallel job reads its own slice of the dataset."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import Any

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _from_process_group(name: str) -> int:
    try:
        from ... import distributed  # type: ignore[attr-defined]
    except ImportError:
        raise RuntimeError("Requires distributed package to be available") from None
    if not distributed.is_available() or not distributed.is_initialized():
        raise RuntimeError("Requires distributed package to be available")
    return distributed.get_world_size() if name == "num_replicas" else distributed.get_rank()


class DistributedSampler(Sampler):
    """Indices ``rank, rank + num_replicas, ...`` of a (shuffled, padded) order, the same in every process.

    Call ``set_epoch(epoch)`` before each epoch so the shuffle changes between epochs.
    Example: ``DataLoader(ds, sampler=DistributedSampler(ds, num_replicas=4, rank=0))``.
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        num_replicas = _from_process_group("num_replicas") if num_replicas is None else num_replicas
        rank = _from_process_group("rank") if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.shuffle, self.seed, self.drop_last = 0, shuffle, seed, drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[Any]:
        from ..._random import Generator, randperm

        n = len(self.dataset)
        if self.shuffle:
            g = Generator().manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[: self.total_size]
        else:
            pad = self.total_size - len(indices)
            while pad > 0:  # repeat from the start so every replica gets the same count
                indices += indices[:pad]
                pad = self.total_size - len(indices)
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Make the next ``__iter__`` use the shuffle of ``epoch``."""
        self.epoch = epoch
