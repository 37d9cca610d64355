"""DataLoader: batches from a dataset, in the main process or in worker processes."""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import queue
import time
from collections.abc import Callable, Iterator
from typing import Any

from ._worker import ExceptionWrapper, IterableEnd, Resume, _Fetcher, _Job, worker_loop
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader"]

_POLL_S = 0.5  # how often a waiting parent checks that its workers are alive


class _InfiniteNone:
    """The "sampler" of an iterable dataset: every task is "the next batch"."""

    def __iter__(self) -> Iterator[None]:
        return itertools.repeat(None)


def _check_args(loader: DataLoader, shuffle: Any, sampler: Any, batch_sampler: Any) -> None:
    if loader.num_workers < 0:
        raise ValueError(
            "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
        )
    if loader.timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if loader.num_workers == 0 and loader.prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
            "multiprocessing, otherwise set prefetch_factor to None."
        )
    if loader.persistent_workers and loader.num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    if isinstance(loader.dataset, IterableDataset):
        for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
            if value not in (None, False):
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified {name} option, but got {name}={value}"
                )
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None and (
        loader.batch_size != 1 or shuffle or sampler is not None or loader.drop_last
    ):
        raise ValueError(
            "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
        )
    if batch_sampler is None and loader.batch_size is None and loader.drop_last:
        raise ValueError(
            "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
        )


