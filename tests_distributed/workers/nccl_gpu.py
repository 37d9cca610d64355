"""The NCCL engine on a real GPU at world size 1 (one H200 lends one rank): run it where a GPU
and ember-cuda are installed, ``python tests_distributed/workers/nccl_gpu.py``; prints 'ok'.

CUDA tensors must go to NCCL without host staging; CPU tensors are staged and counted.
"""

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
assert dist.get_world_size() == 1 and dist.get_backend() == "nccl"
t = ember.arange(6.0, device="cuda").reshape(2, 3)
dist.all_reduce(t, op=dist.ReduceOp.AVG)
assert t.cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
v = t.t()  # a strided view: reduced through a contiguous copy, written back
dist.all_reduce(v, op=dist.ReduceOp.MAX)
assert t.cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
out = [ember.zeros(2, 3, device="cuda")]
dist.all_gather(out, t)
o = ember.zeros(6, device="cuda")
dist.all_gather_into_tensor(o, t)
g = [ember.zeros(2, 3, device="cuda")]
dist.gather(t * 2, g, dst=0)
s = ember.zeros(2, 3, device="cuda")
dist.scatter(s, [t + 1], src=0)
r = ember.zeros(3, device="cuda")
dist.reduce_scatter(r, [ember.tensor([7.0, 8.0, 9.0], device="cuda")])
outs = [ember.zeros(4, device="cuda")]
dist.all_to_all(outs, [ember.arange(4.0, device="cuda")])
w = dist.broadcast(t, src=0, async_op=True)
assert w.wait() and w.is_completed()
dist.barrier()
assert out[0].cpu().tolist() == t.cpu().tolist() and o.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
assert g[0].cpu().tolist() == (t * 2).cpu().tolist() and s.cpu().tolist() == (t + 1).cpu().tolist()
assert r.cpu().tolist() == [7.0, 8.0, 9.0] and outs[0].cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
assert "cuda" not in dist.host_staging_counts(), dist.host_staging_counts()
c = ember.ones(3)
dist.all_reduce(c)
assert dist.host_staging_counts().get("cpu", 0) >= 1 and c.tolist() == [1.0, 1.0, 1.0]
big = ember.ones(16 << 20, device="cuda")  # 64 MB
dist.all_reduce(big)
assert big[-1].item() == 1.0
ember.manual_seed(0)
model = DDP(nn.Linear(3, 2).to("cuda"))
x = ember.randn(4, 3, device="cuda")
model(x).pow(2).sum().backward()
assert model.module.weight.grad is not None and model.module.weight.grad.device.type == "cuda"
dist.destroy_process_group()
print("ok", flush=True)
