"""Run under mpiexec: every collective against a NumPy reference; prints 'ok <rank>' at the end."""

import os
import signal
import sys
import time
from pathlib import Path

import ember
import ember.distributed as dist
import numpy as np
from ember.distributed import ReduceOp

dist.init_process_group("mpi")
R, W = dist.get_rank(), dist.get_world_size()


def data(r: int, shape: tuple = (2, 3), dtype: str = "float32") -> np.ndarray:
    return (np.arange(np.prod(shape)).reshape(shape) * (r + 1) + r).astype(dtype)


def t(a: np.ndarray) -> ember.Tensor:
    return ember.tensor(a)


def eq(got: ember.Tensor, want: np.ndarray) -> None:
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    assert got.numpy().dtype == want.dtype, (got.dtype, want.dtype)


every = np.stack([data(r) for r in range(W)])
refs = {
    ReduceOp.SUM: every.sum(0),
    ReduceOp.AVG: every.mean(0),
    ReduceOp.MAX: every.max(0),
    ReduceOp.MIN: every.min(0),
    ReduceOp.PRODUCT: every.prod(0),
}
for op, want in refs.items():
    x = t(data(R))
    assert dist.all_reduce(x, op=op) is None
    eq(x, want.astype("float32"))

ints = np.stack([data(r, dtype="int64") for r in range(W)])
x = t(data(R, dtype="int64"))
dist.all_reduce(x, op=ReduceOp.BXOR)
eq(x, np.bitwise_xor.reduce(ints, 0))
x = t(data(R, dtype="int64"))
dist.all_reduce(x)
eq(x, ints.sum(0))

# half types and bool reduce through float32 / uint8, and come back in their dtype
x = t(data(R)).to(ember.bfloat16)
dist.all_reduce(x)
assert x.dtype == ember.bfloat16
np.testing.assert_allclose(x.float().numpy(), every.sum(0), rtol=1e-2)
x = ember.tensor([R == 0, False, True])
dist.all_reduce(x, op=ReduceOp.MAX)
assert x.tolist() == [True, False, True]

# a strided view is reduced in place through its base
base = t(data(R, (3, 4)))
v = base.t()
dist.all_reduce(v)
eq(base, np.stack([data(r, (3, 4)) for r in range(W)]).sum(0))

for src in range(W):
    x = t(data(R))
    dist.broadcast(x, src=src)
    eq(x, data(src))

out = [ember.zeros(2, 3) for _ in range(W)]
dist.all_gather(out, t(data(R)))
for r in range(W):
    eq(out[r], data(r))

o = ember.zeros(W * 2, 3)
dist.all_gather_into_tensor(o, t(data(R)))
eq(o, np.concatenate([data(r) for r in range(W)]))
o = ember.zeros(W, 2, 3)
dist.all_gather_into_tensor(o, t(data(R)))
eq(o, every)

dst = W - 1
gl = [ember.zeros(2, 3) for _ in range(W)] if R == dst else None
dist.gather(t(data(R)), gl, dst=dst)
if R == dst:
    for r in range(W):
        eq(gl[r], data(r))

x = ember.zeros(2, 3)
dist.scatter(x, [t(data(r) * 10) for r in range(W)] if R == 1 else None, src=1)
eq(x, data(R) * 10)

x = t(data(R))
dist.reduce(x, dst=0, op=ReduceOp.MAX)
eq(x, every.max(0) if R == 0 else data(R))

o = ember.zeros(2, 3)
ins = [t(data(R) + j) for j in range(W)]
dist.reduce_scatter(o, ins)
eq(o, np.stack([data(r) + R for r in range(W)]).sum(0))

# all_to_all with uneven sizes: rank i sends j+1 copies of 10*i+j to rank j
ins = [ember.full((j + 1,), 10.0 * R + j) for j in range(W)]
outs = [ember.zeros(R + 1) for _ in range(W)]
dist.all_to_all(outs, ins)
for i in range(W):
    eq(outs[i], np.full(R + 1, 10.0 * i + R, "float32"))

# a backend the MPI engine cannot read (the 'contig' test backend) is staged through the host
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from ember_cpu.kernels import KERNELS
from fixtures.limited_backends import register

