"""``ember.cuda.amp`` / ``ember.cpu.amp``: PyTorch's older per-device spellings (the seeds use
``torch.cuda.amp.autocast()``), deprecated there with a FutureWarning that names the new call."""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

from ..backends.dtypes import DType, bfloat16, float16
from .autocast_mode import autocast
from .grad_scaler import GradScaler

__all__ = ["cpu_amp", "cuda_amp"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`{old}(args...)` is deprecated. Please use `{new}` instead.", FutureWarning, stacklevel=3)


class _CudaAutocast(autocast):
    def __init__(self, enabled: bool = True, dtype: DType = float16, cache_enabled: bool = True) -> None:
        _deprecated("ember.cuda.amp.autocast", "ember.amp.autocast('cuda', args...)")
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class _CpuAutocast(autocast):
    def __init__(self, enabled: bool = True, dtype: DType = bfloat16, cache_enabled: bool = True) -> None:
        _deprecated("ember.cpu.amp.autocast", "ember.amp.autocast('cpu', args...)")
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class _CudaGradScaler(GradScaler):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _deprecated("ember.cuda.amp.GradScaler", "ember.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", *args, **kwargs)


cuda_amp = SimpleNamespace(autocast=_CudaAutocast, GradScaler=_CudaGradScaler)
cpu_amp = SimpleNamespace(autocast=_CpuAutocast)
