"""Every primitive of ``ember.backends.ops`` as a kernel on ``MinArray``s.

The calling convention (``ember/backends/ops.py``): arrays come promoted and broadcast,
parameters are positional, results keep the input dtype unless the op says otherwise
(comparisons give bool, ``abs`` of complex its real dtype, ``argmax``/``sort`` indices int64).
Half precision is accumulated in float32.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .backend import MinArray, np_dtype

__all__ = ["KERNELS"]

_F32 = np.dtype(np.float32)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _u(x: Any) -> Any:
    """Unwrap a MinArray (Python scalars pass through)."""
    return x.a if isinstance(x, MinArray) else x


def _dtype_of(*args: Any) -> np.dtype:
    return next(a.a.dtype for a in args if isinstance(a, MinArray))


def _keep(fn: Callable[..., Any]) -> Callable[..., MinArray]:
    """An elementwise kernel whose result has its inputs' dtype."""

    def kernel(*args: Any) -> MinArray:
        dt = _dtype_of(*args)
        with np.errstate(all="ignore"):
            return MinArray(np.asarray(fn(*(_u(a) for a in args))).astype(dt, copy=False))

    return kernel


def _to_bool(fn: Callable[..., Any]) -> Callable[..., MinArray]:
    def kernel(a: Any, b: Any) -> MinArray:
        with np.errstate(all="ignore"):
            return MinArray(np.asarray(fn(_u(a), _u(b))))

    return kernel


def _wide(x: np.ndarray) -> np.ndarray:
    """Half precision computes in float32 (ops.py: accumulate in at least float32)."""
    return x.astype(_F32) if x.dtype == np.float16 else x


# --- creation and random -------------------------------------------------------------------
def full(shape: tuple[int, ...], value: Any, dtype: Any, index: int) -> MinArray:
    return MinArray(np.full(shape, value, dtype=np_dtype(dtype)))


def arange(start: Any, step: Any, n: int, dtype: Any, index: int) -> MinArray:
    return MinArray((np.arange(n) * step + start).astype(np_dtype(dtype)))


_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_MASK, _SHIFT = np.uint64(0xFFFFFFFF), np.uint64(32)


