"""``ember.distributed``: PyTorch's ``torch.distributed`` API over trusted engines.

Processes start with ``ember run --nproc-per-node N script.py`` (or ``mpiexec``), call
``init_process_group("mpi")`` (or ``"nccl"`` for CUDA tensors, or a plugin engine's name)
and then use the collectives below on tensors of any backend. See docs/distributed.md.
"""

from __future__ import annotations

from ._collectives import (
    ReduceOp,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    barrier,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from ._engines import Engine, available_engines, register_engine
from ._objects import all_gather_object, broadcast_object_list, gather_object
from ._p2p import irecv, isend, recv, send
from ._pg import (
    DEFAULT_TIMEOUT as default_pg_timeout,
)
from ._pg import (
    Backend,
    GroupMember,
    ProcessGroup,
    Work,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    host_staging_counts,
    init_process_group,
    is_initialized,
    new_group,
)

__all__ = [
    "Backend",
    "Engine",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "available_engines",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "host_staging_counts",
    "init_process_group",
    "irecv",
    "is_available",
    "is_initialized",
    "isend",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "register_engine",
    "scatter",
    "send",
]


def is_available() -> bool:
    """ember.distributed is always built (engines may still be missing at init)."""
    return True
