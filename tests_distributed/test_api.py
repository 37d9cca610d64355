"""One process (an MPI singleton): life cycle, argument checks and engine plugins."""

import pickle
from datetime import timedelta

import ember
import ember.distributed as dist
import pytest

NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


@pytest.fixture
def world():
    dist.init_process_group("mpi")
    yield
    dist.destroy_process_group()


def test_uninitialized_calls_raise_pytorchs_error():
    assert not dist.is_initialized()
    for f in (
        dist.get_rank,
        dist.get_world_size,
        dist.barrier,
        dist.new_group,
        lambda: dist.all_reduce(ember.ones(1)),
    ):
        with pytest.raises(ValueError, match="^Default process group has not been initialized"):
            f()


def test_life_cycle(world):
    assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
    assert dist.get_backend() == "mpi" == dist.Backend.MPI
    assert dist.get_process_group_ranks(dist.GroupMember.WORLD) == [0]
    with pytest.raises(ValueError, match="^trying to initialize the default process group twice!$"):
        dist.init_process_group("mpi")


def test_gloo_scripts_run_on_the_mpi_engine():
    dist.init_process_group("gloo")
    try:
        assert dist.get_backend() == "gloo"
        with pytest.raises(RuntimeError, match="^ProcessGroupGloo::broadcast: invalid root rank: 3$"):
            dist.broadcast(ember.ones(1), src=3)
    finally:
        dist.destroy_process_group()


def test_rank_disagreeing_with_mpi_is_refused():
    with pytest.raises(ValueError, match=r"rank=2, world_size=3\) disagrees with MPI \(rank 0 of 1\)"):
        dist.init_process_group("mpi", rank=2, world_size=3)
    assert not dist.is_initialized()


def test_unknown_engine_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"^Unknown backend type foo \(engines: gloo, mpi, nccl"):
        dist.init_process_group("foo")


def test_nccl_without_cuda_is_a_clear_error():
    with pytest.raises(RuntimeError, match="the 'nccl' engine needs (CuPy|CUDA)"):
        dist.init_process_group("nccl")
    assert not dist.is_initialized()


def test_argument_errors(world):
    t = ember.ones(3)
    with pytest.raises(TypeError, match="op must be a ReduceOp"):
        dist.all_reduce(t, op="sum")
    with pytest.raises(TypeError, match="Expected parameter `tensor` of type torch.Tensor"):
        dist.all_reduce([t])
    with pytest.raises(RuntimeError, match="^ProcessGroupMPI::broadcast: invalid root rank: 3$"):
        dist.broadcast(t, src=3)
    with pytest.raises(
        ValueError, match="^Invalid destination rank: destination rank should not be the same"
    ):
        dist.send(t, dst=0)
    with pytest.raises(
        RuntimeError, match=r"invalid output tensor list at index 0 \(expected length 1, got 2\)"
    ):
        dist.all_gather([ember.ones(3), ember.ones(3)], t)
    with pytest.raises(RuntimeError, match=r"invalid tensor size at index 0 \(expected \(3,\), got \(4,\)\)"):
        dist.all_gather([ember.ones(4)], t)
    with pytest.raises(ValueError, match="^Argument ``gather_list`` must be specified on destination rank.$"):
        dist.gather(t, None, dst=0)
    with pytest.raises(ValueError, match="^Argument ``scatter_list`` must be specified on source rank.$"):
        dist.scatter(t, None, src=0)
    with pytest.raises(RuntimeError, match="^invalid input tensor list size, must be world size$"):
        dist.reduce_scatter(t, [t, t])
    with pytest.raises(ValueError, match="^Cannot use ReduceOp.AVG with non-floating point tensors$"):
        dist.all_reduce(ember.ones(2, dtype=ember.int64), op=dist.ReduceOp.AVG)
    with pytest.raises(ValueError, match="the new group's world size should be less or equal"):
        dist.new_group([0, 1])


def test_world_of_one_runs_every_collective(world):
    t = ember.tensor([1.0, 2.0])
    assert dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True).wait()
    assert t.tolist() == [1.0, 2.0]
    out = [ember.zeros(2)]
    dist.all_gather(out, t)
    assert out[0].tolist() == [1.0, 2.0]
    objs = [None]
    dist.all_gather_object(objs, {"k": ember.ones(1)})
    assert objs[0]["k"].tolist() == [1.0]
    w = dist.barrier(async_op=True)
    assert w.wait(timeout=timedelta(seconds=5)) and w.is_completed()


def test_object_collectives_refuse_unsafe_objects(world):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    with pytest.raises(
        pickle.UnpicklingError, match="Unsupported global: GLOBAL print was not an allowed global"
    ):
        dist.all_gather_object([None], Evil())


def test_plugin_engine_registers_and_is_used():
    made = {}

    class Solo:
        name, rank, size = "solo", 0, 1

        def native(self, backend):
            return backend == "cpu"

        def allreduce(self, a, op):
            a *= 3  # a visible marker that this engine ran
            return type("Done", (), {"test": lambda self: True})()

        def destroy(self):
            made["destroyed"] = True

    def factory(**kw):
        made.update(kw)
        return Solo()

    dist.register_engine("solo", factory)
    assert "solo" in dist.available_engines()
    dist.init_process_group("solo", timeout=timedelta(seconds=3))
    try:
        t = ember.ones(2)
        dist.all_reduce(t)
        assert t.tolist() == [3.0, 3.0] and dist.get_backend() == "solo"
    finally:
        dist.destroy_process_group()
    assert made["rank"] == -1 and made["world_size"] == -1 and made["timeout"] == timedelta(seconds=3)
    assert made["destroyed"]


def test_a_peer_that_never_answers_times_out_naming_the_dead():
    class Stuck:
        name, rank, size = "stuck", 0, 2

        def native(self, backend):
            return True

        def allreduce(self, a, op):
            return type("Never", (), {"test": lambda self: False})()

        def failed_ranks(self):
            return [1]

        def destroy(self):
            pass

    dist.register_engine("stuck", lambda **kw: Stuck())
    dist.init_process_group("stuck", timeout=timedelta(seconds=0.2))
    try:
        with pytest.raises(
            RuntimeError,
            match=r"^\[rank 0\] all_reduce timed out after 0.2 s on "
            r"ProcessGroup\(stuck, ranks=\[0, 1\]\): rank\(s\) \[1\] died$",
        ):
            dist.all_reduce(ember.ones(1))
        work = dist.all_reduce(ember.ones(1), async_op=True)
        assert not work.is_completed()
        with pytest.raises(RuntimeError, match="timed out after 0.05 s"):
            work.wait(timeout=timedelta(seconds=0.05))
    finally:
        dist.destroy_process_group()
