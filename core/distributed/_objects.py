"""Object collectives: Python objects between ranks under ``ember.load``'s safety rules.

Objects travel as ``ember.save`` archives and are rebuilt with the weights-only unpickler
(``core/_unpickler.py``): plain data, tensors and ``add_safe_globals`` types only, so a
compromised peer cannot make this rank run code (PyTorch's versions unpickle anything). The
bytes are host arrays; an engine on device memory (NCCL) copies them over and back.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from ._collectives import _root
from ._pg import Work, _group

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object"]


def _dumps(obj: Any) -> np.ndarray:
    from ..serialization import save

    f = io.BytesIO()
    save(obj, f)
    return np.frombuffer(f.getvalue(), np.uint8).copy()


def _loads(raw: np.ndarray, rank: int) -> Any:
    from ..serialization import load

    return load(io.BytesIO(raw.tobytes()), weights_only=True)


def _exchange_sizes(pg: Any, n: int) -> list[int]:
    mine = np.array([n], np.int64)
    every = np.zeros(pg.size(), np.int64)
    Work(
        pg, "object size exchange", [pg.engine.allgather(mine.view(np.uint8), every.view(np.uint8))], None
    ).wait()
    return [int(x) for x in every]


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """``object_list[i]`` becomes rank i's ``obj`` on every rank."""
    pg = _group(group)
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise RuntimeError(f"object_list must have world size {pg.size()} entries, got {len(object_list)}")
    raw = _dumps(obj)
    sizes = _exchange_sizes(pg, raw.size)
    top = max(sizes)
    send = np.zeros(top, np.uint8)
    send[: raw.size] = raw
    every = np.zeros(top * pg.size(), np.uint8)
    Work(pg, "all_gather_object", [pg.engine.allgather(send, every)], None).wait()
    for i, n in enumerate(sizes):
        object_list[i] = _loads(every[i * top : i * top + n], pg.ranks[i])


def gather_object(
    obj: Any, object_gather_list: list[Any] | None = None, dst: int = 0, group: Any = None
) -> None:
    """Rank i's ``obj`` into ``object_gather_list[i]`` on ``dst``."""
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, dst, "gather_object")
    if pg.rank() == root and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError("Argument ``object_gather_list`` must be specified on destination rank.")
    every: list[Any] = [None] * pg.size()
    all_gather_object(every, obj, group)
    if pg.rank() == root:
        object_gather_list[:] = every  # type: ignore[index]


def broadcast_object_list(
    object_list: list[Any], src: int = 0, group: Any = None, device: Any = None
) -> None:
    """Replace ``object_list``'s entries on every rank with ``src``'s."""
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, src, "broadcast_object_list")
    raw = _dumps(list(object_list)) if pg.rank() == root else np.zeros(0, np.uint8)
    n = np.array([raw.size], np.int64)
    Work(pg, "broadcast_object_list", [pg.engine.broadcast(n.view(np.uint8), root)], None).wait()
    if pg.rank() != root:
        raw = np.zeros(int(n[0]), np.uint8)
    Work(pg, "broadcast_object_list", [pg.engine.broadcast(raw, root)], None).wait()
    if pg.rank() != root:
        got = _loads(raw, pg.ranks[root])
        if len(got) != len(object_list):
            raise RuntimeError(
                f"broadcast_object_list: src has {len(got)} objects, this rank {len(object_list)}"
            )
        object_list[:] = got
