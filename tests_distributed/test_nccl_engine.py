"""The NCCL engine's Python at world size 1 over a fake CuPy (no GPU here): host tensors are
staged onto the "device" and back, counted, and every collective lands in the right place."""

import ember
import ember.distributed as dist
import pytest
from fake_cupy import _Comm, install


@pytest.fixture
def nccl_world(monkeypatch):
    install(monkeypatch)
    dist.init_process_group("nccl")
    yield
    dist.destroy_process_group()


def test_collectives_at_world_size_one(nccl_world):
    assert dist.get_backend() == "nccl" and dist.get_world_size() == 1
    before = dist.host_staging_counts().get("cpu", 0)
    t = ember.arange(6.0).reshape(2, 3)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    h = ember.tensor([1.5, 2.5], dtype=ember.float16)
    dist.all_reduce(h)  # half types reduce as float32 and come back as half
    assert h.dtype == ember.float16 and h.tolist() == [1.5, 2.5]
    out = [ember.zeros(2, 3)]
    dist.all_gather(out, t)
    assert out[0].tolist() == t.tolist()
    o = ember.zeros(6)
    dist.all_gather_into_tensor(o, t)
    assert o.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    g = [ember.zeros(2, 3)]
    dist.gather(t * 2, g, dst=0)
    assert g[0].tolist() == (t * 2).tolist()
    s = ember.zeros(2, 3)
    dist.scatter(s, [t + 1], src=0)
    assert s.tolist() == (t + 1).tolist()
    r = ember.zeros(3)
    dist.reduce_scatter(r, [ember.tensor([7.0, 8.0, 9.0])])
    assert r.tolist() == [7.0, 8.0, 9.0]
    outs = [ember.zeros(4)]
    dist.all_to_all(outs, [ember.arange(4.0)])
    assert outs[0].tolist() == [0.0, 1.0, 2.0, 3.0]
    b = ember.ones(2, dtype=ember.int64)
    dist.broadcast(b, src=0, async_op=True).wait()
    dist.reduce(b, dst=0, op=dist.ReduceOp.MAX)
    dist.barrier()
    assert b.tolist() == [1, 1]
    assert dist.host_staging_counts()["cpu"] - before >= 15  # CPU tensors are not NCCL's: staged
    assert {"allReduce", "allGather", "reduceScatter", "broadcast", "reduce"} <= set(_Comm.calls)
    objs = [None]
    dist.all_gather_object(objs, {"k": [1, "two"]})  # host bytes through the device engine
    lst = [None]
    dist.broadcast_object_list(lst, src=0)
    assert objs == [{"k": [1, "two"]}] and lst == [None]


def test_nccl_refuses_what_it_cannot_do(nccl_world):
    with pytest.raises(RuntimeError, match=r"^the 'nccl' engine does not support ReduceOp.BXOR$"):
        dist.all_reduce(ember.ones(2, dtype=ember.int64), op=dist.ReduceOp.BXOR)
    with pytest.raises(NotImplementedError, match="new_group is not supported by the 'nccl' engine"):
        dist.new_group([0])


def test_ddp_runs_on_the_nccl_engine(nccl_world):
    from ember import nn
    from ember.nn.parallel import DistributedDataParallel as DDP

    ember.manual_seed(0)
    model = DDP(nn.Linear(3, 2))
    x = ember.randn(4, 3)
    model(x).pow(2).sum().backward()
    ref = nn.Linear(3, 2)
    ref.load_state_dict({k[len("module.") :]: v for k, v in model.state_dict().items()})
    ref(x).pow(2).sum().backward()
    assert ember.allclose(model.module.weight.grad, ref.weight.grad)
    assert "allReduce" in _Comm.calls
