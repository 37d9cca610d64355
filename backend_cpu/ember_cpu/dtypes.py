"""The rename table between ember dtypes and NumPy dtypes (bfloat16 from ml_dtypes).

``ml_dtypes`` takes over a second to import, most of a bare ``import ember``: it is loaded
the first time a bfloat16 array is asked for (``to_np``) or handed in (``from_numpy``), and
only then does bfloat16 join ``HALF`` and ``BF16``. No bfloat16 array can exist before.
"""

from __future__ import annotations

import numpy as np
from ember.backends import DTYPES_BY_NAME, DType

__all__ = ["BF16", "HALF", "ensure_bfloat16", "from_np", "to_np"]

_TO_NP: dict[DType, np.dtype] = {d: np.dtype(d.name) for d in DTYPES_BY_NAME.values() if d.name != "bfloat16"}
_FROM_NP: dict[np.dtype, DType] = {v: k for k, v in _TO_NP.items()}
# Half types are computed in float32 where NumPy has no fast or accurate loop. Sets, filled
# in place, so ``x.dtype in HALF`` stays one C-level lookup in the kernels.
HALF: set[np.dtype] = {np.dtype(np.float16)}
BF16: set[np.dtype] = set()


def ensure_bfloat16() -> np.dtype:
    """Import ml_dtypes (once) and register its bfloat16; returns that NumPy dtype."""
    d = DTYPES_BY_NAME["bfloat16"]
    nd = _TO_NP.get(d)
    if nd is None:
        import ml_dtypes

        nd = np.dtype(ml_dtypes.bfloat16)
        _FROM_NP[nd] = d
        HALF.add(nd)
        BF16.add(nd)
        _TO_NP[d] = nd
    return nd


def to_np(d: DType) -> np.dtype:
    nd = _TO_NP.get(d)
    return ensure_bfloat16() if nd is None else nd


def from_np(d: np.dtype) -> DType:
    if d.kind == "V" and d.name == "bfloat16":
        ensure_bfloat16()
    return _FROM_NP[d]
