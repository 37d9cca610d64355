"""ember.utils.data: datasets, samplers, default_collate and the DataLoader with worker processes."""

from __future__ import annotations

import collections
import functools
import operator
import os
import time

import ember
import numpy as np
import pytest
from ember.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    get_worker_info,
    random_split,
)


class Squares(Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict:
        return {"x": ember.tensor([float(i), float(i * i)]), "i": i, "pid": os.getpid()}


class Shards(IterableDataset):
    """The seed's pattern: each worker reads its own shard (here: its own range)."""

    def __init__(self, parts: list[range]) -> None:
        self.parts = parts

    def __iter__(self):
        info = get_worker_info()
        if info is None or info.num_workers != len(self.parts):
            raise ValueError("Number of workers doesn't match number of files.")
        yield from self.parts[info.id]


class Boom(Dataset):
    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int) -> int:
        if i == 5:
            raise KeyError(f"bad sample {i}")
        return i


def test_tensor_concat_subset_datasets() -> None:
    x, y = ember.arange(6.0).reshape(3, 2), ember.tensor([0, 1, 2])
    ds = TensorDataset(x, y)
    assert len(ds) == 3 and ds[1][1].item() == 1
    cat = ConcatDataset([ds, Squares(4)])
    assert len(cat) == 7 and cat.cumulative_sizes == [3, 7]
    assert cat[3]["i"] == 0 and cat[-1]["i"] == 3
    assert len(ds + ds) == 6
    sub = Subset(Squares(10), [7, 2])
    assert [sub[0]["i"], sub[1]["i"]] == [7, 2]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, ember.zeros(4))


def test_chain_dataset() -> None:
    class R(IterableDataset):
        def __init__(self, r: range) -> None:
            self.r = r

        def __iter__(self):
            return iter(self.r)

        def __len__(self) -> int:
            return len(self.r)

    chain = ChainDataset([R(range(2)), R(range(5, 7))])
    assert list(chain) == [0, 1, 5, 6] and len(chain) == 4


def test_random_split_is_a_partition_and_reproducible() -> None:
    g = ember.Generator().manual_seed(1)
    a, b = random_split(range(10), [0.7, 0.3], generator=g)
    assert len(a) == 7 and len(b) == 3
    assert sorted(list(a) + list(b)) == list(range(10))
    a2, _ = random_split(range(10), [7, 3], generator=ember.Generator().manual_seed(1))
    assert list(a2) == list(a)
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(10), [3, 3])


def test_samplers() -> None:
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    perm = list(RandomSampler(range(20), generator=ember.Generator().manual_seed(3)))
    assert sorted(perm) == list(range(20)) and perm != list(range(20))
    assert perm == list(RandomSampler(range(20), generator=ember.Generator().manual_seed(3)))
    draws = list(RandomSampler(range(3), replacement=True, num_samples=50))
    assert len(draws) == 50 and set(draws) <= {0, 1, 2}
    assert sorted(SubsetRandomSampler([5, 7, 9])) == [5, 7, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 40, generator=ember.Generator().manual_seed(0)))
    assert set(w) <= {1, 3} and w.count(3) > w.count(1)
    assert list(BatchSampler(range(7), 3, drop_last=False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(BatchSampler(range(7), 3, drop_last=True)) == 2
    with pytest.raises(
        ValueError, match="batch_size should be a positive integer value, but got batch_size=0"
    ):
        BatchSampler(range(3), 0, False)


def test_default_collate_structures() -> None:
    Point = collections.namedtuple("Point", "x y")
    batch = default_collate(
        [{"a": ember.ones(2), "n": 1, "f": 0.5, "s": "u"}, {"a": ember.zeros(2), "n": 2, "f": 1.5, "s": "v"}]
    )
    assert batch["a"].shape == (2, 2) and batch["n"].tolist() == [1, 2] and batch["n"].dtype == ember.int64
    assert batch["f"].dtype == ember.float64 and batch["s"] == ["u", "v"]
    pts = default_collate([Point(1, np.float32(2)), Point(3, np.float32(4))])
    assert isinstance(pts, Point) and pts.x.tolist() == [1, 3] and pts.y.dtype == ember.float32
    tup = default_collate([(np.zeros((2, 2)), 1), (np.ones((2, 2)), 0)])
    assert isinstance(tup, list) and tup[0].shape == (2, 2, 2) and tup[0].dtype == ember.float64
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        default_collate([object(), object()])


def test_loader_batches_shuffle_drop_last() -> None:
    ds = TensorDataset(ember.arange(10.0), ember.arange(10))
    assert [b[1].tolist() for b in DataLoader(ds, batch_size=4, drop_last=True)] == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
    ]
    assert len(DataLoader(ds, batch_size=4)) == 3
    g = ember.Generator().manual_seed(0)
    seen = [b[1].tolist() for b in DataLoader(ds, batch_size=4, shuffle=True, generator=g)]
    assert sorted(functools.reduce(operator.iadd, seen, [])) == list(range(10))
    assert list(DataLoader(list(range(3)), batch_size=None)) == [0, 1, 2]


def test_workers_match_single_process_and_use_other_processes() -> None:
    ds = Squares(23)
    ref = list(DataLoader(ds, batch_size=4))
    got = list(DataLoader(ds, batch_size=4, num_workers=2, prefetch_factor=3))
    assert len(got) == len(ref) == 6
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(r["x"].cpu().numpy(), g["x"].cpu().numpy())
        assert r["i"].tolist() == g["i"].tolist()
    assert set(functools.reduce(operator.iadd, (g["pid"].tolist() for g in got), [])).isdisjoint(
        {os.getpid()}
    )


def test_iterable_dataset_sharded_with_get_worker_info() -> None:
    ds = Shards([range(7), range(100, 105)])
    items = sorted(
        functools.reduce(operator.iadd, (b.tolist() for b in DataLoader(ds, batch_size=3, num_workers=2)), [])
    )
    assert items == list(range(7)) + list(range(100, 105))  # no duplicates, nothing lost
    with pytest.raises(ValueError, match="Number of workers doesn't match"):
        list(DataLoader(ds, batch_size=3))


def test_worker_exception_surfaces_with_traceback() -> None:
    loader = DataLoader(Boom(), batch_size=2, num_workers=2)
    t0 = time.monotonic()
    with pytest.raises(KeyError) as info:
        list(loader)
    msg = str(info.value)
    assert "Caught KeyError in DataLoader worker process" in msg and "bad sample 5" in msg
    assert "Traceback" in msg and "__getitem__" in msg
    assert time.monotonic() - t0 < 10


def test_worker_init_fn_seed_and_info() -> None:
    class Info(Dataset):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, i: int) -> tuple:
            info = get_worker_info()
            return info.id, info.num_workers, info.seed, os.environ.get("EMBER_TEST_WORKER", "")

    def init(worker_id: int) -> None:
        os.environ["EMBER_TEST_WORKER"] = f"w{worker_id}"

    rows = list(
        DataLoader(
            Info(), batch_size=None, num_workers=2, worker_init_fn=init, multiprocessing_context="fork"
        )
    )
    assert [r[0] for r in rows] == [0, 1, 0, 1] and all(r[1] == 2 for r in rows)
    assert [r[3] for r in rows] == ["w0", "w1", "w0", "w1"]
    assert rows[1][2] == rows[0][2] + 1
    assert get_worker_info() is None


