"""Collectives on Tensors, with PyTorch's signatures and checks (point-to-point: ``_p2p``).

Each call validates its arguments on this rank, turns tensors into engine buffers
(``_buffers.Buf``), starts the engine's non-blocking operation and returns a ``Work`` (with
``async_op=True``) or waits on it. With ``EMBER_DISTRIBUTED_DEBUG=DETAIL`` every collective
first compares its shapes and dtypes across ranks and raises naming the ranks that differ.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ._buffers import Buf
from ._pg import ProcessGroup, Work, _group

__all__ = [
    "ReduceOp",
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "all_to_all",
    "barrier",
    "broadcast",
    "gather",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
]


class ReduceOp(enum.Enum):
    SUM = "SUM"
    AVG = "AVG"
    PRODUCT = "PRODUCT"
    MIN = "MIN"
    MAX = "MAX"
    BAND = "BAND"
    BOR = "BOR"
    BXOR = "BXOR"

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}>"


def _tensor(x: Any, name: str) -> None:
    from .._tensor import Tensor

    if not isinstance(x, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
            f"             but got {type(x)} instead."
        )


def _tensors(xs: Any, name: str) -> None:
    if not isinstance(xs, (list, tuple)):
        raise TypeError(f"Invalid function argument: {name} should be a list of tensors")
    for x in xs:
        _tensor(x, name)


def _op(op: Any, what: str) -> str:
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{what}: op must be a ReduceOp (e.g. ReduceOp.SUM), got {op!r}")
    return op.value


def _pg_name(pg: ProcessGroup) -> str:
    """PyTorch's spelling of the group class in messages (``ProcessGroupGloo::broadcast``)."""
    known = {"gloo": "Gloo", "nccl": "NCCL", "mpi": "MPI"}
    return "ProcessGroup" + known.get(pg.backend_name, pg.backend_name.capitalize())


def _root(pg: ProcessGroup, rank: int, what: str) -> int:
    if not isinstance(rank, int) or rank not in pg.ranks:
        raise RuntimeError(f"{_pg_name(pg)}::{what}: invalid root rank: {rank}")
    return pg.group_rank(rank)


def _run(
    pg: ProcessGroup, what: str, reqs: list[Any], finish: Callable[[], Any] | None, async_op: bool
) -> Any:
    work = Work(pg, what, reqs, finish)
    if async_op:
        return work
    work.wait()
    return None


def _debug_check(pg: ProcessGroup, what: str, sig: str) -> None:
    """Compare ``what``'s signature (shapes, dtype, op) across the group's ranks."""
    if os.environ.get("EMBER_DISTRIBUTED_DEBUG", "").upper() != "DETAIL" or pg.size() == 1:
        return
    mine = np.zeros(512, np.uint8)
    raw = f"{what}({sig})".encode()[:512]
    mine[: len(raw)] = np.frombuffer(raw, np.uint8)
    every = np.zeros(512 * pg.size(), np.uint8)
    Work(pg, f"{what} (shape check)", [pg.engine.allgather(mine, every)], None).wait()
    sigs = [bytes(r).rstrip(b"\0").decode() for r in every.reshape(pg.size(), 512)]
    if len(set(sigs)) > 1:
        lines = "; ".join(f"rank {pg.ranks[i]}: {s}" for i, s in enumerate(sigs))
        raise RuntimeError(f"Detected mismatch between collectives on ranks: {lines}")


def _sig(*ts: Any) -> str:
    return ", ".join(f"shape={tuple(t.shape)}, dtype={t.dtype}" for t in ts)


def _same(ts: Any, ref: Any, what: str) -> None:
    for i, t in enumerate(ts):
        if tuple(t.shape) != tuple(ref.shape):
            raise RuntimeError(
                f"{what}: invalid tensor size at index {i} (expected {tuple(ref.shape)}, got {tuple(t.shape)})"
            )
        if t.dtype != ref.dtype:
            raise RuntimeError(
                f"{what}: invalid tensor type at index {i} (expected {ref.dtype}, got {t.dtype})"
            )


# -- collectives -------------------------------------------------------------------------------
def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Any:
    pg = _group(group)
    if pg is None:
        return None
    return _run(pg, "barrier", [pg.engine.barrier()], None, async_op)


def all_reduce(tensor: Any, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False) -> Any:
    """Reduce ``tensor`` over the group, in place on every rank."""
    _tensor(tensor, "tensor")
    name = _op(op, "all_reduce")
    pg = _group(group)
    if pg is None:
        return None
    _debug_check(pg, "all_reduce", _sig(tensor) + f", op={name}")
    b = _reduce_buf(tensor, pg, name)
    req = pg.engine.allreduce(b.a, "SUM" if name == "AVG" else name)
    return _run(pg, "all_reduce", [req], _avg_commit(b, pg, name), async_op)


