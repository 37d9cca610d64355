"""DistributedDataParallel and ZeroRedundancyOptimizer on 3 ranks equal one process on the
concatenated batch (the worker asserts; see workers/ddp.py)."""


def test_ddp_and_zero_match_one_process(run_ranks):
    p = run_ranks(3, "ddp.py")
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(line for line in p.stdout.splitlines() if line.startswith("ok")) == ["ok 0", "ok 1", "ok 2"]
