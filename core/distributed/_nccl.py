"""The NCCL engine: ember's collectives on CUDA arrays through CuPy's ``cupy.cuda.nccl``.

Each rank drives one GPU (``LOCAL_RANK``, else rank modulo the device count). The NCCL unique
id is shared over MPI (``mpi4py``) when there is more than one rank, so a multi-rank NCCL job is
launched with ``ember run`` or ``mpiexec``; world size 1 needs nothing. Every operation is
enqueued on one stream and completes when an event recorded after it has fired. Host (NumPy)
arrays are copied to the GPU and back (the frontend counts that staging).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

__all__ = ["NCCLEngine"]


def _cupy() -> tuple[Any, Any]:
    try:
        import cupy
        from cupy.cuda import nccl
    except ImportError as e:
        raise RuntimeError("the 'nccl' engine needs CuPy with NCCL (pip install cupy-cuda12x)") from e
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:  # no driver, no device
        raise RuntimeError(f"the 'nccl' engine needs CUDA, which is unavailable: {e}") from None
    if n == 0:
        raise RuntimeError("the 'nccl' engine needs CUDA, which is unavailable: no GPU found")
    return cupy, nccl


def nccl_error() -> type[BaseException]:
    from cupy.cuda import nccl

    return nccl.NcclError  # type: ignore[no-any-return]


class _Req:
    __slots__ = ("after", "engine", "event")

    def __init__(self, engine: NCCLEngine, after: Any = None) -> None:
        self.engine, self.after = engine, after
        self.event = engine.cupy.cuda.Event(disable_timing=True)
        self.event.record(engine.stream)

    def test(self) -> bool:
        if not self.event.done:
            try:
                self.engine.comm.check_async_error()
            except nccl_error() as e:
                raise RuntimeError(f"[ember.distributed nccl] {e}") from None
            return False
        if self.after is not None:
            self.after()
            self.after = None
        return True


class NCCLEngine:
    name = "nccl"

    def __init__(self, comm: Any, rank: int, size: int, world: list[int]) -> None:
        self.cupy, self.nccl = _cupy()
        self.comm, self.rank, self.size, self.world = comm, rank, size, world
        self.stream = self.cupy.cuda.Stream(non_blocking=True)
        n = self.nccl
        self.ops = {"SUM": n.NCCL_SUM, "PRODUCT": n.NCCL_PROD, "MIN": n.NCCL_MIN, "MAX": n.NCCL_MAX}
        self.types = {
            "float16": n.NCCL_FLOAT16, "float32": n.NCCL_FLOAT32, "float64": n.NCCL_FLOAT64,
            "int8": n.NCCL_INT8, "uint8": n.NCCL_UINT8, "int32": n.NCCL_INT32,
            "int64": n.NCCL_INT64, "bool": n.NCCL_UINT8,
        }  # fmt: skip

    @classmethod
    def create(cls, *, rank: int, world_size: int, **_: Any) -> NCCLEngine:
        cupy, nccl = _cupy()
        if world_size in (-1, 1) and rank in (-1, 0):
            rank, world_size, uid = 0, 1, nccl.get_unique_id()
        else:
            from ._mpi import _mpi

            world = _mpi().COMM_WORLD
            rank, world_size = world.Get_rank(), world.Get_size()
            uid = world.bcast(nccl.get_unique_id() if rank == 0 else None, root=0)
        local = int(os.environ.get("LOCAL_RANK", rank))
        cupy.cuda.Device(local % cupy.cuda.runtime.getDeviceCount()).use()
        comm = nccl.NcclCommunicator(world_size, uid, rank)
        return cls(comm, rank, world_size, list(range(world_size)))

    def native(self, backend: str) -> bool:
        return backend == "cuda"

    def split(self, ranks: list[int]) -> NCCLEngine | None:
        raise NotImplementedError("new_group is not supported by the 'nccl' engine yet; use 'mpi'")

    def failed_ranks(self) -> list[int]:
        return []

    def destroy(self) -> None:
        self.comm.destroy()

    # -- buffers: device arrays pass through; host arrays go to the GPU and come back ----------
    def _dev(self, a: Any, back: bool) -> tuple[Any, Any]:
        if a is None:
            return None, None
        if isinstance(a, self.cupy.ndarray):
            return a, None
        with self.stream:
            d = self.cupy.asarray(a)
        return d, ((lambda: d.get(out=a, stream=self.stream)) if back else None)

    def _args(self, a: Any) -> tuple[int, int, int]:
        return a.data.ptr, a.size, self.types[str(a.dtype)]

    def _run(self, fn: Any, *bufs: tuple[Any, bool]) -> _Req:
        # NCCL runs on its own stream: first wait for the work queued to produce the inputs
        self.stream.wait_event(self.cupy.cuda.get_current_stream().record())
        devs, backs = zip(*(self._dev(a, b) for a, b in bufs))
        fn(*devs)
        todo = [b for b in backs if b is not None]
        if todo:
            for b in todo:
                b()
        return _Req(self, None)

    def barrier(self) -> _Req:
        one = self.cupy.zeros(1, self.cupy.float32)
        return self.allreduce(one, "SUM")

    def send(self, a: Any, dst: int, tag: int) -> _Req:
        s = self.stream.ptr
        return self._run(lambda d: self.comm.send(*self._args(d), dst, s), (a, False))

    def recv(self, a: Any, src: int | None, tag: int) -> _Req:
        if src is None:
            raise RuntimeError("the 'nccl' engine cannot receive from any source; name src")
        s = self.stream.ptr
        return self._run(lambda d: self.comm.recv(*self._args(d), src, s), (a, True))

    def _op(self, op: str) -> int:
        if op not in self.ops:
            raise RuntimeError(f"the 'nccl' engine does not support ReduceOp.{op}")
        return self.ops[op]

    def allreduce(self, a: Any, op: str) -> _Req:
        s, o = self.stream.ptr, self._op(op)

        def go(d: Any) -> None:
            p, n, t = self._args(d)
            self.comm.allReduce(p, p, n, t, o, s)

        return self._run(go, (a, True))

    def reduce(self, a: Any, op: str, root: int) -> _Req:
        s, o = self.stream.ptr, self._op(op)

        def go(d: Any) -> None:
            p, n, t = self._args(d)
            self.comm.reduce(p, p, n, t, o, root, s)

        return self._run(go, (a, self.rank == root))

    def broadcast(self, a: Any, root: int) -> _Req:
        s = self.stream.ptr

        def go(d: Any) -> None:
            p, n, t = self._args(d)
            self.comm.broadcast(p, p, n, t, root, s)

        return self._run(go, (a, self.rank != root))

    def allgather(self, send: Any, recv: Any) -> _Req:
        s = self.stream.ptr

        def go(ds: Any, dr: Any) -> None:
            p, n, t = self._args(ds)
            self.comm.allGather(p, dr.data.ptr, n, t, s)

        return self._run(go, (send, False), (recv, True))

    def _grouped(self, pairs: Any) -> None:
        self.nccl.groupStart()
        try:
            for fn in pairs:
                fn()
        finally:
            self.nccl.groupEnd()

    def gather(self, send: Any, recv: Any | None, root: int) -> _Req:
        return self._chunks(send, recv, root, gather=True)

    def scatter(self, send: Any | None, recv: Any, root: int) -> _Req:
        return self._chunks(recv, send, root, gather=False)

    def _chunks(self, mine: Any, rooted: Any, root: int, gather: bool) -> _Req:
        s = self.stream.ptr

        def go(dm: Any, dr: Any) -> None:
            p, n, t = self._args(dm)
            steps: list[Callable[[], Any]] = []
            if self.rank == root:
                flat = dr.reshape(self.size, -1)
                for r in range(self.size):
                    q = flat[r].data.ptr
                    steps.append(
                        functools.partial(self.comm.recv if gather else self.comm.send, q, n, t, r, s)
                    )
            steps.append(
                (lambda: self.comm.send(p, n, t, root, s))
                if gather
                else (lambda: self.comm.recv(p, n, t, root, s))
            )
            self._grouped(steps)

        return self._run(go, (mine, not gather), (rooted, gather and self.rank == root))

    def reduce_scatter(self, send: Any, recv: Any, op: str) -> _Req:
        s, o = self.stream.ptr, self._op(op)

        def go(ds: Any, dr: Any) -> None:
            p, n, t = self._args(dr)
            self.comm.reduceScatter(ds.data.ptr, p, n, t, o, s)

        return self._run(go, (send, False), (recv, True))

    def alltoallv(self, send: Any, scounts: list[int], recv: Any, rcounts: list[int]) -> _Req:
        s = self.stream.ptr

        def go(ds: Any, dr: Any) -> None:
            t = self.types[str(ds.dtype)]
            so = ro = 0
            steps: list[Callable[[], Any]] = []
            for r in range(self.size):
                sp = ds[so:].data.ptr if scounts[r] else ds.data.ptr
                rp = dr[ro:].data.ptr if rcounts[r] else dr.data.ptr
                steps.append(functools.partial(self.comm.send, sp, scounts[r], t, r, s))
                steps.append(functools.partial(self.comm.recv, rp, rcounts[r], t, r, s))
                so, ro = so + scounts[r], ro + rcounts[r]
            self._grouped(steps)

        return self._run(go, (send, False), (recv, True))
