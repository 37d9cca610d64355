"""Every collective, p2p, async handles, object collectives and groups on 2 and 3 ranks; on 3
ranks, rank 1 is then killed and both survivors must name it."""

import ast

DEBUG = {"EMBER_DISTRIBUTED_DEBUG": "DETAIL"}


def _oks(p):
    return sorted(line for line in p.stdout.splitlines() if line.startswith("ok"))


def test_two_ranks_match_numpy_and_debug_names_mismatched_shapes(run_ranks):
    p = run_ranks(2, "collectives.py", env=DEBUG)
    assert p.returncode == 0, p.stdout + p.stderr
    assert _oks(p) == ["ok 0", "ok 1"]
    want = (
        "Detected mismatch between collectives on ranks: "
        "rank 0: all_reduce(shape=(4,), dtype=ember.float32, op=SUM); "
        "rank 1: all_reduce(shape=(5,), dtype=ember.float32, op=SUM)"
    )
    got = sorted(line for line in p.stdout.splitlines() if line.startswith("mismatch"))
    assert got == [f"mismatch 0: {want}", f"mismatch 1: {want}"], p.stdout


def test_three_ranks_match_numpy_then_a_killed_rank_is_named(run_ranks):
    p = run_ranks(3, "collectives.py", "--kill-rank-1", ft=True)
    assert _oks(p) == ["ok 0", "ok 1", "ok 2"], p.stdout + p.stderr
    lines = sorted(line for line in p.stdout.splitlines() if line.startswith("rank "))
    assert len(lines) == 2, p.stdout + p.stderr
    for r, line in zip((0, 2), lines):  # a survivor that looks late may also see the other one gone
        head = f"rank {r}: RuntimeError: [ember.distributed mpi] rank(s) "
        assert line.startswith(head) and "] died: MPI_ERR_PROC_FAILED" in line, line
        assert 1 in ast.literal_eval(line[len(head) : line.index("] died") + 1]), line
