"""The rename table between ember dtypes and NumPy dtypes (bfloat16 from ml_dtypes)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from ember.backends import DTYPES_BY_NAME, DType

__all__ = ["HALF", "from_np", "to_np"]

_TO_NP: dict[DType, np.dtype] = {
    d: np.dtype(ml_dtypes.bfloat16 if d.name == "bfloat16" else d.name) for d in DTYPES_BY_NAME.values()
}
_FROM_NP: dict[np.dtype, DType] = {v: k for k, v in _TO_NP.items()}
# Half types are computed in float32 where NumPy has no fast or accurate loop.
HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def to_np(d: DType) -> np.dtype:
    return _TO_NP[d]


def from_np(d: np.dtype) -> DType:
    return _FROM_NP[d]
