"""CPU kernels for composite ops without a decomposition: special functions, scans,
``scatter_reduce``, complex parts and linear algebra (NumPy and SciPy).

Half types compute in float32 and cast back; everything else keeps its dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .dtypes import HALF

__all__ = ["MATH_KERNELS"]

_F32 = np.dtype(np.float32)


def _special(name: str) -> Callable[..., np.ndarray]:
    def k(x: np.ndarray, *params: Any) -> np.ndarray:
        import scipy.special as sp

        fn = getattr(sp, name)
        if x.dtype in HALF:
            return np.asarray(fn(*params, x.astype(_F32))).astype(x.dtype)
        with np.errstate(all="ignore"):
            return np.asarray(fn(*params, x)).astype(x.dtype, copy=False)

    k.__name__ = name
    return k


_gammaln = _special("gammaln")


def lgamma(x: np.ndarray) -> np.ndarray:
    """SciPy's gammaln with C's (and PyTorch's) edges: lgamma(-inf) is +inf (gammaln: -inf),
    and the smallest subnormals give the finite -log|x| (gammaln: inf)."""
    out = _gammaln(x)
    with np.errstate(all="ignore"):
        tiny = (np.abs(x) < 1e-300) & (x != 0)
        fixed = np.where(np.isneginf(x), np.inf, np.where(tiny, -np.log(np.abs(x)), out))
    return np.asarray(fixed.astype(out.dtype, copy=False))


def _numpy1(fn: Callable[..., np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    def k(x: np.ndarray) -> np.ndarray:
        if x.dtype in HALF:
            return np.asarray(fn(x.astype(_F32))).astype(x.dtype)  # a 0-d input gives a scalar
        with np.errstate(all="ignore"):
            return np.asarray(fn(x)).astype(x.dtype, copy=False)

    return k


def atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    dt = y.dtype if isinstance(y, np.ndarray) else x.dtype  # one side may be a Python scalar
    if dt in HALF:
        return np.asarray(np.arctan2(np.asarray(y, _F32), np.asarray(x, _F32))).astype(dt)
    return np.asarray(np.arctan2(y, x)).astype(dt, copy=False)


def zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    import scipy.special as sp

    return np.asarray(sp.zeta(x, q)).astype(x.dtype, copy=False)


def polygamma(x: np.ndarray, n: int) -> np.ndarray:

    if n == 0:
        return _special("digamma")(x)
    return _special("polygamma")(x, n)


# -- scans -----------------------------------------------------------------------------------
def cumprod(x: np.ndarray, dim: int) -> np.ndarray:
    if x.dtype in HALF:
        return np.cumprod(x, axis=dim, dtype=_F32).astype(x.dtype)
    return np.cumprod(x, axis=dim, dtype=x.dtype)


def _cum_extreme(better: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., tuple]:
    def k(x: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
        xs = np.moveaxis(x, dim, 0)
        vals = np.empty_like(xs)
        idx = np.empty(xs.shape, np.int64)
        if xs.shape[0]:
            vals[0], idx[0] = xs[0], 0
        for i in range(1, xs.shape[0]):
            take = better(xs[i], vals[i - 1]) | np.isnan(xs[i])
            take &= ~(np.isnan(vals[i - 1]) & ~np.isnan(xs[i]))
            vals[i] = np.where(take, xs[i], vals[i - 1])
            idx[i] = np.where(take, i, idx[i - 1])
        return np.moveaxis(vals, 0, dim), np.moveaxis(idx, 0, dim)

    return k


# -- scatter_reduce ----------------------------------------------------------------------------
_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.fmax, "amin": np.fmin}


def _identity(reduce: str, dt: np.dtype) -> Any:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dt.kind == "b":
        return reduce == "amin"
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.min if reduce == "amax" else info.max
    return -np.inf if reduce == "amax" else np.inf


def scatter_reduce(
    x: np.ndarray, index: np.ndarray, src: np.ndarray, dim: int, reduce: str, include_self: bool
) -> np.ndarray:
    out = np.array(x, copy=True)
    if x.ndim == 0:
        out, index, src = out.reshape(1), index.reshape(-1), src.reshape(-1)
    if index.size == 0:
        return out.reshape(x.shape)
    if index.min() < 0 or index.max() >= out.shape[dim]:
        bad = int(index.max()) if index.max() >= out.shape[dim] else int(index.min())
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {out.shape[dim]}")
    grid = list(np.ogrid[tuple(slice(0, s) for s in index.shape)])
    grid[dim] = index
    key = tuple(grid)
    src = src[tuple(slice(0, s) for s in index.shape)]
    work = out.astype(_F32) if out.dtype in HALF else out
    if not include_self:
        work[key] = _identity(reduce, work.dtype)
    uf = _UFUNCS[reduce]
    if reduce in ("amax", "amin") and work.dtype.kind == "f":
        uf = np.maximum if reduce == "amax" else np.minimum
    uf.at(work, key, src.astype(work.dtype))
    if reduce == "mean":
        count = np.zeros(work.shape, np.int64)
        np.add.at(count, key, 1)
        count += int(include_self)
        count = np.maximum(count, 1)
        work = work // count if work.dtype.kind in "iu" else work / count
    return work.astype(x.dtype).reshape(x.shape)


# -- complex parts -----------------------------------------------------------------------------
def real(x: np.ndarray) -> np.ndarray:
    return np.array(x.real, order="C", copy=True)


def imag(x: np.ndarray) -> np.ndarray:
    return np.array(x.imag, order="C", copy=True)


def complex_(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    dt = np.complex128 if re.dtype == np.float64 else np.complex64
    out = np.empty(re.shape, dt)
    out.real, out.imag = re, im
    return out


# -- linear algebra (batched over leading dims) ------------------------------------------------
def _linalg(fn: Callable[..., Any]) -> Callable[..., Any]:
    def k(*args: Any) -> Any:
        try:
            with np.errstate(all="ignore"):
                out = fn(*args)
        except np.linalg.LinAlgError as e:
            raise RuntimeError(f"linalg: {e}") from None
        return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else np.asarray(out)

    k.__name__ = fn.__name__
    return k


def _slogdet(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign).astype(a.dtype), np.asarray(logabs).astype(np.abs(a[..., :0, :0]).dtype)


def _lstsq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.pinv(a) @ b


def _qr(a: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    if mode == "r":
        return np.zeros((0,), a.dtype), np.linalg.qr(a, mode="r")
    q, r = np.linalg.qr(a, mode=mode)
    return q, r


def _eig(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ct = np.complex128 if a.dtype in (np.float64, np.complex128) else np.complex64
    w, v = np.linalg.eig(a)
    return w.astype(ct), v.astype(ct)


def _eigh(a: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
    w, v = np.linalg.eigh(a, UPLO="U" if upper else "L")
    return w, v


def _svd(a: np.ndarray, full_matrices: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.linalg.svd(a, full_matrices=full_matrices)


def _cholesky(a: np.ndarray, upper: bool) -> np.ndarray:
    lo = np.linalg.cholesky(a)
    return np.conj(np.swapaxes(lo, -1, -2)) if upper else lo


def _matrix_exp(a: np.ndarray) -> np.ndarray:
    import scipy.linalg as sl

    if a.ndim == 2:
        return sl.expm(a)
    flat = a.reshape((-1,) + a.shape[-2:])
    return np.stack([sl.expm(m) for m in flat]).reshape(a.shape) if flat.shape[0] else a.copy()


def _householder_product(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    eye = np.broadcast_to(np.eye(m, dtype=a.dtype), a.shape[:-2] + (m, m))
    q = eye.copy()
    for i in range(k):
        v = np.zeros(a.shape[:-2] + (m,), a.dtype)
        v[..., i] = 1
        v[..., i + 1 :] = a[..., i + 1 :, i]
        h = eye - tau[..., i, None, None] * v[..., :, None] * np.conj(v[..., None, :])
        q = q @ h
    return np.array(q[..., :, :n], order="C", copy=True)


MATH_KERNELS: dict[str, Callable[..., Any]] = {
    "atan": _numpy1(np.arctan),
    "atan2": atan2,
    "asin": _numpy1(np.arcsin),
    "acos": _numpy1(np.arccos),
    "erfc": _special("erfc"),
    "erfinv": _special("erfinv"),
    "erfcx": _special("erfcx"),
    "lgamma": lgamma,
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
    "cummax": _cum_extreme(np.greater_equal),
    "cummin": _cum_extreme(np.less_equal),
    "scatter_reduce": scatter_reduce,
    "real": real,
    "imag": imag,
    "complex": complex_,
    "linalg_det": _linalg(np.linalg.det),
    "linalg_slogdet": _linalg(_slogdet),
    "linalg_inv": _linalg(np.linalg.inv),
    "linalg_solve": _linalg(np.linalg.solve),
    "linalg_lstsq": _linalg(_lstsq),
    "linalg_cholesky": _linalg(_cholesky),
    "linalg_qr": _linalg(_qr),
    "linalg_eig": _linalg(_eig),
    "linalg_eigh": _linalg(_eigh),
    "linalg_svd": _linalg(_svd),
    "linalg_matrix_exp": _linalg(_matrix_exp),
    "linalg_householder_product": _linalg(_householder_product),
}
