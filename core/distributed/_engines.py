"""Process-group engines: the transports ember's collectives run on, found as plugins.

An engine is what moves bytes between ranks: MPI (``mpi4py``, built in) and NCCL (CuPy's
``cupy.cuda.nccl``, for CUDA arrays). ember never ships a transport of its own. A third party
adds one the way a backend is added: an entry point in the group ``ember.distributed_engines``
naming a factory, or ``register_engine(name, factory)`` in code.

The factory is called as ``factory(rank=..., world_size=..., timeout=..., init_method=...)``
and returns an ``Engine``. Engines work on arrays, never Tensors: the frontend hands them
NumPy arrays (staged through the host, counted) unless ``native(backend_name)`` says the
engine reads that backend's arrays directly. Every operation starts and returns a request
whose ``test()`` says whether it finished (raising when the transport failed), so the
frontend can poll with a deadline and never hang on a dead rank.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Protocol

__all__ = ["Engine", "Request", "available_engines", "engine_factory", "register_engine"]

ENTRY_POINT_GROUP = "ember.distributed_engines"
_factories: dict[str, Callable[..., Engine]] = {}
_scanned = False


class Request(Protocol):
    def test(self) -> bool:
        """True once finished; raises ``RuntimeError`` if the transport failed."""


class Engine(Protocol):
    """What an engine provides. Arrays are written in place; ``op`` is a ``ReduceOp`` name
    ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"; AVG is done by the frontend);
    ranks are ranks within this engine's group."""

    name: str
    rank: int
    size: int

    def native(self, backend: str) -> bool: ...
    def split(self, ranks: list[int]) -> Engine | None: ...
    def failed_ranks(self) -> list[int]: ...
    def destroy(self) -> None: ...
    def barrier(self) -> Request: ...
    def send(self, a: Any, dst: int, tag: int) -> Request: ...
    def recv(self, a: Any, src: int | None, tag: int) -> Request: ...
    def allreduce(self, a: Any, op: str) -> Request: ...
    def reduce(self, a: Any, op: str, root: int) -> Request: ...
    def broadcast(self, a: Any, root: int) -> Request: ...
    def allgather(self, send: Any, recv: Any) -> Request: ...
    def gather(self, send: Any, recv: Any | None, root: int) -> Request: ...
    def scatter(self, send: Any | None, recv: Any, root: int) -> Request: ...
    def reduce_scatter(self, send: Any, recv: Any, op: str) -> Request: ...
    def alltoallv(self, send: Any, scounts: list[int], recv: Any, rcounts: list[int]) -> Request: ...


def register_engine(name: str, factory: Callable[..., Engine]) -> None:
    """Make ``init_process_group(backend=name)`` build its engine with ``factory``."""
    _factories[name.lower()] = factory


def _scan() -> None:
    global _scanned
    if _scanned:
        return
    _scanned = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        name = ep.name.lower()
        if name not in _factories:
            _factories[name] = _Lazy(ep)


class _Lazy:
    """An entry point loaded only when its engine is asked for (a broken plugin breaks only
    itself)."""

    def __init__(self, ep: Any) -> None:
        self.ep = ep

    def __call__(self, **kwargs: Any) -> Engine:
        return self.ep.load()(**kwargs)


def available_engines() -> list[str]:
    """Names ``init_process_group`` accepts: built-in and plugin engines."""
    _scan()
    return sorted(_factories)


def engine_factory(name: str) -> Callable[..., Engine]:
    _scan()
    try:
        return _factories[name.lower()]
    except KeyError:
        raise ValueError(f"Unknown backend type {name} (engines: {', '.join(available_engines())})") from None


def _builtin() -> None:
    from . import _mpi, _nccl

    register_engine("mpi", _mpi.MPIEngine.create)
    register_engine("gloo", _mpi.MPIEngine.create)  # PyTorch's CPU backend name: scripts run unchanged
    register_engine("nccl", _nccl.NCCLEngine.create)


_builtin()
