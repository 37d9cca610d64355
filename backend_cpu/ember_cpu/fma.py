"""``x + alpha * y`` rounded once: PyTorch's add/sub with ``alpha`` and its optimizers' steps
(``p.add_(g, alpha=-lr)``) run a fused multiply-add in their vector loops, so a product rounded
before the add differs from PyTorch in about a fifth of the elements.

NumPy has no fused multiply-add ufunc; BLAS has one, ``?axpy``. This module calls the axpy of
the OpenBLAS that NumPy's wheel ships and has already loaded (its kernels fuse on every x86-64
and ARM64 CPU with FMA, the tail elements too), found beside NumPy. Where there is none (a NumPy
built on another BLAS), float32 goes through float64 (the product of two float32 numbers is
exact there; the float64 sum is then rounded to float32, the fused result except on the rare
double-rounding tie) and float64 multiplies then adds (one rounding more than PyTorch).
"""

from __future__ import annotations

import ctypes
import glob
import os
from typing import Any

import numpy as np
from ember.backends import writes_out

from .hostmem import cache

__all__ = ["FMA_KERNELS", "add_scaled", "axpy"]

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_AXPY_DTYPES = (_F32, _F64)


def _load_axpy() -> tuple[dict[np.dtype, Any], int]:
    """({float32: saxpy, float64: daxpy} from NumPy's bundled OpenBLAS, or {} when not found,
    and the largest length its integers hold)."""
    here = os.path.dirname(np.__file__)
    paths = glob.glob(os.path.join(here, os.pardir, "numpy.libs", "*openblas*"))  # Linux, Windows
    paths += glob.glob(os.path.join(here, ".dylibs", "*openblas*"))  # macOS
    # (prefix, suffix, integer type): scipy-openblas (NumPy >= 2) and plain OpenBLAS, ILP64 or not
    names = (("scipy_cblas_", "64_", ctypes.c_int64), ("cblas_", "64_", ctypes.c_int64))
    names += (("scipy_cblas_", "", ctypes.c_int), ("cblas_", "", ctypes.c_int))
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix, int_t in names:
            try:
                s, d = getattr(lib, f"{prefix}saxpy{suffix}"), getattr(lib, f"{prefix}daxpy{suffix}")
            except AttributeError:
                continue
            ptr = ctypes.c_void_p
            for fn, real in ((s, ctypes.c_float), (d, ctypes.c_double)):
                fn.restype = None
                fn.argtypes = [int_t, real, ptr, int_t, ptr, int_t]
            return {_F32: s, _F64: d}, 2 ** (8 * ctypes.sizeof(int_t) - 1) - 1
    return {}, 0


_AXPY, _AXPY_MAX_N = _load_axpy()


def axpy(out: np.ndarray, y: np.ndarray, alpha: float) -> None:
    """``out += alpha * y`` with one rounding, in place; ``out`` float32/float64, writable and
    C-contiguous, ``y`` of its shape (any layout, cast to its dtype). ``alpha`` is used at the
    arrays' precision (float32 for float32)."""
    y = np.ascontiguousarray(y, dtype=out.dtype)
    if not out.size:
        return
    fn = _AXPY.get(out.dtype)
    if fn is not None and out.size <= _AXPY_MAX_N:
        fn(out.size, alpha, y.ctypes.data, 1, out.ctypes.data, 1)
    elif out.dtype == _F32:
        wide = np.multiply(y, float(np.float32(alpha)), dtype=_F64)
        wide += out
        np.copyto(out, wide, casting="same_kind")
    else:
        out += np.multiply(y, alpha)


@writes_out
def add_scaled(x: np.ndarray, y: np.ndarray, alpha: float, out: np.ndarray | None = None) -> np.ndarray:
    """``x + alpha * y`` rounded once, for float32/float64 ``x`` and ``y`` of one shape and
    dtype (strided or expanded views). ``out`` may be ``x`` itself (``add_(y, alpha=a)``)."""
    if x.dtype not in _AXPY_DTYPES or y.dtype != x.dtype:
        raise TypeError(f"add_scaled: float32 or float64 operands of one dtype, got {x.dtype} and {y.dtype}")
    if out is None:
        out = cache.empty(x.shape, x.dtype)
        np.copyto(out, x)
    elif not out.flags.writeable:
        raise ValueError("add_scaled: the output array is read-only")
    elif out is not x:
        np.copyto(out, x)
    if out.flags.c_contiguous:
        axpy(out, y, alpha)
        return out
    dense = np.ascontiguousarray(out)  # a strided destination: compute densely, write back once
    axpy(dense, y, alpha)
    np.copyto(out, dense)
    return out


FMA_KERNELS = {"add_scaled": add_scaled}
