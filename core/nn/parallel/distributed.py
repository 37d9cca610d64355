"""``DistributedDataParallel``: one model replica per rank, gradients averaged during backward.

At construction the replica takes rank 0's parameters and buffers. Parameters are grouped
into buckets of about ``bucket_cap_mb`` (reverse registration order: roughly the order their
gradients are produced); each parameter's post-accumulate-grad hook marks it ready, and a
bucket whose parameters are all ready is flattened and all-reduced asynchronously (AVG) while
the rest of backward runs. Buckets launch strictly in index order on every rank, since an
engine matches collectives by order. When the last bucket has launched, every bucket is
waited on and the averaged gradients are written back into ``.grad``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..modules.module import Module


class _Dist:
    def __getattr__(self, name: str) -> Any:
        from ... import distributed

        return getattr(distributed, name)


dist = _Dist()

__all__ = ["DistributedDataParallel"]

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error "
    "indicates that your module has parameters that were not used in producing loss. You can enable "
    "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`."
)


class _Bucket:
    __slots__ = ("flat", "params", "pending", "work")

    def __init__(self, params: list[Any]) -> None:
        self.params = params
        self.pending: set[int] = set()
        self.work: Any = None
        self.flat: Any = None


class DistributedDataParallel(Module):
    """Wraps ``module`` for data-parallel training over ``process_group`` (PyTorch's API)."""

    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
    ) -> None:
        super().__init__()
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient."
            )
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.process_group: Any = process_group or dist.GroupMember.WORLD
        if self.process_group is None:
            raise ValueError(
                "Default process group has not been initialized, please make sure to call init_process_group."
            )
        self.require_backward_grad_sync = True
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        names = [n for n, p in module.named_parameters() if p.requires_grad]
        params = [p for p in module.parameters() if p.requires_grad]
        self._check_shapes(names, params)
        self._sync_from_rank0(params, list(module.buffers()))
        self._params = params
        self._buckets = self._make_buckets(params, cap)
        self._where = {id(p): i for i, b in enumerate(self._buckets) for p in b.params}
        self._next = 0  # the next bucket to launch
        self._used: set[int] = set()
        self._armed = False
        for p in params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    # -- construction ------------------------------------------------------------------------
    def _check_shapes(self, names: list[str], params: list[Any]) -> None:
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in zip(names, params)]
        every: list[Any] = [None] * dist.get_world_size(self.process_group)
        dist.all_gather_object(every, mine, group=self.process_group)
        for r, theirs in enumerate(every):
            if theirs != mine:
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but rank {dist.get_rank()} has {len(mine)} "
                    f"params, while rank {self.process_group.ranks[r]} has inconsistent {len(theirs)} params "
                    "(or different shapes/dtypes)."
                )

    def _sync_from_rank0(self, params: list[Any], buffers: list[Any]) -> None:
        src = self.process_group.ranks[0]
        works = [
            dist.broadcast(t.detach(), src, group=self.process_group, async_op=True) for t in params + buffers
        ]
        for w in works:
            w.wait()

    @staticmethod
    def _make_buckets(params: list[Any], cap: int) -> list[_Bucket]:
        buckets: list[_Bucket] = []
        cur: list[Any] = []
        size = 0
        for p in reversed(params):
            if cur and (
                size + p.numel() * p.element_size() > cap
                or p.dtype != cur[0].dtype
                or p.device != cur[0].device
            ):
                buckets.append(_Bucket(cur))
                cur, size = [], 0
            cur.append(p)
            size += p.numel() * p.element_size()
        if cur:
            buckets.append(_Bucket(cur))
        return buckets

    # -- forward: arm the buckets ------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        from ... import is_grad_enabled

        if self._armed and self._next < len(self._buckets) and self.require_backward_grad_sync:
            raise RuntimeError(_UNFINISHED)
        if self.broadcast_buffers:
            bufs = list(self.module.buffers())
            if bufs:
                self._sync_from_rank0([], bufs)
        out = self.module(*inputs, **kwargs)
        self._armed = bool(is_grad_enabled() and self.training and self.require_backward_grad_sync)
        if self._armed:
            self._next = 0
            self._used = set()
            for b in self._buckets:
                b.pending = {id(p) for p in b.params}
                b.work = b.flat = None
            if self.find_unused_parameters:
                reached = _leaves_reached(out)
                for p in self._params:
                    if id(p) not in reached:
                        self._mark(p)
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes inside accumulate gradients locally; the next one outside syncs them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # -- backward: hooks launch buckets ------------------------------------------------------
    def _grad_ready(self, p: Any) -> None:
        if not self._armed:
            return
        self._used.add(id(p))
        self._mark(p)

    def _mark(self, p: Any) -> None:
        self._buckets[self._where[id(p)]].pending.discard(id(p))
        while self._next < len(self._buckets) and not self._buckets[self._next].pending:
            self._launch(self._buckets[self._next])
            self._next += 1
        for b in self._buckets[: self._next]:  # give the engine a chance to progress
            if b.work is not None:
                b.work.is_completed()
        if self._next == len(self._buckets):
            self._finish()

    def _launch(self, b: _Bucket) -> None:
        from ... import cat, no_grad, zeros

        with no_grad():
            parts = [
                (p.grad if p.grad is not None else zeros(p.shape, dtype=p.dtype, device=p.device))
                for p in b.params
            ]
            b.flat = cat([g.reshape(-1) for g in parts])
        b.work = dist.all_reduce(b.flat, op=dist.ReduceOp.AVG, group=self.process_group, async_op=True)

    def _finish(self) -> None:
        from ... import no_grad, tensor

        self._armed = False
        used = None
        if self.find_unused_parameters:  # a parameter unused on every rank keeps its grad
            flags = tensor([1 if id(p) in self._used else 0 for p in self._params])
            dist.all_reduce(flags, op=dist.ReduceOp.MAX, group=self.process_group)
            used = {id(p) for p, f in zip(self._params, flags.tolist()) if f}
        with no_grad():
            for b in self._buckets:
                b.work.wait()
                o = 0
                for p in b.params:
                    n = p.numel()
                    if used is None or id(p) in used:
                        g = b.flat[o : o + n].view(tuple(p.shape))
                        if p.grad is None:
                            p.grad = g.clone()
                        else:
                            p.grad.copy_(g)
                    o += n
                b.flat = b.work = None


def _leaves_reached(out: Any) -> set[int]:
    """ids of the leaf tensors the autograd graph of ``out`` reaches."""
    from ..._tensor import Tensor

    roots: list[Any] = []

    def collect(x: Any) -> None:
        if isinstance(x, Tensor):
            if x.grad_fn is not None:
                roots.append(x.grad_fn)
            elif x.requires_grad:
                seen_leaves.add(id(x))
        elif isinstance(x, (list, tuple)):
            for y in x:
                collect(y)
        elif isinstance(x, dict):
            for y in x.values():
                collect(y)

    seen_leaves: set[int] = set()
    collect(out)
    seen: set[int] = set()
    while roots:
        f = roots.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        var = getattr(f, "variable", None)
        if var is not None:
            seen_leaves.add(id(var))
        roots.extend(g for g, _ in f.next_functions)
    return seen_leaves
