"""Process groups: the default group's life cycle, sub-groups, and work handles.

A ``ProcessGroup`` is an engine plus the global ranks it spans. Every operation returns a
``Work`` whose requests the frontend polls against the group's timeout, so a dead or silent
peer turns into a ``RuntimeError`` naming it instead of a hang.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from ._engines import engine_factory

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "Work",
    "destroy_process_group",
    "get_backend",
    "get_global_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "host_staging_counts",
    "init_process_group",
    "is_initialized",
    "new_group",
]

DEFAULT_TIMEOUT = timedelta(minutes=10)
_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."
_state: dict[str, Any] = {"world": None, "groups": []}
_staged: Counter[str] = Counter()


def host_staging_counts() -> dict[str, int]:
    """Tensors copied through host memory because the engine cannot read their device, per
    backend (a CUDA tensor on the 'mpi' engine, a CPU tensor on 'nccl')."""
    return dict(_staged)


class ProcessGroup:
    """An engine over ``ranks`` (global ranks, in group-rank order)."""

    def __init__(self, engine: Any, ranks: list[int], backend: str, timeout: timedelta) -> None:
        self.engine, self.ranks, self.backend_name, self.timeout = engine, ranks, backend, timeout
        self._index = {g: i for i, g in enumerate(ranks)}

    def rank(self) -> int:
        return int(self.engine.rank)

    def size(self) -> int:
        return int(self.engine.size)

    def group_rank(self, global_rank: int) -> int:
        try:
            return self._index[global_rank]
        except (KeyError, TypeError):
            raise ValueError(f"Group {self} does not contain rank {global_rank}") from None

    def __repr__(self) -> str:
        return f"ProcessGroup({self.backend_name}, ranks={self.ranks})"


class _NonMember:
    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = _NonMember()


class Backend(str):
    """Engine names as PyTorch's ``dist.Backend`` constants (``Backend.GLOO``, ...)."""

    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"


def get_process_group_ranks(group: Any) -> list[int]:
    """The global ranks of ``group``, in group-rank order."""
    pg = _group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return list(pg.ranks)


def get_global_rank(group: Any, group_rank: int) -> int:
    """The global rank of ``group``'s rank ``group_rank``."""
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


class Work:
    """A started operation: ``wait()`` blocks until done (or the timeout), ``is_completed()``
    polls. ``finish`` runs once, when every request has finished (copies back, AVG)."""

    def __init__(
        self, pg: ProcessGroup, what: str, reqs: list[Any], finish: Callable[[], Any] | None
    ) -> None:
        self.pg, self.what, self.reqs, self.finish = pg, what, reqs, finish
        self._done = False
        self._result: Any = None

    def is_completed(self) -> bool:
        if self._done:
            return True
        while self.reqs and self.reqs[0].test():
            self.reqs.pop(0)
        if self.reqs:
            return False
        self._done = True
        if self.finish is not None:
            self._result = self.finish()
        return True

    def is_success(self) -> bool:
        return self.is_completed()

    def wait(self, timeout: timedelta | None = None) -> bool:
        limit = (timeout or self.pg.timeout).total_seconds()
        start = time.monotonic()
        spins = 0
        while not self.is_completed():  # each test drives the engine's progress (MPI's libnbc)
            spins += 1
            if spins > 200:  # past the fast path: yield the core to peers on oversubscribed hosts,
                waited = time.monotonic() - start  # and after a while stop burning it
                time.sleep(0 if waited < 0.5 else 0.0005)
                if waited > limit:
                    self._timed_out(limit)
        return True

    def _timed_out(self, limit: float) -> None:
        dead = [self.pg.ranks[r] for r in self.pg.engine.failed_ranks()]
        who = f"rank(s) {dead} died" if dead else "a peer did not take part"
        raise RuntimeError(f"[rank {get_rank()}] {self.what} timed out after {limit:g} s on {self.pg}: {who}")

    def result(self) -> Any:
        return self._result


def _done_work(pg: ProcessGroup, what: str) -> Work:
    w = Work(pg, what, [], None)
    w.is_completed()
    return w


def is_initialized() -> bool:
    return _state["world"] is not None


def _world() -> ProcessGroup:
    pg = _state["world"]
    if pg is None:
        raise ValueError(_NOT_INIT)
    return pg


def _group(group: Any) -> ProcessGroup | None:
    """The group to run on, or None when this rank is not a member (the op does nothing)."""
    world = _world()
    if group is None or group is GroupMember.WORLD:
        return world
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"expected a ProcessGroup, got {type(group).__name__}")
    return group


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Start the default group on engine ``backend`` ("mpi", "nccl" or a plugin's name).

    Rank and world size come from the engine (MPI's launch) or, when given, must agree with it;
    ``init_method="env://"`` reads ``RANK``/``WORLD_SIZE`` as ``ember run`` sets them."""
    if _state["world"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if init_method not in (None, "env://"):
        raise ValueError(f"init_method {init_method!r} is not supported; use 'env://' (ember run, mpiexec)")
    name = (backend or "mpi").lower()
    if init_method == "env://" or (rank == -1 and "RANK" in os.environ and "WORLD_SIZE" in os.environ):
        rank = int(os.environ.get("RANK", rank)) if rank == -1 else rank
        world_size = int(os.environ.get("WORLD_SIZE", world_size)) if world_size == -1 else world_size
    timeout = timeout or DEFAULT_TIMEOUT
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    engine = engine_factory(name)(rank=rank, world_size=world_size, timeout=timeout, init_method=init_method)
    pg = ProcessGroup(engine, list(range(engine.size)), name, timeout)
    _state["world"] = GroupMember.WORLD = pg


def destroy_process_group(group: Any = None) -> None:
    """Free ``group``'s engine; without one, every group and the default one."""
    world = _state["world"]
    if world is None:
        raise ValueError(_NOT_INIT)
    if group is not None and group is not world:
        if isinstance(group, ProcessGroup):
            group.engine.destroy()
            _state["groups"] = [g for g in _state["groups"] if g is not group]
        return
    for g in _state["groups"]:
        g.engine.destroy()
    world.engine.destroy()
    _state.update(world=None, groups=[])
    GroupMember.WORLD = None


def get_rank(group: Any = None) -> int:
    """This process's rank in ``group`` (-1 when not a member)."""
    pg = _group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group: Any = None) -> int:
    pg = _group(group)
    return -1 if pg is None else pg.size()


def get_backend(group: Any = None) -> str:
    pg = _group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg.backend_name


def new_group(
    ranks: list[int] | None = None, timeout: timedelta | None = None, backend: str | None = None, **_: Any
) -> Any:
    """A group of the global ``ranks``; every rank of the world must call it (as PyTorch)."""
    world = _world()
    ranks = sorted(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    if len(ranks) > world.size():
        raise ValueError(
            "the new group's world size should be less or equal to the world size set by init_process_group"
        )
    for r in ranks:
        if r < 0 or r >= world.size():
            raise ValueError("The new group's rank should be within the world_size set by init_process_group")
    if backend is not None and backend.lower() != world.backend_name:
        raise ValueError(f"new_group on engine {backend!r} differs from the default group's engine")
    engine = world.engine.split(ranks)
    if engine is None:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(engine, ranks, world.backend_name, timeout or world.timeout)
    _state["groups"].append(pg)
    return pg
