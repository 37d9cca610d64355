"""A dead rank, a silent rank and mismatched shapes end in a RuntimeError, never a hang."""


def _lines(p):
    return [line for line in p.stdout.splitlines() if line.startswith("rank ")]


def test_killed_rank_is_named_by_every_survivor(run_ranks):
    p = run_ranks(3, "faults.py", "killed", ft=True, timeout=60)
    lines = sorted(_lines(p))
    assert len(lines) == 2, p.stdout + p.stderr
    for r, line in zip((0, 2), lines):
        assert line.startswith(f"rank {r}: RuntimeError: [ember.distributed mpi] rank(s) [1"), line
        assert "died" in line


def test_silent_rank_times_out(run_ranks):
    p = run_ranks(3, "faults.py", "silent", ft=True, env={"T": "1"}, timeout=60)
    lines = _lines(p)
    assert any("all_reduce timed out after 1 s on ProcessGroup(mpi, ranks=[0, 1, 2])" in x for x in lines), (
        p.stdout
    )
    assert "rank 1: no error" in lines
