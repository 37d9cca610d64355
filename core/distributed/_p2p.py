"""Point-to-point on Tensors: ``send``/``recv`` and their non-blocking ``isend``/``irecv``.

Ranks are global; the engine gets them as ranks of the group. A receive from any rank
(``src=None``) reports the sender through ``recv``'s result or ``Work.result()``.
"""

from __future__ import annotations

from typing import Any

from ._buffers import Buf
from ._collectives import _tensor
from ._pg import Work, _group

__all__ = ["irecv", "isend", "recv", "send"]


def isend(tensor: Any, dst: int, group: Any = None, tag: int = 0) -> Work | None:
    """Start sending ``tensor`` to global rank ``dst``."""
    _tensor(tensor, "tensor")
    pg = _group(group)
    if pg is None:
        return None
    d = pg.group_rank(dst)
    if d == pg.rank():
        raise ValueError(
            "Invalid destination rank: destination rank should not be the same as the rank of the current process."
        )
    b = Buf(tensor, pg.engine)
    return Work(pg, f"send to rank {dst}", [pg.engine.send(b.a, d, tag)], None)


def irecv(tensor: Any, src: int | None = None, group: Any = None, tag: int = 0) -> Work | None:
    """Start receiving into ``tensor`` from global rank ``src`` (any rank when None);
    ``wait()`` then ``result()`` gives the sender."""
    _tensor(tensor, "tensor")
    pg = _group(group)
    if pg is None:
        return None
    s = None if src is None else pg.group_rank(src)
    if s is not None and s == pg.rank():
        raise ValueError(
            "Invalid source rank: source rank should not be the same as the rank of the current process."
        )
    b = Buf(tensor, pg.engine)
    req = pg.engine.recv(b.a, s, tag)

    def finish() -> int:
        b.commit()
        return pg.ranks[req.source()] if s is None else int(src)  # type: ignore[arg-type]

    who = "any rank" if src is None else f"rank {src}"
    return Work(pg, f"recv from {who}", [req], finish)


def send(tensor: Any, dst: int, group: Any = None, tag: int = 0) -> None:
    w = isend(tensor, dst, group, tag)
    if w is not None:
        w.wait()


def recv(tensor: Any, src: int | None = None, group: Any = None, tag: int = 0) -> int:
    """Receive into ``tensor``; returns the sender's global rank (-1 when not a member)."""
    w = irecv(tensor, src, group, tag)
    if w is None:
        return -1
    w.wait()
    return int(w.result())