def test_worker_init_fn_error_is_raised() -> None:
    def init(worker_id: int) -> None:
        raise RuntimeError(f"init failed in {worker_id}")

    with pytest.raises(RuntimeError, match="init failed in"):
        list(DataLoader(Squares(4), num_workers=1, worker_init_fn=init, multiprocessing_context="fork"))


def test_persistent_workers_keep_processes_across_epochs() -> None:
    loader = DataLoader(Squares(6), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b["i"].tolist() for b in loader]
    it = loader._iterator
    second = [b["i"].tolist() for b in loader]
    assert first == second == [[0, 1], [2, 3], [4, 5]]
    assert loader._iterator is it and all(p.is_alive() for p in it._workers)
    partial = iter(loader)
    next(partial)
    assert [b["i"].tolist() for b in loader] == first  # an abandoned epoch does not leak into the next
    it._shutdown()
    assert not any(p.is_alive() for p in it._workers)


def test_timeout_raises_instead_of_hanging() -> None:
    class Slow(Dataset):
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int) -> int:
            time.sleep(5)
            return i

    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        list(DataLoader(Slow(), num_workers=1, timeout=0.3, multiprocessing_context="fork"))
    assert time.monotonic() - t0 < 4


def test_dead_worker_is_reported() -> None:
    class Die(Dataset):
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int) -> int:
            os._exit(3)

    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(DataLoader(Die(), num_workers=1, multiprocessing_context="fork"))


def test_loader_argument_errors() -> None:
    ds = Squares(3)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        DataLoader(Shards([range(2)]), shuffle=True)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        DataLoader(ds, prefetch_factor=2)


def test_distributed_sampler_partitions_and_reshuffles_per_epoch() -> None:
    from ember.utils.data.distributed import DistributedSampler

    parts = [list(DistributedSampler(range(10), num_replicas=3, rank=r, seed=1)) for r in range(3)]
    assert all(len(p) == 4 for p in parts)
    flat = sorted(i for p in parts for i in p)
    assert set(flat) == set(range(10)) and len(flat) == 12  # padded to an even split
    s = DistributedSampler(range(10), num_replicas=2, rank=0)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first
    plain = [list(DistributedSampler(range(10), 3, r, shuffle=False, drop_last=True)) for r in range(3)]
    assert plain == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(range(10), num_replicas=3, rank=3)


def test_custom_samplers_and_collate_fn() -> None:
    from ember.utils.data.dataloader import default_collate as from_dataloader_module

    assert from_dataloader_module is default_collate
    ds = Squares(7)
    bs = BatchSampler(SequentialSampler(ds), 3, drop_last=False)
    assert [b["i"].tolist() for b in DataLoader(ds, batch_sampler=bs)] == [[0, 1, 2], [3, 4, 5], [6]]
    picked = DataLoader(ds, batch_size=2, sampler=SubsetRandomSampler([1, 5], generator=ember.Generator()))
    assert sorted(functools.reduce(operator.iadd, (b["i"].tolist() for b in picked), [])) == [1, 5]
    sizes = DataLoader(ds, batch_size=4, collate_fn=len, num_workers=1)
    assert list(sizes) == [4, 3]


def test_spawn_needs_picklable_datasets_and_says_so() -> None:
    class Local(Dataset):
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int) -> int:
            return i

    with pytest.raises(RuntimeError, match="must be picklable"):
        list(DataLoader(Local(), num_workers=1, multiprocessing_context="spawn"))
