"""matmul through cuBLAS (``cupy.matmul``), including float16 and bfloat16.

float16 goes to cuBLAS directly (GemmEx with float32 accumulation). bfloat16 does too on
CuPy builds whose matmul accepts it; on one that raises for it, the operands are widened
to float32 once and the product rounded back, which is what the CPU backend computes.
"""

from __future__ import annotations

import cupy
import numpy as np

__all__ = ["matmul"]

_F32 = np.dtype(np.float32)
_widen: set[np.dtype] = set()  # dtypes this CuPy's matmul refused: widen from now on


def matmul(a: cupy.ndarray, b: cupy.ndarray) -> cupy.ndarray:
    if a.dtype in _widen:
        return cupy.matmul(a.astype(_F32), b.astype(_F32)).astype(a.dtype)
    try:
        return cupy.matmul(a, b)
    except (TypeError, ValueError, NotImplementedError):
        if a.dtype.kind != "f":
            raise
        _widen.add(a.dtype)
        return matmul(a, b)
