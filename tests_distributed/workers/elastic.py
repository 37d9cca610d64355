"""An elastic training script (the example in docs/distributed.md): it checkpoints every step
and, when ``ember run --max-restarts`` restarts the group, resumes from its last checkpoint.

Usage: ember run --nproc-per-node 2 --max-restarts 1 elastic.py CKPT_DIR
The test makes rank 1 die on the first attempt (EMBER_TEST_KILL_AT=step).
"""

import os
import signal
import sys
from pathlib import Path

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

STEPS = 6
ckpt = Path(sys.argv[1]) / "last.pt"
dist.init_process_group("mpi")  # RANK, WORLD_SIZE, LOCAL_RANK come from ember run
rank, world = dist.get_rank(), dist.get_world_size()


def make():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))


model = DDP(make())
opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
start = 0
if ckpt.exists():  # a restart: continue where the last complete step left off
    state = ember.load(ckpt)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    start = state["step"]
    if rank == 0:
        print(f"resumed from step {start} (restart {os.environ['TORCHELASTIC_RESTART_COUNT']})", flush=True)

ember.manual_seed(1)
X, Y = ember.randn(world * 2, 3), ember.randn(world * 2, 1)
mine = slice(rank * 2, rank * 2 + 2)
kill_at = int(os.environ.get("EMBER_TEST_KILL_AT", "-1"))
for step in range(start, STEPS):
    if step == kill_at and rank == 1 and os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
        os.kill(os.getpid(), signal.SIGKILL)
    opt.zero_grad()
    nn.functional.mse_loss(model(X[mine]), Y[mine]).backward()
    opt.step()
    if rank == 0:  # ember.save writes atomically: a crash never leaves half a checkpoint
        ember.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step + 1}, ckpt)
    dist.barrier()

if rank == 0:  # the same training in one process, uninterrupted, on the whole batch
    ref = make()
    ref_opt = ember.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for _ in range(STEPS):
        ref_opt.zero_grad()
        nn.functional.mse_loss(ref(X), Y).backward()
        ref_opt.step()
    same = all(ember.allclose(p, q, atol=1e-6) for p, q in zip(model.module.parameters(), ref.parameters()))
    print(f"finished {STEPS} steps; matches one process: {same}", flush=True)
dist.destroy_process_group()
