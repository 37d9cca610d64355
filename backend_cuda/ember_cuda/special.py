"""Composites for ember.special and complex parts on CuPy and cupyx.scipy.special.

These have no decomposition into primitives, so without them every call would run on the
CPU and copy back. Half types compute in float32 and round once (as the CPU backend does);
other dtypes keep theirs. Linear algebra, cummax/cummin and scatter_reduce stay on the
CPU fallback: CuPy's solvers do not raise on singular input, which PyTorch's do.
"""

from __future__ import annotations

from collections.abc import Callable

import cupy
import numpy as np

from .dtypes import HALF

__all__ = ["SPECIAL_KERNELS"]

_F32 = np.dtype(np.float32)


def _wrap1(fn: Callable[..., cupy.ndarray], name: str) -> Callable[[cupy.ndarray], cupy.ndarray]:
    def k(x: cupy.ndarray) -> cupy.ndarray:
        if x.dtype in HALF:
            return fn(x.astype(_F32)).astype(x.dtype)
        return fn(x).astype(x.dtype, copy=False)

    k.__name__ = name
    return k


def _special(name: str) -> Callable[[cupy.ndarray], cupy.ndarray]:
    def fn(x: cupy.ndarray) -> cupy.ndarray:
        import cupyx.scipy.special as sp

        return getattr(sp, name)(x)

    return _wrap1(fn, name)


def atan2(y: cupy.ndarray, x: cupy.ndarray) -> cupy.ndarray:
    if y.dtype in HALF:
        return cupy.arctan2(y.astype(_F32), x.astype(_F32)).astype(y.dtype)
    return cupy.arctan2(y, x)


def polygamma(x: cupy.ndarray, n: int) -> cupy.ndarray:
    if n == 0:
        return _special("digamma")(x)

    def fn(v: cupy.ndarray) -> cupy.ndarray:
        import cupyx.scipy.special as sp

        return sp.polygamma(n, v)

    return _wrap1(fn, "polygamma")(x)


def zeta(x: cupy.ndarray, q: cupy.ndarray) -> cupy.ndarray:
    import cupyx.scipy.special as sp

    if x.dtype in HALF:
        return sp.zeta(x.astype(_F32), q.astype(_F32)).astype(x.dtype)
    return sp.zeta(x, q).astype(x.dtype, copy=False)


def cumprod(x: cupy.ndarray, dim: int) -> cupy.ndarray:
    if x.ndim == 0:
        return x.copy()
    if x.dtype in HALF:
        return cupy.cumprod(x, axis=dim, dtype=_F32).astype(x.dtype)
    return cupy.cumprod(x, axis=dim, dtype=x.dtype)


def real(x: cupy.ndarray) -> cupy.ndarray:
    return cupy.ascontiguousarray(x.real).copy()


def imag(x: cupy.ndarray) -> cupy.ndarray:
    return cupy.ascontiguousarray(x.imag).copy()


def complex_(re: cupy.ndarray, im: cupy.ndarray) -> cupy.ndarray:
    dt = np.complex128 if re.dtype == np.float64 else np.complex64
    return re.astype(dt) + 1j * im.astype(dt)


SPECIAL_KERNELS: dict[str, Callable[..., cupy.ndarray]] = {
    "atan": _wrap1(cupy.arctan, "atan"),
    "atan2": atan2,
    "asin": _wrap1(cupy.arcsin, "asin"),
    "acos": _wrap1(cupy.arccos, "acos"),
    "erfc": _special("erfc"),
    "erfinv": _special("erfinv"),
    "erfcx": _special("erfcx"),
    "lgamma": _special("gammaln"),
    "digamma": _special("digamma"),
    "polygamma": polygamma,
    "zeta": zeta,
    "ndtri": _special("ndtri"),
    "log_ndtr": _special("log_ndtr"),
    "i0": _special("i0"),
    "i0e": _special("i0e"),
    "i1": _special("i1"),
    "i1e": _special("i1e"),
    "bessel_j0": _special("j0"),
    "bessel_j1": _special("j1"),
    "cumprod": cumprod,
    "real": real,
    "imag": imag,
    "complex": complex_,
}
