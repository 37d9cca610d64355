"""Every collective, p2p, async handles, object collectives and groups on 2 and 3 ranks."""

import pytest

DEBUG = {"EMBER_DISTRIBUTED_DEBUG": "DETAIL"}


@pytest.mark.parametrize(("n", "env"), [(2, DEBUG), (3, None)])
def test_collectives_match_numpy(run_ranks, n, env):
    p = run_ranks(n, "collectives.py", env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(line for line in p.stdout.splitlines() if line.startswith("ok")) == [
        f"ok {r}" for r in range(n)
    ]
    if env:  # the debug shape check raised on every rank, naming both shapes
        want = (
            "Detected mismatch between collectives on ranks: "
            "rank 0: all_reduce(shape=(4,), dtype=ember.float32, op=SUM); "
            "rank 1: all_reduce(shape=(5,), dtype=ember.float32, op=SUM)"
        )
        got = sorted(line for line in p.stdout.splitlines() if line.startswith("mismatch"))
        assert got == [f"mismatch 0: {want}", f"mismatch 1: {want}"], p.stdout