def _reduce_buf(tensor: Any, pg: ProcessGroup, name: str) -> Buf:
    if name == "AVG" and not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError("Cannot use ReduceOp.AVG with non-floating point tensors")
    if name in ("BAND", "BOR", "BXOR") and (tensor.is_floating_point() or tensor.is_complex()):
        raise RuntimeError(f"Cannot use ReduceOp.{name} with a {tensor.dtype} tensor")
    return Buf(tensor, pg.engine, reduce=True)


def _avg_commit(b: Buf, pg: ProcessGroup, name: str) -> Callable[[], None]:
    def finish() -> None:
        if name == "AVG":
            b.a /= pg.size()
        b.commit()

    return finish


def reduce(
    tensor: Any, dst: int, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Any:
    """Reduce ``tensor`` over the group into ``dst``'s copy (others keep theirs)."""
    _tensor(tensor, "tensor")
    name = _op(op, "reduce")
    pg = _group(group)
    if pg is None:
        return None
    root = _root(pg, dst, "reduce")
    _debug_check(pg, "reduce", _sig(tensor) + f", op={name}")
    b = _reduce_buf(tensor, pg, name)
    req = pg.engine.reduce(b.a, "SUM" if name == "AVG" else name, root)
    finish = _avg_commit(b, pg, name) if pg.rank() == root else None
    return _run(pg, "reduce", [req], finish, async_op)


def broadcast(tensor: Any, src: int, group: Any = None, async_op: bool = False) -> Any:
    """Copy ``src``'s ``tensor`` into every rank's."""
    _tensor(tensor, "tensor")
    pg = _group(group)
    if pg is None:
        return None
    root = _root(pg, src, "broadcast")
    _debug_check(pg, "broadcast", _sig(tensor))
    b = Buf(tensor, pg.engine)
    finish = b.commit if pg.rank() != root else None
    return _run(pg, "broadcast", [pg.engine.broadcast(b.a, root)], finish, async_op)


def _flat_out(like: Any, n: int) -> Any:
    """An uninitialised flat tensor of ``n`` of ``like``'s elements on its device."""
    from .. import empty

    return empty((n,), dtype=like.dtype, device=like.device)


def _split_into(flat: Any, outs: list[Any]) -> None:
    from .. import no_grad

    with no_grad():
        o = 0
        for t in outs:
            n = t.numel()
            t.copy_(flat[o : o + n].view(tuple(t.shape)))
            o += n


def all_gather(tensor_list: list[Any], tensor: Any, group: Any = None, async_op: bool = False) -> Any:
    """Every rank's ``tensor`` into ``tensor_list`` (indexed by group rank)."""
    _tensors(tensor_list, "tensor_list")
    _tensor(tensor, "tensor")
    pg = _group(group)
    if pg is None:
        return None
    what = f"{_pg_name(pg)}::allgather"
    if len(tensor_list) != pg.size():
        raise RuntimeError(
            f"{what}: invalid output tensor list at index 0 (expected length {pg.size()}, got {len(tensor_list)})"
        )
    _same(tensor_list, tensor, what)
    _debug_check(pg, "all_gather", _sig(tensor))
    flat = _flat_out(tensor, tensor.numel() * pg.size())
    send_b, recv_b = Buf(tensor, pg.engine), Buf(flat, pg.engine)

    def finish() -> None:
        recv_b.commit()
        _split_into(flat, list(tensor_list))

    return _run(pg, "all_gather", [pg.engine.allgather(send_b.a, recv_b.a)], finish, async_op)


def all_gather_into_tensor(
    output_tensor: Any, input_tensor: Any, group: Any = None, async_op: bool = False
) -> Any:
    """Every rank's ``input_tensor`` concatenated (or stacked) into ``output_tensor``."""
    _tensor(output_tensor, "output_tensor")
    _tensor(input_tensor, "input_tensor")
    pg = _group(group)
    if pg is None:
        return None
    what = f"{_pg_name(pg)}::allgather_into_tensor"
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(
            f"{what}: output tensor size must be equal to world_size times input tensor size "
            f"(got {output_tensor.numel()} and {input_tensor.numel()})"
        )
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError(f"{what}: output tensor must have the same type as input tensor")
    _debug_check(pg, "all_gather_into_tensor", _sig(input_tensor))
    send_b, recv_b = Buf(input_tensor, pg.engine), Buf(output_tensor, pg.engine)
    return _run(
        pg, "all_gather_into_tensor", [pg.engine.allgather(send_b.a, recv_b.a)], recv_b.commit, async_op
    )


def gather(
    tensor: Any, gather_list: list[Any] | None = None, dst: int = 0, group: Any = None, async_op: bool = False
) -> Any:
    """Every rank's ``tensor`` into ``gather_list`` on ``dst``."""
    _tensor(tensor, "tensor")
    pg = _group(group)
    if pg is None:
        return None
    root = _root(pg, dst, "gather")
    me = pg.rank() == root
    if me:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _tensors(gather_list, "gather_list")
        if len(gather_list) != pg.size():
            raise RuntimeError("ProcessGroup::gather: Incorrect output list size")
        _same(gather_list, tensor, "gather")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    _debug_check(pg, "gather", _sig(tensor))
    send_b = Buf(tensor, pg.engine)
    if not me:
        return _run(pg, "gather", [pg.engine.gather(send_b.a, None, root)], None, async_op)
    flat = _flat_out(tensor, tensor.numel() * pg.size())
    recv_b = Buf(flat, pg.engine)

    def finish() -> None:
        recv_b.commit()
        _split_into(flat, list(gather_list))  # type: ignore[arg-type]

    return _run(pg, "gather", [pg.engine.gather(send_b.a, recv_b.a, root)], finish, async_op)


def scatter(
    tensor: Any,
    scatter_list: list[Any] | None = None,
    src: int = 0,
    group: Any = None,
    async_op: bool = False,
) -> Any:
    """``src``'s ``scatter_list[i]`` into rank i's ``tensor``."""
    _tensor(tensor, "tensor")
    pg = _group(group)
    if pg is None:
        return None
    root = _root(pg, src, "scatter")
    me = pg.rank() == root
    send = None
    if me:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _tensors(scatter_list, "scatter_list")
        if len(scatter_list) != pg.size():
            raise RuntimeError("ProcessGroup::scatter: Incorrect input list size")
        _same(scatter_list, tensor, "scatter")
        from .. import cat

        send = Buf(cat([t.reshape(-1) for t in scatter_list]), pg.engine).a
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    _debug_check(pg, "scatter", _sig(tensor))
    recv_b = Buf(tensor, pg.engine)
    return _run(pg, "scatter", [pg.engine.scatter(send, recv_b.a, root)], recv_b.commit, async_op)


def reduce_scatter(
    output: Any, input_list: list[Any], op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Any:
    """Reduce the ranks' ``input_list`` elementwise; rank i keeps entry i in ``output``."""
    _tensor(output, "output")
    _tensors(input_list, "input_list")
    pg = _group(group)
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise RuntimeError("invalid input tensor list size, must be world size")
    _same(input_list, output, "reduce_scatter")
    from .. import cat

    return reduce_scatter_tensor(output, cat([t.reshape(-1) for t in input_list]), op, group, async_op)


def reduce_scatter_tensor(
    output: Any, input: Any, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Any:
    """Reduce ``input`` (world size times ``output``'s elements); rank i keeps the i-th part."""
    _tensor(output, "output")
    _tensor(input, "input")
    name = _op(op, "reduce_scatter")
    pg = _group(group)
    if pg is None:
        return None
    if input.numel() != output.numel() * pg.size():
        raise ValueError(
            "input tensor must be the same size as output size times world size "
            f"(got {input.numel()} and {output.numel()})"
        )
    _debug_check(pg, "reduce_scatter", _sig(output) + f", op={name}")
    send_b, recv_b = _reduce_buf(input, pg, name), _reduce_buf(output, pg, name)
    req = pg.engine.reduce_scatter(send_b.a, recv_b.a, "SUM" if name == "AVG" else name)
    return _run(pg, "reduce_scatter", [req], _avg_commit(recv_b, pg, name), async_op)


def all_to_all(
    output_tensor_list: list[Any], input_tensor_list: list[Any], group: Any = None, async_op: bool = False
) -> Any:
    """Rank i's ``input_tensor_list[j]`` lands in rank j's ``output_tensor_list[i]``."""
    _tensors(output_tensor_list, "output_tensor_list")
    _tensors(input_tensor_list, "input_tensor_list")
    pg = _group(group)
    if pg is None:
        return None
    w = pg.size()
    for name, ts in (("input", input_tensor_list), ("output", output_tensor_list)):
        if len(ts) != w:
            raise RuntimeError(
                f"{_pg_name(pg)}::alltoall: {name} tensor list size {len(ts)} does not match world size {w}"
            )
    ref = input_tensor_list[0]
    for t in [*input_tensor_list, *output_tensor_list]:
        if t.dtype != ref.dtype:
            raise RuntimeError("all_to_all: tensors must all have the same dtype")
    _debug_check(pg, "all_to_all", "numels=" + ",".join(str(t.numel()) for t in input_tensor_list))
    from .. import cat

    item = ref.element_size()
    send = Buf(cat([t.reshape(-1) for t in input_tensor_list]), pg.engine)
    flat = _flat_out(ref, sum(t.numel() for t in output_tensor_list))
    recv_b = Buf(flat, pg.engine)
    sc = [t.numel() * item for t in input_tensor_list]
    rc = [t.numel() * item for t in output_tensor_list]

    def finish() -> None:
        recv_b.commit()
        _split_into(flat, list(output_tensor_list))

    return _run(pg, "all_to_all", [pg.engine.alltoallv(send.a, sc, recv_b.a, rc)], finish, async_op)
