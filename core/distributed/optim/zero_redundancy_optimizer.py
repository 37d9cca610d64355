"""``ZeroRedundancyOptimizer``: each rank keeps the optimizer state of its own parameters only.

Parameters are partitioned greedily (largest first, to the rank holding the fewest elements, as
PyTorch does), each rank steps a local ``optimizer_class`` over its partition, then every
parameter is broadcast from its owner so all replicas agree again. The state (Adam's moments,
say) thus costs 1/world of its usual memory on each rank.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import distributed as dist
from ...optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]

_NOT_CONSOLIDATED = (
    "Optimizer state has not been consolidated on this rank. Please call `consolidate_state_dict(to={to})` "
    "on all ranks beforehand if you meant to save the global state."
)


class ZeroRedundancyOptimizer(Optimizer):
    """Wraps ``optimizer_class(local params, **defaults)``; ``.optim`` is this rank's shard."""

    def __init__(
        self,
        params: Any,
        optimizer_class: type[Optimizer],
        process_group: Any = None,
        parameters_as_bucket_view: bool = False,
        overlap_with_ddp: bool = False,
        **defaults: Any,
    ) -> None:
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer(overlap_with_ddp=True) is not supported")
        super().__init__(params, defaults)
        self.process_group: Any = process_group or dist.GroupMember.WORLD
        if self.process_group is None:
            raise ValueError(
                "Default process group has not been initialized, please make sure to call init_process_group."
            )
        self.optimizer_class = optimizer_class
        self.world_size = dist.get_world_size(self.process_group)
        self.rank = dist.get_rank(self.process_group)
        self._all_params = [p for g in self.param_groups for p in g["params"]]
        self._owner = self._partition()
        local = [
            {
                **{k: v for k, v in g.items() if k != "params"},
                "params": [p for p in g["params"] if self._mine(p)],
            }
            for g in self.param_groups
        ]
        self._local_groups = [i for i, g in enumerate(local) if g["params"]]
        kept = [local[i] for i in self._local_groups]
        self.optim: Optimizer | None = optimizer_class(kept, **defaults) if kept else None
        self._consolidated: dict[str, Any] | None = None

    def _partition(self) -> dict[int, int]:
        """Global rank owning each parameter (by id): largest first, to the least loaded rank."""
        owner: dict[int, int] = {}
        load = [0] * self.world_size
        for g in self.param_groups:
            for p in sorted(g["params"], key=lambda t: -t.numel()):
                r = min(range(self.world_size), key=lambda i: load[i])
                owner[id(p)] = r
                load[r] += p.numel()
        return owner

    def _mine(self, p: Any) -> bool:
        return self._owner[id(p)] == self.rank

    @property
    def partition_parameters(self) -> list[list[Any]]:
        """The parameters each group rank steps (index = group rank)."""
        return [[p for p in self._all_params if self._owner[id(p)] == r] for r in range(self.world_size)]

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        if self.optim is not None:
            for lg, gi in zip(self.optim.param_groups, self._local_groups):  # options changed by schedulers
                lg.update({k: v for k, v in self.param_groups[gi].items() if k != "params"})
            loss = self.optim.step(closure)
        else:
            loss = closure() if closure is not None else None
        ranks = self.process_group.ranks
        works = [
            dist.broadcast(p.detach(), ranks[self._owner[id(p)]], group=self.process_group, async_op=True)
            for p in self._all_params
        ]
        for w in works:
            w.wait()
        return loss

    def _local_state(self) -> dict[int, Any]:
        """This rank's optimizer state keyed by global parameter index."""
        if self.optim is None:
            return {}
        index = {id(p): i for i, p in enumerate(self._all_params)}
        return {index[id(p)]: dict(s) for p, s in self.optim.state.items()}

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Collect every shard's state on global rank ``to`` (every rank must call it)."""
        shards: list[Any] = [None] * self.world_size
        dist.all_gather_object(shards, self._local_state(), group=self.process_group)
        self._consolidated = None
        if dist.get_rank() == to:
            state: dict[int, Any] = {}
            for s in shards:
                state.update(s)
            self._consolidated = {
                "state": dict(sorted(state.items())),
                "param_groups": self._groups_by_index(),
            }
        self._to = to

    def _groups_by_index(self) -> list[dict[str, Any]]:
        out, i = [], 0
        for g in self.param_groups:
            n = len(g["params"])
            out.append({**{k: v for k, v in g.items() if k != "params"}, "params": list(range(i, i + n))})
            i += n
        return out

    def state_dict(self) -> dict[str, Any]:
        if self._consolidated is None:
            raise RuntimeError(_NOT_CONSOLIDATED.format(to=getattr(self, "_to", 0)))
        return self._consolidated

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take a consolidated state dict; each rank keeps the state of its own parameters."""
        for g, saved in zip(self.param_groups, state_dict["param_groups"]):
            g.update({k: v for k, v in saved.items() if k != "params"})
        if self.optim is None:
            return
        index = {id(p): i for i, p in enumerate(self._all_params)}
        local_state, local_groups, j = {}, [], 0
        for lg, gi in zip(self.optim.param_groups, self._local_groups):
            ids = []
            for p in lg["params"]:
                gidx = index[id(p)]
                if gidx in state_dict["state"]:
                    local_state[j] = state_dict["state"][gidx]
                ids.append(j)
                j += 1
            opts = {k: v for k, v in self.param_groups[gi].items() if k != "params"}
            local_groups.append({**opts, "params": ids})
        self.optim.load_state_dict({"state": local_state, "param_groups": local_groups})
