"""``DataParallel`` for one process and device: it calls the wrapped module (PyTorch's API).

Multi-device data parallelism is ``ember.distributed``'s ``DistributedDataParallel``; this
wrapper lets code written for ``nn.DataParallel`` run unchanged, with ``.module`` as usual.
"""

from __future__ import annotations

from typing import Any

from .module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wraps ``module``; ``forward`` calls it on the inputs as they are."""

    def __init__(
        self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
