"""``ember.distributed.optim``: optimizers that shard their state across ranks."""

from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
