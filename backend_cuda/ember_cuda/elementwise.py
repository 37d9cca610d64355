"""Elementwise kernels: creation, casts, assignment, unary/binary math, comparisons, where.

CuPy's ufuncs are used where they already follow PyTorch (NumPy) semantics, including on
strided views and broadcast (0-stride) inputs. Named ElementwiseKernels cover the places
where they do not: Python's floor rule for ``floordiv``/``remainder`` (CuPy floors floats as
``floor(a / b)``, which gives ``1.0 // 0.1 == 10``, Python gives 9), float -> int casts that
truncate through int64 (so -1.0 -> uint8 wraps to 255 like NumPy on x86, where a direct
CUDA conversion saturates to 0), -> bool as ``!= 0`` (also for NaN and complex), and
sigmoid. Half types compute through ``ember_wide<T>`` (float; double for float64).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cupy
import numpy as np
from ember.backends import DTYPES_BY_NAME, DType

from .dtypes import FLOATS, HALF, INTS, to_np

__all__ = [
    "ELEMENTWISE_KERNELS",
    "EMBER_ADD_SCALED",
    "EMBER_CAST_BOOL",
    "EMBER_CAST_TRUNC",
    "EMBER_FLOORDIV_FLOAT",
    "EMBER_FLOORDIV_INT",
    "EMBER_REMAINDER_FLOAT",
    "EMBER_REMAINDER_INT",
    "EMBER_SIGMOID",
    "add_scaled",
    "arange",
    "assign",
    "binary",
    "cast",
    "clone",
    "full",
    "unary",
    "where",
]

WIDE_PREAMBLE = """
template <typename T> struct ember_wide { typedef float type; };
template <> struct ember_wide<double> { typedef double type; };
"""

# Python's float floor division (CPython's float_floor_div): fmod-based, exact for
# 1.0 // 0.1 == 9.0; division by zero follows NumPy (a / 0 -> inf or nan).
PYFLOOR_PREAMBLE = (
    WIDE_PREAMBLE
    + """