def philox(n: int, key: tuple[int, int], counter: tuple[int, int, int, int], index: int) -> MinArray:
    """Philox-4x32-10: block j uses the 128-bit counter ``counter + j``, gives words 4j..4j+3 (as int64)."""
    j = np.arange((n + 3) // 4, dtype=np.uint64)
    lo0 = np.uint64(counter[0] | counter[1] << 32)
    lo = lo0 + j  # wraps modulo 2**64; the carry goes to the high half
    hi = np.uint64(counter[2] | counter[3] << 32) + (lo < lo0).astype(np.uint64)
    c = [lo & _MASK, lo >> _SHIFT, hi & _MASK, hi >> _SHIFT]
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0, p1 = _M0 * c[0], _M1 * c[2]
            c = [
                (p1 >> _SHIFT) ^ c[1] ^ np.uint64(k0),
                p1 & _MASK,
                (p0 >> _SHIFT) ^ c[3] ^ np.uint64(k1),
                p0 & _MASK,
            ]
            k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return MinArray(np.stack(c, axis=1).astype(np.int64).reshape(-1)[:n].copy())  # ops.py: int64 words


# --- copy --------------------------------------------------------------------------------
def cast(x: MinArray, dtype: Any) -> MinArray:
    a, nd = x.a, np_dtype(dtype)
    if nd == np.bool_:
        return MinArray(a != 0)  # a complex number is true if either part is non-zero
    if a.dtype.kind == "c" and nd.kind != "c":
        a = a.real  # PyTorch discards the imaginary part
    if nd == np.float16 and a.dtype.kind in "fiu" and a.dtype.itemsize > 4:
        a = a.astype(np.float32)  # PyTorch rounds float64/int64 to float16 through float32
    with np.errstate(invalid="ignore", over="ignore"):
        return MinArray(a.astype(nd))


def assign(dst: MinArray, src: Any) -> None:
    np.copyto(dst.a, _u(src), casting="unsafe")


# --- views: NumPy views share memory, so wrapping them keeps the aliasing -------------------
def reshape(x: MinArray, shape: tuple[int, ...]) -> MinArray | None:
    try:
        return MinArray(np.reshape(x.a, shape, copy=False))
    except ValueError:
        return None  # not viewable: the frontend copies


def permute(x: MinArray, dims: tuple[int, ...]) -> MinArray:
    return MinArray(x.a.transpose(dims))


def expand(x: MinArray, shape: tuple[int, ...]) -> MinArray:
    return MinArray(np.broadcast_to(x.a, shape))


def slice_(x: MinArray, key: tuple[Any, ...]) -> MinArray:
    return MinArray(x.a[key + (Ellipsis,)])


def as_strided(x: MinArray, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> MinArray:
    root = x.a
    while isinstance(root.base, np.ndarray):
        root = root.base
    size = x.a.itemsize  # x's dtype, not the root's: x may be a ``bitcast`` of it
    return MinArray(
        np.ndarray(
            shape, x.a.dtype, buffer=root, offset=offset * size, strides=tuple(s * size for s in strides)
        )
    )


def bitcast(x: MinArray, dtype: Any) -> MinArray:
    return MinArray(x.a.view(np_dtype(dtype)))  # NumPy's rule for another itemsize is PyTorch's


# --- reductions, scan, matmul ------------------------------------------------------------
def _reduce(fn: Callable[..., Any]) -> Callable[[MinArray, tuple[int, ...], bool], MinArray]:
    def kernel(x: MinArray, dims: tuple[int, ...], keepdim: bool) -> MinArray:
        return MinArray(np.asarray(fn(_wide(x.a), axis=dims, keepdims=keepdim)).astype(x.a.dtype))

    return kernel


def argmax(x: MinArray, dim: int | None, keepdim: bool) -> MinArray:
    r = np.asarray(np.argmax(_wide(x.a), axis=dim))
    if keepdim:
        r = r.reshape((1,) * x.a.ndim) if dim is None else np.expand_dims(r, dim)
    return MinArray(r.astype(np.int64))


def cumsum(x: MinArray, dim: int) -> MinArray:
    return MinArray(np.cumsum(_wide(x.a), axis=dim).astype(x.a.dtype))


def matmul(a: MinArray, b: MinArray) -> MinArray:
    return MinArray(np.matmul(_wide(a.a), _wide(b.a)).astype(a.a.dtype))


# --- indexing, sort, join ------------------------------------------------------------------
def _grid(index: np.ndarray, dim: int, size: int) -> tuple[np.ndarray, ...]:
    """Coordinates for gather/scatter; refuses bad indices before touching memory."""
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = int(index.min()) if index.min() < 0 else int(index.max())
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    grid = list(np.ogrid[tuple(slice(0, s) for s in index.shape)])
    grid[dim] = index
    return tuple(grid)


def gather(x: MinArray, dim: int, index: MinArray) -> MinArray:
    a, idx = x.a, index.a
    if a.ndim == 0:
        _grid(idx.reshape(-1), 0, 1)
        return MinArray(a.copy().reshape(idx.shape))
    return MinArray(a[_grid(idx, dim, a.shape[dim])])


def scatter(x: MinArray, dim: int, index: MinArray, src: Any, reduce: str | None) -> MinArray:
    out, idx, s = x.a.copy(), index.a, _u(src)
    if out.ndim == 0:
        _grid(idx.reshape(-1), 0, 1)
        return MinArray(
            np.asarray(s if not isinstance(s, np.ndarray) else s.reshape(-1)[0]).astype(out.dtype)
        )
    grid = _grid(idx, dim, out.shape[dim])
    if isinstance(s, np.ndarray):
        s = s[tuple(slice(0, n) for n in idx.shape)]
    if reduce == "add":
        np.add.at(out, grid, s)
    else:
        out[grid] = s
    return MinArray(out)


def sort(x: MinArray, dim: int, descending: bool) -> tuple[MinArray, MinArray]:
    a = x.a
    if a.ndim == 0:
        return MinArray(a.copy()), MinArray(np.zeros((), np.int64))
    keys = _wide(a)
    if descending:  # stable descending: sort the reversed array ascending, map indices back
        n = a.shape[dim]
        idx = np.flip(n - 1 - np.argsort(np.flip(keys, dim), axis=dim, kind="stable"), dim)
    else:
        idx = np.argsort(keys, axis=dim, kind="stable")
    idx = idx.astype(np.int64)
    return MinArray(np.take_along_axis(a, idx, axis=dim)), MinArray(idx)


def cat(arrays: list[MinArray], dim: int) -> MinArray:
    return MinArray(np.concatenate([x.a for x in arrays], axis=dim))


def _abs(x: MinArray) -> MinArray:
    return MinArray(np.abs(x.a))  # complex gives its real dtype, as the contract says


def _erf_kernel(x: MinArray) -> MinArray:
    return MinArray(_erf(x.a.astype(np.float64)).astype(x.a.dtype))


def _where(c: MinArray, a: Any, b: Any) -> MinArray:
    return MinArray(np.where(c.a, _u(a), _u(b)).astype(_dtype_of(a, b)))


def _floordiv(a: Any, b: Any) -> Any:
    return np.floor_divide(a, b)


# The rename table: ember op name -> kernel (NumPy's spellings stay on the right).
KERNELS: dict[str, Callable[..., Any]] = {
    "full": full, "arange": arange, "philox": philox, "cast": cast, "assign": assign,
    "reshape": reshape, "permute": permute, "expand": expand, "slice": slice_, "as_strided": as_strided,
    "bitcast": bitcast,
    "neg": _keep(np.negative), "abs": _abs, "exp": _keep(np.exp), "log": _keep(np.log),
    "sqrt": _keep(np.sqrt), "sin": _keep(np.sin), "cos": _keep(np.cos), "tanh": _keep(np.tanh),
    "erf": _erf_kernel, "floor": _keep(np.floor),
    "add": _keep(np.add), "sub": _keep(np.subtract), "mul": _keep(np.multiply),
    "div": _keep(np.true_divide), "floordiv": _keep(_floordiv), "pow": _keep(np.power),
    "maximum": _keep(np.maximum), "minimum": _keep(np.minimum),
    "bitwise_and": _keep(np.bitwise_and), "bitwise_or": _keep(np.bitwise_or),
    "bitwise_xor": _keep(np.bitwise_xor),
    "eq": _to_bool(np.equal), "lt": _to_bool(np.less), "le": _to_bool(np.less_equal), "where": _where,
    "sum": _reduce(np.sum), "prod": _reduce(np.prod), "amax": _reduce(np.max), "argmax": argmax,
    "cumsum": cumsum, "matmul": matmul, "gather": gather, "scatter": scatter, "sort": sort, "cat": cat,
}  # fmt: skip
