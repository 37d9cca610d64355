"""``ember.nn.parallel``: data parallelism across processes (``DistributedDataParallel``)."""

from ..modules.data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