template <typename W> __device__ W ember_py_floordiv(W a, W b) {
    if (b == W(0)) return a / b;
    W mod = fmod(a, b);
    W div = (a - mod) / b;
    if (mod != W(0) && ((b < W(0)) != (mod < W(0)))) div -= W(1);
    if (div == W(0)) return copysign(W(0), a / b);
    W fl = floor(div);
    if (div - fl > W(0.5)) fl += W(1);
    return fl;
}
template <typename W> __device__ W ember_py_mod(W a, W b) {
    if (b == W(0)) return fmod(a, b);
    W mod = fmod(a, b);
    if (mod != W(0)) { if ((b < W(0)) != (mod < W(0))) mod += b; }
    else mod = copysign(W(0), b);
    return mod;
}
"""
)

EMBER_FLOORDIV_FLOAT = cupy.ElementwiseKernel(
    "T a, T b",
    "T y",
    "typedef typename ember_wide<T>::type W; y = (T)ember_py_floordiv<W>((W)a, (W)b);",
    "ember_floordiv_float",
    preamble=PYFLOOR_PREAMBLE,
)
EMBER_REMAINDER_FLOAT = cupy.ElementwiseKernel(
    "T a, T b",
    "T y",
    "typedef typename ember_wide<T>::type W; y = (T)ember_py_mod<W>((W)a, (W)b);",
    "ember_remainder_float",
    preamble=PYFLOOR_PREAMBLE,
)
# Integers: C truncates toward zero; step down when the signs differ and there is a
# remainder. b == 0 is refused on the host first; b == -1 avoids INT_MIN / -1 (UB) by
# negating in unsigned arithmetic, which wraps as PyTorch does.
EMBER_FLOORDIV_INT = cupy.ElementwiseKernel(
    "T a, T b",
    "T y",
    """
    if (b == (T)0) { y = (T)0; }
    else if ((T)-1 < (T)0 && b == (T)-1) { y = (T)(0ull - (unsigned long long)a); }
    else { T q = a / b; y = (a % b != 0 && ((a < 0) != (b < 0))) ? (T)(q - 1) : q; }
    """,
    "ember_floordiv_int",
)
EMBER_REMAINDER_INT = cupy.ElementwiseKernel(
    "T a, T b",
    "T y",
    """
    if (b == (T)0 || ((T)-1 < (T)0 && b == (T)-1)) { y = (T)0; }
    else { T r = a % b; y = (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r; }
    """,
    "ember_remainder_int",
)
EMBER_CAST_BOOL = cupy.ElementwiseKernel("T x", "bool y", "y = x != T(0)", "ember_cast_bool")
EMBER_CAST_TRUNC = cupy.ElementwiseKernel("T x", "O y", "y = (O)(long long)x", "ember_cast_trunc")
EMBER_SIGMOID = cupy.ElementwiseKernel(
    "T x",
    "T y",
    "typedef typename ember_wide<T>::type W; y = (T)(W(1) / (W(1) + exp(-(W)x)));",
    "ember_sigmoid",
    preamble=WIDE_PREAMBLE,
)

ALL = (DTYPES_BY_NAME["bool"], *INTS, *FLOATS)
COMPLEX = (DTYPES_BY_NAME["complex64"], DTYPES_BY_NAME["complex128"])
# name -> (kernel, dtype tuples it is instantiated with: one dtype per type letter, in
# order of first appearance); tests/test_compile.py renders and compiles each.
# x + s * y rounded once (PyTorch's add with alpha): fma for both float and double
EMBER_ADD_SCALED = cupy.ElementwiseKernel("T x, T y, T s", "T out", "out = fma(s, y, x)", "ember_add_scaled")


def add_scaled(x: cupy.ndarray, y: cupy.ndarray, alpha: float) -> cupy.ndarray:
    """``x + alpha * y`` rounded once, for float32/float64 ``x`` and ``y`` of one shape and
    dtype; alpha at their precision."""
    if x.dtype not in (np.float32, np.float64) or y.dtype != x.dtype:
        raise TypeError(f"add_scaled: float32 or float64 operands of one dtype, got {x.dtype}, {y.dtype}")
    return EMBER_ADD_SCALED(x, y, x.dtype.type(alpha))


ELEMENTWISE_KERNELS: dict[str, tuple[Any, list[tuple[str, ...]]]] = {
    "ember_add_scaled": (EMBER_ADD_SCALED, [("float32",), ("float64",)]),
    "ember_floordiv_float": (EMBER_FLOORDIV_FLOAT, [(d.name,) for d in FLOATS]),
    "ember_remainder_float": (EMBER_REMAINDER_FLOAT, [(d.name,) for d in FLOATS]),
    "ember_floordiv_int": (EMBER_FLOORDIV_INT, [(d.name,) for d in INTS]),
    "ember_remainder_int": (EMBER_REMAINDER_INT, [(d.name,) for d in INTS]),
    "ember_cast_bool": (
        EMBER_CAST_BOOL,
        [(d.name,) for d in (*ALL, *COMPLEX)],
    ),
    "ember_cast_trunc": (EMBER_CAST_TRUNC, [(f.name, i.name) for f in FLOATS for i in INTS]),
    "ember_sigmoid": (EMBER_SIGMOID, [(d.name,) for d in FLOATS]),
}


_BF16 = HALF[1]


def _operand(v: Any, like: Any) -> Any:
    """A Python scalar as a NumPy scalar of the other operand's dtype.

    A typed scalar keeps CuPy from promoting (and wraps out-of-range integers the way a
    cast does) without a kernel launch; bfloat16 scalars go as 0-d device arrays, since a
    NumPy bfloat16 scalar is an ml_dtypes type that CuPy's scalar path may not accept.
    """
    if isinstance(v, cupy.ndarray):
        return v
    if like.dtype == _BF16:
        return cupy.full((), v, like.dtype)
    with np.errstate(all="ignore"):
        return np.asarray(v).astype(like.dtype)[()]


def _pair(a: Any, b: Any) -> tuple[Any, Any]:
    if isinstance(a, cupy.ndarray):
        return a, _operand(b, a)
    return _operand(a, b), b


def full(shape: tuple[int, ...], value: Any, dtype: DType, index: int) -> cupy.ndarray:
    nd = to_np(dtype)
    with cupy.cuda.Device(index):
        return cupy.full(tuple(shape), value, nd)


def arange(start: Any, step: Any, n: int, dtype: DType, index: int) -> cupy.ndarray:
    nd = to_np(dtype)
    with cupy.cuda.Device(index):
        if nd.kind in "iub":
            return (cupy.arange(n, dtype=np.int64) * int(step) + int(start)).astype(nd)
        return (cupy.arange(n, dtype=np.float64) * step + start).astype(nd)


def cast(x: cupy.ndarray, dtype: DType) -> cupy.ndarray:
    nd = to_np(dtype)
    if nd.kind == "b":
        return EMBER_CAST_BOOL(x)
    if x.dtype.kind == "c" and nd.kind != "c":
        x = x.real
    if x.dtype.kind == "f" and nd.kind in "iu":
        return EMBER_CAST_TRUNC(x, cupy.empty(x.shape, nd))
    return x.astype(nd)


def assign(dst: cupy.ndarray, src: Any) -> None:
    cupy.copyto(dst, src, casting="unsafe")


def clone(x: cupy.ndarray) -> cupy.ndarray:
    return x.copy(order="C")


def _erf(x: cupy.ndarray) -> cupy.ndarray:
    from cupyx.scipy.special import erf

    if x.dtype in HALF:
        return erf(x.astype(np.float32)).astype(x.dtype)
    return erf(x)


_UNARY: dict[str, Callable[[cupy.ndarray], cupy.ndarray]] = {
    "neg": cupy.negative,
    "abs": cupy.absolute,
    "exp": cupy.exp,
    "log": cupy.log,
    "sqrt": cupy.sqrt,
    "sin": cupy.sin,
    "cos": cupy.cos,
    "tanh": cupy.tanh,
    "erf": _erf,
    "floor": cupy.floor,
    "ceil": cupy.ceil,
    "trunc": cupy.trunc,
    "round": cupy.rint,
    "sign": cupy.sign,
    "sigmoid": EMBER_SIGMOID,
    "log1p": cupy.log1p,
    "expm1": cupy.expm1,
}


# Integers are already whole and bool's sign is itself; CuPy would return other dtypes.
_IDENTITY_ON_INTEGERS = frozenset({"floor", "ceil", "trunc", "round", "sign"})


def unary(op: str) -> Callable[[cupy.ndarray], cupy.ndarray]:
    fn = _UNARY[op]
    identity_kinds = ("iub" if op != "sign" else "b") if op in _IDENTITY_ON_INTEGERS else ""

    def k(x: cupy.ndarray) -> cupy.ndarray:
        if x.dtype.kind in identity_kinds:
            return x.copy()
        return fn(x)

    k.__name__ = op
    return k


def _check_int_divisor(a: Any, b: Any) -> None:
    """The CPU backend's ZeroDivisionError (one device sync); an empty dividend never raises."""
    if a.size and b.size and bool((b == 0).any().item()):
        raise RuntimeError("ZeroDivisionError")


def floordiv(a: Any, b: Any) -> cupy.ndarray:
    a, b = _pair(a, b)
    if a.dtype.kind in "iub":
        _check_int_divisor(a, b)
        return EMBER_FLOORDIV_INT(a, b)
    return EMBER_FLOORDIV_FLOAT(a, b)


def remainder(a: Any, b: Any) -> cupy.ndarray:
    a, b = _pair(a, b)
    if a.dtype.kind in "iub":
        _check_int_divisor(a, b)
        return EMBER_REMAINDER_INT(a, b)
    return EMBER_REMAINDER_FLOAT(a, b)


def pow_(a: Any, b: Any) -> cupy.ndarray:
    a, b = _pair(a, b)
    if b.dtype.kind in "iu" and b.size and bool((b < 0).any().item()):
        # NumPy's (and the CPU backend's) error; CUDA would silently give 0.
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return cupy.power(a, b)


_BINARY: dict[str, Callable[[Any, Any], cupy.ndarray]] = {
    "add": cupy.add,
    "sub": cupy.subtract,
    "mul": cupy.multiply,
    "div": cupy.true_divide,
    "maximum": cupy.maximum,
    "minimum": cupy.minimum,
    "bitwise_and": cupy.bitwise_and,
    "bitwise_or": cupy.bitwise_or,
    "bitwise_xor": cupy.bitwise_xor,
    "eq": cupy.equal,
    "lt": cupy.less,
    "le": cupy.less_equal,
}


def binary(op: str) -> Callable[[Any, Any], cupy.ndarray]:
    if op == "floordiv":
        return floordiv
    if op == "remainder":
        return remainder
    if op == "pow":
        return pow_
    fn = _BINARY[op]

    def k(a: Any, b: Any) -> cupy.ndarray:
        return fn(*_pair(a, b))

    k.__name__ = op
    return k


def where(c: cupy.ndarray, a: Any, b: Any) -> cupy.ndarray:
    a, b = _pair(a, b)
    out = cupy.where(c, a, b)
    return out if out.dtype == a.dtype else out.astype(a.dtype)
