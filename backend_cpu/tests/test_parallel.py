"""Large elementwise ops split across threads: same values as one NumPy call."""

from __future__ import annotations

import multiprocessing
import os
import threading

import ember
import ml_dtypes
import numpy as np
import pytest
from ember_cpu import parallel


@pytest.fixture
def split_everything(monkeypatch):
    """Split every op with more than one element across three threads."""
    monkeypatch.setattr(parallel, "_PARALLEL_MIN", 2)
    before = parallel.get_num_threads()
    parallel.set_num_threads(3)
    yield
    parallel.set_num_threads(before)


def _rng_array(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


CASES = {
    "1-d odd length": (np.add, lambda: (_rng_array(1001), _rng_array(1001, seed=1))),
    "2-d short rows": (np.multiply, lambda: (_rng_array((3, 7)), _rng_array((3, 7), seed=1))),
    "transposed": (np.subtract, lambda: (_rng_array((40, 30)).T, _rng_array((30, 40), seed=1))),
    "expanded": (np.add, lambda: (np.broadcast_to(_rng_array((1, 50)), (60, 50)), _rng_array((60, 50)))),
    "python scalar": (np.true_divide, lambda: (_rng_array((17, 19)), 3.0)),
    "scalar first": (np.power, lambda: (2.0, _rng_array((1, 999)))),
    "compare": (np.less, lambda: (_rng_array(777), _rng_array(777, seed=1))),
    "nan max": (np.maximum, lambda: (np.array([1.0, np.nan, 3.0] * 100), np.array([np.nan, 2.0, 1.0] * 100))),
    "strided in, column split": (np.negative, lambda: (_rng_array((3, 8))[:, ::2],)),
    "leading ones": (np.negative, lambda: (_rng_array((1, 1, 9, 8))[:, :, :, ::2],)),
    "complex abs": (np.absolute, lambda: (_rng_array(500) + 1j * _rng_array(500, seed=1),)),
    "int floor divide": (np.floor_divide, lambda: (np.arange(-500, 500), 7)),
    "bfloat16": (
        np.add,
        lambda: (_rng_array(333).astype(ml_dtypes.bfloat16), np.asarray(1.5, ml_dtypes.bfloat16)),
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_split_results_equal_one_numpy_call(split_everything, case):
    uf, make = CASES[case]
    args = make()
    shape = next(a.shape for a in args if isinstance(a, np.ndarray) and a.ndim)
    got = parallel.run_ufunc(uf, args, shape, int(np.prod(shape)))
    want = uf(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_operands_that_still_need_broadcasting_take_numpy_s_own_path(split_everything):
    a, b = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    np.testing.assert_array_equal(parallel.run_ufunc(np.add, (b, a), (3,), 3), a + b)


class _Recorder:
    """A ufunc stand-in that records which thread filled which slab."""

    def __init__(self, fail_on_thread=None):
        self.calls: list[tuple[str, tuple[int, ...]]] = []
        self.contiguous: list[bool] = []
        self.fail_on_thread = fail_on_thread
        self.lock = threading.Lock()

    def resolve_dtypes(self, dtypes):
        return (*dtypes[:-1], np.dtype(np.float64))

    def __call__(self, a, b, out):
        name = threading.current_thread().name
        with self.lock:
            self.calls.append((name, out.shape))
            self.contiguous.append(out.flags.c_contiguous)
        if self.fail_on_thread and name.startswith(self.fail_on_thread):
            raise FloatingPointError("slab failed")
        np.add(a, b, out=out)


def test_each_element_is_written_by_exactly_one_of_the_threads(split_everything):
    rec = _Recorder()
    a, b = np.arange(12.0).reshape(4, 3), np.ones((4, 3))
    out = parallel.run_ufunc(rec, (a, b), (4, 3), 12)
    np.testing.assert_array_equal(out, a + 1)
    threads = {name for name, _ in rec.calls}
    assert len(rec.calls) == 3  # three slabs: the caller runs one, pool workers the rest
    assert threading.current_thread().name in threads and any(t.startswith("ember-cpu") for t in threads)
    assert sum(int(np.prod(s)) for _, s in rec.calls) == 12


@pytest.mark.parametrize("shape", [(4, 3), (1, 1, 7, 2), (2, 9), (5,)])
def test_every_output_slab_is_contiguous(split_everything, shape):
    rec = _Recorder()
    a = np.zeros(shape)
    parallel.run_ufunc(rec, (a, a), shape, a.size)
    assert len(rec.calls) >= 2 and all(rec.contiguous)


def test_one_thread_means_one_call(split_everything):
    parallel.set_num_threads(1)
    rec = _Recorder()
    parallel.run_ufunc(rec, (np.ones(100), np.ones(100)), (100,), 100)
    assert rec.calls == [(threading.current_thread().name, (100,))]


def test_an_error_in_a_worker_slab_reaches_the_caller(split_everything):
    rec = _Recorder(fail_on_thread="ember-cpu")
    with pytest.raises(FloatingPointError, match="slab failed"):
        parallel.run_ufunc(rec, (np.ones(90), np.ones(90)), (90,), 90)
    assert len(rec.calls) == 3  # every slab ran before the error was raised


def test_ember_ops_split_and_agree_with_numpy(split_everything):
    a_np, b_np = _rng_array((64, 33)), _rng_array((64, 33), seed=1)
    a, b = ember.from_numpy(a_np), ember.from_numpy(b_np)
    np.testing.assert_array_equal((a * b + a).numpy(), a_np * b_np + a_np)
    np.testing.assert_array_equal((a[:, ::2] > 0).numpy(), a_np[:, ::2] > 0)
    np.testing.assert_array_equal(ember.exp(a).numpy(), np.exp(a_np))


def _child(q):
    x = ember.ones(1 << 12)
    q.put(float((x + x).sum().item()))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_a_forked_child_can_split_ops_after_the_parent_did(split_everything):
    x = ember.ones(1 << 12)
    assert (x + x).sum().item() == 2.0 * (1 << 12)  # the parent's worker threads now exist
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    p.join(60)
    if p.is_alive():
        p.kill()
        pytest.fail("the forked child hung on a split op")
    assert p.exitcode == 0 and q.get(timeout=5) == 2.0 * (1 << 12)


def test_set_num_threads_is_ember_s_intra_op_setting():
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(3)
        assert ember.get_num_threads() == 3 and parallel.get_num_threads() == 3
    finally:
        ember.set_num_threads(before)


@pytest.mark.parametrize(
    "value, message",
    [
        (0, "set_num_threads expects a positive integer"),
        (-2, "set_num_threads expects a positive integer"),
        (2.5, "set_num_threads expects an int, but got float"),
        ("4", "set_num_threads expects an int, but got str"),
    ],
)
def test_set_num_threads_refuses_bad_values_like_pytorch(value, message):
    before = ember.get_num_threads()
    with pytest.raises(RuntimeError, match=message):
        ember.set_num_threads(value)
    assert ember.get_num_threads() == before


def test_default_thread_count_follows_omp_num_threads_or_the_affinity_mask(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "5")
    assert parallel._default_threads() == 5
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert parallel._default_threads() == len(os.sched_getaffinity(0))