dev = register("contig", dict(KERNELS), contiguous_only=True)
before = dist.host_staging_counts().get("contig", 0)
base = t(data(R, (3, 4))).to(dev)
dist.all_reduce(base.t(), op=ReduceOp.MAX)
assert base.device.type == "contig"
eq(base.cpu(), np.stack([data(r, (3, 4)) for r in range(W)]).max(0))
out = [ember.zeros(2, 3, device=dev) for _ in range(W)]
dist.all_gather(out, t(data(R)).to(dev))
for r in range(W):
    eq(out[r].cpu(), data(r))
assert dist.host_staging_counts()["contig"] - before == 3, dist.host_staging_counts()  # 1 + (send, recv)

# async handles: started, then waited; results only after wait
x = t(data(R))
work = dist.all_reduce(x, async_op=True)
assert isinstance(work, dist.Work)
assert work.wait() is True and work.is_completed()
eq(x, every.sum(0))
works = [dist.broadcast(t(data(R)), src=0, async_op=True) for _ in range(3)]
assert all(w.wait() for w in works)

# p2p around a ring, blocking and non-blocking, with a tag and any-source receive
nxt, prv = (R + 1) % W, (R - 1) % W
x = ember.zeros(4, dtype=ember.int32)
s = dist.isend(ember.full((4,), R, dtype=ember.int32), dst=nxt, tag=7)
r = dist.irecv(x, src=prv, tag=7)
r.wait()
s.wait()
eq(x, np.full(4, prv, "int32"))
if R == 0:
    got = set()
    for _ in range(W - 1):
        y = ember.zeros(2)
        got.add(dist.recv(y))
        assert y.tolist() == [1.0, 1.0]
    assert got == set(range(1, W))
else:
    dist.send(ember.ones(2), dst=0)

# object collectives go through ember.load's safe unpickler
objs = [None] * W
dist.all_gather_object(objs, {"rank": R, "t": ember.full((2,), float(R))})
assert [o["rank"] for o in objs] == list(range(W))
assert objs[W - 1]["t"].tolist() == [W - 1.0, W - 1.0]
lst = [f"from {R}", R] if R == 0 else [None, None]
dist.broadcast_object_list(lst, src=0)
assert lst == ["from 0", 0], lst

# sub-groups: ranks [0, W-1]; others are not members and get -1
g = dist.new_group([0, W - 1])
if R in (0, W - 1):
    assert dist.get_world_size(g) == 2 and dist.get_rank(g) == (0 if R == 0 else 1)
    assert dist.get_process_group_ranks(g) == [0, W - 1] and dist.get_global_rank(g, 1) == W - 1
    x = ember.full((3,), float(R))
    dist.all_reduce(x, group=g)
    eq(x, np.full(3, W - 1.0, "float32"))
    x = ember.full((1,), float(R))
    dist.broadcast(x, src=W - 1, group=g)
    eq(x, np.full(1, W - 1.0, "float32"))
else:
    assert dist.get_rank(g) == -1 and dist.all_reduce(ember.ones(1), group=g) is None

if os.environ.get("EMBER_DISTRIBUTED_DEBUG") == "DETAIL":  # shapes are compared across ranks
    try:
        dist.all_reduce(ember.ones(5 if R == 1 else 4))
    except RuntimeError as e:
        print(f"mismatch {R}: {e}", flush=True)

dist.barrier()
print(f"ok {R}", flush=True)
if "--kill-rank-1" not in sys.argv:
    dist.destroy_process_group()
    assert not dist.is_initialized()
    sys.exit(0)

# a killed rank (the job runs with ULFM): every survivor's next collective names it
if R == 1:
    os.kill(os.getpid(), signal.SIGKILL)
try:
    for _ in range(1000):
        dist.all_reduce(ember.ones(4))
        time.sleep(0.001)
    print(f"rank {R}: no error", flush=True)
except RuntimeError as e:
    print(f"rank {R}: RuntimeError: {e}", flush=True)
time.sleep(1)  # let every survivor see the first failure before this rank's exit is another
os._exit(0)  # a world with a dead peer cannot finalize cleanly
