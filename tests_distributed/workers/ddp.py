"""Run under mpiexec: DDP and ZeRO against one process training on the concatenated batch."""

import copy

import ember
import ember.distributed as dist
import numpy as np
from ember import nn
from ember.distributed.optim import ZeroRedundancyOptimizer
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
R, W = dist.get_rank(), dist.get_world_size()
B = 4  # samples per rank


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def net():
    ember.manual_seed(100 + R)  # every rank starts different: DDP must take rank 0's values
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    m.register_buffer("counter", ember.full((2,), float(R)))
    return m


rng = np.random.default_rng(0)
X = ember.tensor(rng.standard_normal((W * B, 4)).astype("float32"))
Y = ember.tensor(rng.standard_normal((W * B, 3)).astype("float32"))
mine = slice(R * B, (R + 1) * B)

# --- DDP + SGD, with tiny buckets so several all-reduces overlap backward ----------------------
model = DDP(net(), bucket_cap_mb=40 / 2**20)
assert len(model._buckets) > 1
assert model.module.counter.tolist() == [0.0, 0.0]  # buffers come from rank 0 too
assert sorted(model.state_dict()) == [
    "module.0.bias",
    "module.0.weight",
    "module.2.bias",
    "module.2.weight",
    "module.counter",
]
ref = copy.deepcopy(model.module)
launch, pending_at_launch = model._launch, []


def spy(bucket):  # how many parameters of later buckets still await their gradient
    pending_at_launch.append(sum(len(b.pending) for b in model._buckets))
    launch(bucket)


model._launch = spy
opt = ember.optim.SGD(model.parameters(), lr=0.1)
ref_opt = ember.optim.SGD(ref.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    nn.functional.mse_loss(model(X[mine]), Y[mine]).backward()
    opt.step()
    ref_opt.zero_grad()
    nn.functional.mse_loss(ref(X), Y).backward()
    ref_opt.step()
for p, q in zip(model.module.parameters(), ref.parameters()):
    close(p, q)
assert pending_at_launch[0] > 0, pending_at_launch  # the first all-reduce started mid-backward

# --- no_sync: the first micro-batch accumulates locally, the second syncs both ----------------
opt.zero_grad()
ref_opt.zero_grad()
half = slice(R * B, R * B + B // 2), slice(R * B + B // 2, (R + 1) * B)
with model.no_sync():
    nn.functional.mse_loss(model(X[half[0]]), Y[half[0]]).backward()
local = [p.grad.clone() for p in model.module.parameters()]
nn.functional.mse_loss(model(X[half[1]]), Y[half[1]]).backward()
halves = [
    ember.cat([X[r * B : r * B + B // 2] for r in range(W)]),
    ember.cat([X[r * B + B // 2 : (r + 1) * B] for r in range(W)]),
]
targets = [
    ember.cat([Y[r * B : r * B + B // 2] for r in range(W)]),
    ember.cat([Y[r * B + B // 2 : (r + 1) * B] for r in range(W)]),
]
for xs, ys in zip(halves, targets):
    nn.functional.mse_loss(ref(xs), ys).backward()
for p, q, g in zip(model.module.parameters(), ref.parameters(), local):
    close(p.grad, q.grad)
    assert not np.allclose(g.numpy(), q.grad.numpy())  # the no_sync step alone was local


# --- unused parameters ------------------------------------------------------------------------
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(4, 1)
        self.unused = nn.Linear(4, 1)

    def forward(self, x):
        return self.used(x)


m = DDP(Branchy(), find_unused_parameters=True)
for _ in range(2):
    m(X[mine]).sum().backward()
assert m.module.unused.weight.grad is None and m.module.used.weight.grad is not None
m = DDP(Branchy())
m(X[mine]).sum().backward()
try:
    m(X[mine])
    raise AssertionError("no error for an unfinished reduction")
except RuntimeError as e:
    assert str(e).startswith("Expected to have finished reduction in the prior iteration"), e

# --- ZeRO: Adam sharded over ranks, same parameters as plain Adam on the full batch ------------
model = DDP(net())
ref = copy.deepcopy(model.module)
zero = ZeroRedundancyOptimizer(model.parameters(), ember.optim.Adam, lr=0.01)
ref_opt = ember.optim.Adam(ref.parameters(), lr=0.01)
for _ in range(3):
    zero.zero_grad()
    nn.functional.mse_loss(model(X[mine]), Y[mine]).backward()
    zero.step()
    ref_opt.zero_grad()
    nn.functional.mse_loss(ref(X), Y).backward()
    ref_opt.step()
for p, q in zip(model.module.parameters(), ref.parameters()):
    close(p, q)
index = {id(p): i for i, p in enumerate(model.parameters())}
owned = sorted(index[id(p)] for p in zero.optim.state) if zero.optim else []
assert owned == sorted(index[id(p)] for p in zero.partition_parameters[R])
shards = [None] * W
dist.all_gather_object(shards, owned)
flat = sorted(i for s in shards for i in s)
assert flat == list(range(len(index))), shards  # every parameter's state lives on exactly one rank
assert all(shards), shards  # and every rank holds some
zero.consolidate_state_dict(to=0)
if R == 0:
    sd = zero.state_dict()
    ref_sd = ref_opt.state_dict()
    assert sorted(sd["state"]) == sorted(ref_sd["state"])
    for k in sd["state"]:
        close(sd["state"][k]["exp_avg"], ref_sd["state"][k]["exp_avg"])
else:
    try:
        zero.state_dict()
        raise AssertionError("state_dict without consolidation")
    except RuntimeError as e:
        assert "has not been consolidated on this rank" in str(e)

dist.destroy_process_group()
print(f"ok {R}", flush=True)
