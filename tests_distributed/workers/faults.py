"""Run under mpiexec --with-ft ulfm: argv[1] is the case. Survivors print what they caught."""

import os
import signal
import sys
import time
from datetime import timedelta

import ember
import ember.distributed as dist

case = sys.argv[1]
dist.init_process_group("mpi", timeout=timedelta(seconds=float(os.environ.get("T", "20"))))
R, W = dist.get_rank(), dist.get_world_size()
x = ember.ones(4)
try:
    if case == "killed":
        dist.barrier()
        if R == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        for _ in range(1000):  # stays in collectives until the failure surfaces
            dist.all_reduce(x)
            time.sleep(0.001)
    elif case == "silent":
        if R == 1:
            time.sleep(3)
        else:
            dist.all_reduce(x)
    print(f"rank {R}: no error", flush=True)
except RuntimeError as e:
    print(f"rank {R}: RuntimeError: {e}", flush=True)
sys.stdout.flush()
time.sleep(1)  # let every survivor see the first failure before this rank's exit is another
os._exit(0)  # a world with a dead peer cannot finalize cleanly
