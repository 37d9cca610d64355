"""Prints torchrun's variables as ember run sets them; rank 1 then fails with exit code 3."""

import os
import sys
import time

keys = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RESTART_COUNT",
    "OMP_NUM_THREADS",
)
print("env", " ".join(f"{k}={os.environ[k]}" for k in keys), "argv", sys.argv[1:], flush=True)
if os.environ["RANK"] == "1":
    time.sleep(1)  # a failing rank ends the job: let rank 0 print first
    sys.exit(3)
