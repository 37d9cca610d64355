"""The CPU backend's cache of large host buffers: reuse only when no array is left."""

from __future__ import annotations

import threading

import ember
import numpy as np
import pytest
from ember_cpu import empty_cache
from ember_cpu.hostmem import HostCache, cache

F32 = np.dtype(np.float32)


def _ptr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_a_freed_block_is_reused_for_the_same_byte_size():
    c = HostCache(1 << 20, 64)
    a = c.empty((100,), F32)
    p = _ptr(a)
    del a
    b = c.empty((10, 5), np.dtype(np.float64))  # 400 bytes again, another shape and dtype
    assert _ptr(b) == p
    assert b.shape == (10, 5) and b.dtype == np.float64 and b.flags.c_contiguous


@pytest.mark.parametrize(
    "hold",
    [
        lambda a: a,
        lambda a: a[10:],  # a view
        lambda a: a.reshape(4, 25).T,  # a view of a view
        lambda a: memoryview(a),  # a buffer export
        lambda a: np.from_dlpack(a),  # a DLPack import (its base is a capsule)
        lambda a: ember.from_numpy(a),  # a tensor
    ],
    ids=["array", "view", "view-of-view", "memoryview", "dlpack", "tensor"],
)
def test_a_block_is_never_handed_out_while_anything_refers_to_it(hold):
    c = HostCache(1 << 20, 64)
    a = c.empty((100,), F32)
    a[:] = 7.0
    kept = hold(a)
    del a
    b = c.empty((100,), F32)
    b[:] = -1.0
    again = np.asarray(kept)
    assert not np.shares_memory(b, again)
    assert (again == 7.0).all()


def test_blocks_match_exact_sizes_so_storage_never_extends_past_the_elements():
    c = HostCache(1 << 20, 64)
    a = c.empty((100,), F32)
    p = _ptr(a)
    del a
    b = c.empty((101,), F32)
    assert _ptr(b) != p
    assert b.base.nbytes == 404  # the root storage is exactly the array


def test_small_arrays_and_a_disabled_cache_allocate_plainly():
    c = HostCache(1 << 20, 64)
    assert c.empty((15,), F32).base is None  # 60 bytes < 64
    off = HostCache(0, 64)
    assert off.empty((100,), F32).base is None
    assert off.held_bytes() == 0


def test_the_limit_bounds_held_bytes_and_idle_blocks_make_room():
    c = HostCache(1000, 64)
    a, b = c.empty((100,), F32), c.empty((100,), F32)
    third = c.empty((100,), F32)  # 1200 > 1000 while a and b live: plain allocation
    assert third.base is None and c.held_bytes() == 800
    del a, b
    d = c.empty((150,), F32)  # 600 bytes: idle blocks are released to make room
    assert d.base is not None and c.held_bytes() <= 1000


def test_a_block_made_after_releasing_others_stays_tracked():
    c = HostCache(1000, 64)
    a = c.empty((175,), F32)  # 700 bytes
    del a
    b = c.empty((100,), F32)  # 400 more would pass the limit: the idle 700 go first
    assert c.held_bytes() == 400
    del b
    assert c.empty_cache() == 400 and c.held_bytes() == 0  # the new block was findable


def test_empty_cache_releases_idle_blocks_only():
    c = HostCache(1 << 20, 64)
    busy = c.empty((100,), F32)
    idle = c.empty((200,), F32)
    del idle
    assert c.empty_cache() == 800
    assert c.held_bytes() == 400
    busy[:] = 1.0  # still valid
    assert busy.sum() == 100.0


def test_concurrent_threads_never_share_a_block():
    c = HostCache(1 << 22, 64)
    errors: list[str] = []

    def work(tid: int) -> None:
        for i in range(300):
            a = c.empty((256,), np.dtype(np.int64))
            a[:] = tid * 1000 + i
            if not (a == tid * 1000 + i).all():
                errors.append(f"thread {tid} iteration {i} saw another thread's values")
            del a

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_large_ember_results_stay_independent_when_buffers_are_reused():
    n = (2 << 20) // 4  # 2 MiB of float32: served by the cache
    a = ember.arange(n, dtype=ember.float32)
    b = ember.full((n,), 2.0)
    first = (a * b).numpy()  # the tensor dies; the exported array keeps its block
    second = a + b
    assert not np.shares_memory(first, second.numpy())
    assert first[:3].tolist() == [0.0, 2.0, 4.0] and first[-1] == 2.0 * (n - 1)
    assert second[:3].tolist() == [2.0, 3.0, 4.0]
    del first
    third = a - b  # may reuse the first block: second must not change
    assert second[:3].tolist() == [2.0, 3.0, 4.0] and third[:3].tolist() == [-2.0, -1.0, 0.0]


def test_module_empty_cache_gives_idle_memory_back():
    n = (4 << 20) // 4
    x = ember.ones(n)
    y = x * 3  # a cached 4 MiB block
    assert y.sum().item() == 3.0 * n
    held = cache.held_bytes()
    del y
    released = empty_cache()
    assert released >= 4 << 20
    assert cache.held_bytes() == held - released
