"""The worker-process side of the DataLoader: fetch batches, report errors, shard iterables.

A worker reads ``(epoch, task, indices)`` from its index queue and puts
``(epoch, task, batch)`` on the shared result queue. Tensors cross the process boundary
as NumPy arrays (``Tensor.__reduce_ex__``) and are rebuilt as tensors in the parent.
A worker stops on ``None``, or when its parent process is gone.
"""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from collections.abc import Callable
from typing import Any

__all__ = ["ExceptionWrapper", "IterableEnd", "Resume", "WorkerInfo", "get_worker_info", "worker_loop"]


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id``, ``num_workers``, ``seed``, ``dataset``."""

    __slots__ = ("dataset", "id", "num_workers", "seed")

    def __init__(self, id: int, num_workers: int, seed: int, dataset: Any) -> None:
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's ``WorkerInfo``, or ``None`` in the main process.

    Example (shard an IterableDataset)::

        info = ember.utils.data.get_worker_info()
        files = self.files if info is None else self.files[info.id :: info.num_workers]
    """
    return _info


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process with its traceback."""

    def __init__(self, exc_info: Any, where: str) -> None:
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        try:
            exc = self.exc_type(msg)
        except Exception:  # noqa: BLE001 (an exception type that takes no message)
            raise RuntimeError(msg) from None
        raise exc


class IterableEnd:
    """A worker's IterableDataset copy is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class Resume:
    """Persistent workers: start a new epoch (re-create the dataset iterator)."""


class _Job:
    """What a worker needs to fetch: the dataset and how to batch it."""

    def __init__(
        self,
        dataset: Any,
        is_iterable: bool,
        auto_collation: bool,
        collate_fn: Callable[[Any], Any],
        drop_last: bool,
        batch_size: int | None,
    ) -> None:
        self.dataset, self.is_iterable, self.auto_collation = dataset, is_iterable, auto_collation
        self.collate_fn, self.drop_last, self.batch_size = collate_fn, drop_last, batch_size


class _Fetcher:
    def __init__(self, job: _Job) -> None:
        self.job = job
        self.it = iter(job.dataset) if job.is_iterable else None
        self.ended = False

    def fetch(self, indices: Any) -> Any:
        job = self.job
        if not job.is_iterable:
            if not job.auto_collation:
                return job.collate_fn(job.dataset[indices])
            getitems = getattr(job.dataset, "__getitems__", None)
            items = getitems(indices) if callable(getitems) else [job.dataset[i] for i in indices]
            return job.collate_fn(items)
        if not job.auto_collation:
            return job.collate_fn(next(self.it))  # type: ignore[arg-type]
        items = []
        for item in self.it:  # type: ignore[union-attr]
            items.append(item)
            if len(items) == job.batch_size:
                break
        if not items or (job.drop_last and len(items) < (job.batch_size or 0)):
            raise StopIteration
        return job.collate_fn(items)


def _seed_everything(seed: int) -> None:
    import numpy as np

    from ... import _random

    random.seed(seed)
    _random.manual_seed(seed)
    np.random.seed(seed % 2**32)


def worker_loop(
    job: _Job,
    index_queue: Any,
    result_queue: Any,
    base_seed: int,
    init_fn: Callable[[int], None] | None,
    worker_id: int,
    num_workers: int,
    parent_pid: int,
) -> None:
    """The body of a worker process (see the module docstring)."""
    global _info
    seed = base_seed + worker_id
    _seed_everything(seed)
    _info = WorkerInfo(worker_id, num_workers, seed, job.dataset)
    where = f"in DataLoader worker process {worker_id}"
    pending: Any = None
    fetcher: _Fetcher | None = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = _Fetcher(job)
    except Exception:  # noqa: BLE001 (every user error is carried to the parent)
        pending = ExceptionWrapper(sys.exc_info(), where)
    try:
        _serve(fetcher, pending, index_queue, result_queue, parent_pid, worker_id, where)
    except KeyboardInterrupt:
        pass


def _serve(
    fetcher: _Fetcher | None,
    pending: Any,
    index_queue: Any,
    result_queue: Any,
    parent_pid: int,
    worker_id: int,
    where: str,
) -> None:
    while True:
        try:
            task = index_queue.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent_pid:
                return  # the main process died: never outlive it
            continue
        if task is None:
            return
        if isinstance(task, Resume):
            if fetcher is not None:
                fetcher = _Fetcher(fetcher.job)
            continue
        epoch, idx, indices = task
        if pending is not None:
            data, pending = pending, None
        else:
            data = _fetch_one(fetcher, indices, worker_id, where)
        result_queue.put((epoch, idx, data))


def _fetch_one(fetcher: _Fetcher | None, indices: Any, worker_id: int, where: str) -> Any:
    if fetcher is None or fetcher.ended:
        return IterableEnd(worker_id)
    try:
        return fetcher.fetch(indices)
    except StopIteration:
        fetcher.ended = True
        return IterableEnd(worker_id)
    except Exception:  # noqa: BLE001 (every user error is carried to the parent)
        return ExceptionWrapper(sys.exc_info(), where)