class DataLoader:
    """Iterate over ``dataset`` in batches; ``num_workers > 0`` loads in worker processes.

    Example::

        loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True, num_workers=2)
        for xb, yb in loader: ...
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.drop_last = drop_last
        self.timeout = timeout
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        _check_args(self, shuffle, sampler, batch_sampler)
        if num_workers > 0 and prefetch_factor is None:
            self.prefetch_factor = 2
        self.pin_memory = pin_memory
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            sampler = _InfiniteNone()
        elif sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._is_iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        auto = batch_sampler is not None or (self._is_iterable and batch_size is not None)
        self._auto_collation = auto
        self.collate_fn = collate_fn or (default_collate if auto else default_convert)
        self._iterator: Any = None

    def _index_sampler(self) -> Any:
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def _job(self) -> _Job:
        return _Job(
            self.dataset,
            self._is_iterable,
            self._auto_collation,
            self.collate_fn,
            self.drop_last,
            self.batch_size,
        )

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None or self._iterator.closed:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator.reset()
            return self._iterator
        return _MultiProcessIter(self)

    def __len__(self) -> int:
        if self._is_iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler())


class _SingleProcessIter:
    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader
        self._fetcher = _Fetcher(loader._job())
        self._tasks = iter(loader._index_sampler())

    def __iter__(self) -> _SingleProcessIter:
        return self

    def __len__(self) -> int:
        return len(self.loader)

    def __next__(self) -> Any:
        return self._fetcher.fetch(next(self._tasks))


def _device_backends() -> list[str]:
    """Loaded backends whose arrays live off the host (their runtimes do not survive ``fork``)."""
    import numpy as np

    from ...backends import dtypes as D
    from ...backends import registry

    names = []
    for name, lb in list(getattr(registry, "_loaded", {}).items()):
        if getattr(lb, "unavailable", None) is not None:
            continue
        try:
            probe = lb.backend.empty((1,), D.float32, 0)
        except Exception:  # noqa: BLE001, S112 (a backend that cannot allocate is not in use)
            continue
        if not isinstance(probe, np.ndarray):
            names.append(name)
    return names


def _context(ctx: Any) -> Any:
    """The user's start method, else the platform's; but never ``fork`` once a device runtime is up.

    A forked child inherits an initialised OpenCL/CUDA runtime without its threads, and its
    first kernel can hang; ``spawn`` starts clean processes (the dataset must be picklable).
    """
    import multiprocessing as mp

    if ctx is not None:
        return mp.get_context(ctx) if isinstance(ctx, str) else ctx
    default = mp.get_context()
    if default.get_start_method() == "fork" and _device_backends():
        return mp.get_context("spawn")
    return default


class _MultiProcessIter:
    """Round-robin tasks to workers, ``prefetch_factor`` in flight each, results in order."""

    def __init__(self, loader: DataLoader) -> None:
        from ..._random import randint

        self.loader = loader
        self.closed = False
        n = loader.num_workers
        ctx = _context(loader.multiprocessing_context)
        base_seed = int(randint(0, 2**62, (), generator=loader.generator).item())
        self._result_queue = ctx.Queue()
        self._index_queues = [ctx.Queue() for _ in range(n)]
        self._workers: list[Any] = []
        try:
            for i in range(n):
                self._start_worker(ctx, i, base_seed)
        except BaseException as e:
            self._shutdown(force=True)
            if ctx.get_start_method() != "fork" and isinstance(
                e, (AttributeError, TypeError, pickle.PicklingError)
            ):
                raise RuntimeError(
                    f"DataLoader: workers start with {ctx.get_start_method()!r}, so the dataset, collate_fn and "
                    f"worker_init_fn must be picklable ({e}). ember uses 'spawn' by default once a device "
                    f"backend ({', '.join(_device_backends()) or 'none'}) is running in this process, because a "
                    "forked worker would inherit a broken device runtime. Define them at module level, or pass "
                    "multiprocessing_context='fork' if the workers never touch device tensors."
                ) from e
            raise
        self._epoch = 0
        self.reset(first=True)

    def _start_worker(self, ctx: Any, i: int, base_seed: int) -> None:
        loader = self.loader
        args = (
            loader._job(),
            self._index_queues[i],
            self._result_queue,
            base_seed,
            loader.worker_init_fn,
            i,
            loader.num_workers,
            os.getpid(),
        )
        p = ctx.Process(target=worker_loop, args=args, daemon=True)
        p.start()
        self._workers.append(p)

    def reset(self, first: bool = False) -> None:
        self._epoch += 1
        self._tasks = iter(self.loader._index_sampler())
        self._send_idx = self._rcvd_idx = 0
        self._task_info: dict[int, tuple] = {}
        self._active = [True] * len(self._workers)
        self._cycle = itertools.cycle(range(len(self._workers)))
        if not first:
            for q in self._index_queues:
                q.put(Resume())
        for _ in range(self.loader.prefetch_factor * len(self._workers)):  # type: ignore[operator]
            self._put_task()

    def __iter__(self) -> _MultiProcessIter:
        return self

    def __len__(self) -> int:
        return len(self.loader)

    def _put_task(self) -> None:
        for _ in range(len(self._workers)):
            w = next(self._cycle)
            if self._active[w]:
                break
        else:
            return
        try:
            indices = next(self._tasks)
        except StopIteration:
            return
        self._index_queues[w].put((self._epoch, self._send_idx, indices))
        self._task_info[self._send_idx] = (w,)
        self._send_idx += 1

    def __next__(self) -> Any:
        while True:
            if not self._skip_to_next_live_task():
                if not self.loader.persistent_workers:
                    self._shutdown()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                self._put_task()
                return self._unwrap(info[1])
            epoch, idx, data = self._get()
            if epoch != self._epoch:
                continue  # a result from an abandoned earlier epoch
            if isinstance(data, IterableEnd):
                self._active[data.worker_id] = False
                self._put_task()
                continue
            if idx in self._task_info:
                self._task_info[idx] = (self._task_info[idx][0], data)

    def _skip_to_next_live_task(self) -> bool:
        """Drop tasks of exhausted workers; False when nothing is left to receive."""
        while self._rcvd_idx < self._send_idx:
            info = self._task_info.get(self._rcvd_idx)
            if info is not None and (len(info) == 2 or self._active[info[0]]):
                return True
            self._task_info.pop(self._rcvd_idx, None)
            self._rcvd_idx += 1
        return False

    def _unwrap(self, data: Any) -> Any:
        if isinstance(data, ExceptionWrapper):
            self._shutdown()
            data.reraise()
        return data

    def _get(self) -> Any:
        timeout = self.loader.timeout
        start = time.monotonic()
        while True:
            wait = _POLL_S if not timeout else min(_POLL_S, max(0.0, timeout - (time.monotonic() - start)))
            try:
                return self._result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            dead = [str(p.pid) for p in self._workers if not p.is_alive()]
            if dead:
                self._shutdown(force=True)
                raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(dead)}) exited unexpectedly")
            if timeout and time.monotonic() - start >= timeout:
                self._shutdown(force=True)
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds")

    def _shutdown(self, force: bool = False) -> None:
        """Stop the workers: ask politely, or (``force``, a hung or dead worker) terminate at once."""
        if self.closed:
            return
        self.closed = True
        for q, p in zip(self._index_queues, self._workers):
            if p.is_alive():
                with contextlib.suppress(OSError, ValueError):
                    q.put(None)
        for p in self._workers:
            p.join(timeout=0.05 if force else 2.0)
            if p.is_alive():
                p.terminate()
                p.join(timeout=1.0)
        for q in (*self._index_queues, self._result_queue):
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        try:
            self._shutdown()
        except Exception:  # noqa: BLE001, S110 (interpreter shutdown: nothing to report to)
            pass
