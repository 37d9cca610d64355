"""Records for creation, random, copy and view primitives."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .dtypes import ALL, BOOL, COMPLEX, FLOATS, INTS, REAL, UNSIGNED, np_dtype
from .philox_ref import philox_words
from .records import INDEX, D, OpCase, Sample
from .samples import contig, edge_values, large, layout_variants, scalar, strided, transposed, values

__all__ = ["RECORDS"]


def _ref_dtype(name: str) -> type:
    """The NumPy type the reference holds values of dtype ``name`` in."""
    if name in FLOATS:
        return np.float64
    if name in COMPLEX:
        return np.complex128
    return np.int64 if name in INTS else np.bool_


def _full_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        Sample(label, (shape, scalar(rng, dtype), D(dtype), INDEX))
        for label, shape in (("basic", (2, 3)), ("0-d", ()), ("empty", (0, 4)))
    ]


def _full_ref(shape: tuple[int, ...], value: object, dtype: str, index: int) -> np.ndarray:
    return np.full(shape, value, dtype=_ref_dtype(dtype))


def _arange_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    start, step = (0.5, 0.25) if dtype in FLOATS else (1, 2) if dtype in UNSIGNED else (-3, 2)
    return [
        Sample("basic", (start, step, 7, D(dtype), INDEX)),
        Sample("empty", (start, step, 0, D(dtype), INDEX)),
    ]


def _arange_ref(start: float, step: float, n: int, dtype: str, index: int) -> np.ndarray:
    return (np.arange(n) * step + start).astype(_ref_dtype(dtype))


def _philox_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    m = 0xFFFFFFFF
    return [
        Sample("n=8", (8, (1, 2), (3, 4, 5, 6), INDEX)),
        Sample("n=7-partial-block", (7, (0xDEADBEEF, 7), (9, 0, 0, 0), INDEX)),
        Sample("carry-32", (16, (5, 6), (m - 1, 0, 0, 0), INDEX)),
        Sample("carry-96", (16, (5, 6), (m, m, m - 1, 0), INDEX)),
        Sample("wrap-128", (12, (5, 6), (m, m, m, m), INDEX)),
        Sample("n=0", (0, (1, 2), (0, 0, 0, 0), INDEX)),
        Sample("n=1000", (1000, (123, 456), (7, 8, 9, 10), INDEX)),
    ]


def _philox_ref(n: int, key: tuple[int, int], counter: tuple[int, int, int, int], index: int) -> np.ndarray:
    return philox_words(n, key, counter).astype(np.int64)


def _cast_source(rng: np.random.Generator, dtype: str, target: str) -> np.ndarray:
    v = values(rng, (3, 4), dtype)
    # Negative floats to unsigned is undefined behaviour in C and PyTorch: not asked.
    if target not in UNSIGNED or dtype in INTS + BOOL:
        return v
    return (np.abs(v.real) + 1j * v.imag).astype(v.dtype) if dtype in COMPLEX else np.abs(v)


def _cast_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """To every dtype from a tame and a full-range input, then every layout to one target."""
    out = [Sample(f"to_{t}", (contig(_cast_source(rng, dtype, t)), D(t)), out_dtype=t) for t in ALL]
    for t in ALL:
        v = _range_values(rng, dtype, t)
        if v is not None:
            out.append(Sample(f"range_to_{t}", (contig(v), D(t)), out_dtype=t))
    if dtype in COMPLEX:  # a purely imaginary number is true
        v = np.array([0j, 1j, 2 + 0j, -1j], dtype=dtype)
        out.append(Sample("imag_to_bool", (contig(v), D("bool")), out_dtype="bool"))
    target = "complex64" if dtype in COMPLEX else "float32"
    for label, t in layout_variants(rng, dtype, "any")[1:]:
        out.append(Sample(f"{label}_to_{target}", (t, D(target)), out_dtype=target))
    out.append(Sample(f"large_to_{target}", (large(rng, dtype), D(target)), out_dtype=target))
    return out


# Extra candidates for float -> int64 beyond int32's range (exactly representable in float32).
_BEYOND_INT32 = [3e9, -5e9, 2.0**40 + 0.5, -(2.0**40) - 0.5, 2.0**62, -(2.0**62), 9.2e18, -9.2e18, -(2.0**63)]
# Binary exponent range, subnormals included, of each float target.
_EXPONENTS = {"float16": (-26, 17), "bfloat16": (-135, 129), "float32": (-151, 129), "float64": (-60, 60)}


def _range_values(rng: np.random.Generator, src: str, target: str) -> np.ndarray | None:
    """Values of ``src`` spread over ``target``'s whole range, or None where that is undefined
    (float or complex out of an integer target's range is undefined behaviour in C and PyTorch)."""
    if src in INTS + BOOL:
        return edge_values(src)
    if src in COMPLEX:
        if target in INTS:
            return None
        return edge_values(src)
    if target in INTS:
        return _float_to_int_values(src, target)
    if target in FLOATS + COMPLEX:
        return _float_to_float_values(
            rng, src, {"complex64": "float32", "complex128": "float64"}.get(target, target)
        )
    return edge_values(src)  # to bool: NaN is true, -0.0 false


def _float_to_int_values(src: str, target: str) -> np.ndarray:
    """Integers' limits and their neighbours, halves (truncated toward zero) and, for int64,
    values beyond int32's range; only those ``src`` holds inside ``target``'s range."""
    info = np.iinfo(target)
    lo, hi = float(info.min), float(info.max)
    cand = [lo, hi, hi + 0.5, hi - 0.5, lo - 0.5, lo + 0.5, 0.5, -0.5, 1.5, -1.5, 2.5, -2.75, 0.0, -0.0]
    cand += _BEYOND_INT32 if target == "int64" else []
    sd = np_dtype(src)
    with np.errstate(all="ignore"):
        v = np.array(cand).astype(sd)
        v = np.concatenate([v, [np.nextafter(np.float64(hi + 1.0).astype(sd), sd.type(0))]]).astype(sd)
        wide = v.astype(np.float64)
    keep = np.isfinite(wide) & (np.trunc(wide) >= lo) & (np.trunc(wide) < hi + 1)  # 2**63 - 1 is 2**63 here
    return v[keep]


def _float_to_float_values(rng: np.random.Generator, src: str, target: str) -> np.ndarray:
    """``target``'s limits, ties between two of its values (round half to even), values that
    overflow or underflow it, and random mantissas over its whole exponent range."""
    fi = ml_dtypes.finfo(np_dtype(target))
    big, tiny, sub, eps = (float(fi.max), float(fi.tiny), float(fi.smallest_subnormal), float(fi.eps))
    ulp_max = big * eps / 2  # the spacing just below max
    cand = [big, big + ulp_max / 2, big + ulp_max / 4, big * 2, tiny, sub, sub / 2, sub * 1.5, sub * 2.5]
    cand += [1 + eps / 2, 1 + eps * 1.5, 1 + eps / 4, 1 - eps / 4, 0.0, -0.0, np.inf, -np.inf, np.nan]
    cand = cand + [-c for c in cand[:13]]
    lo, hi = _EXPONENTS[target]
    spread = rng.choice([-1.0, 1.0], 512) * np.exp2(rng.uniform(lo, hi, 512)) * rng.uniform(1, 2, 512)
    v = np.concatenate([cand, spread])
    if src == "float64":  # just above a tie once rounded to float32: PyTorch's two roundings
        v = np.concatenate([v, [1 + eps / 2 + eps * 2.0**-20, -(1 + eps * 1.5 + eps * 2.0**-20)]])
    with np.errstate(all="ignore"):
        return v.astype(np_dtype(src))


def _cast_ref(x: np.ndarray, target: str) -> np.ndarray:
    if target == "bool":
        return x != 0
    if target in COMPLEX:
        return x.astype(np.complex128)
    x = x.real if np.iscomplexobj(x) else x
    if target in INTS:
        return np.trunc(x).astype(np.int64) if x.dtype.kind == "f" else x.astype(np.int64)
    if target in ("float16", "bfloat16"):
        # PyTorch rounds to a half type through float32 (exact for narrower sources): the
        # comparison rounds this float32 value to the target once more.
        with np.errstate(over="ignore"):
            return x.astype(np.float32).astype(np.float64)
    return x.astype(np.float64)


def _assign_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """Writes into contiguous, transposed and step-sliced destinations, from every layout."""
    z = np.zeros((3, 4), dtype=values(rng, (), dtype).dtype)
    srcs = layout_variants(rng, dtype, "any")
    out = [
        Sample("0-d", (contig(z[0, 0].copy()), srcs[1][1])),
        Sample("empty", (contig(z[:0].copy()), srcs[2][1])),
        Sample("scalar", (contig(z.copy()), scalar(rng, dtype))),
        Sample("transposed-dst-scalar", (transposed(z.copy()), scalar(rng, dtype))),
    ]
    for i, dst in enumerate((contig(z.copy()), transposed(z.copy()), strided(z.copy()))):
        for label, src in (srcs[0], srcs[3], srcs[4], srcs[5]):
            out.append(Sample(f"{dst.layout}-dst<-{label}", (dst, src)))
    return out


def _assign_call(kernel, dst, src):  # type: ignore[no-untyped-def]
    """``assign`` returns nothing: its result is the destination after the write."""
    kernel(dst, src)
    return dst


def _assign_ref(dst: np.ndarray, src: object) -> np.ndarray:
    return np.broadcast_to(np.asarray(src).astype(dst.dtype), dst.shape).copy()


def _reshape_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    v = values(rng, (3, 4), dtype)
    return [
        Sample("basic", (contig(v), (2, 6))),
        Sample("flatten", (contig(v), (12,))),
        Sample("0-d", (contig(values(rng, (), dtype)), (1, 1))),
        Sample("empty", (contig(values(rng, (0, 3), dtype)), (3, 0))),
        Sample("strided-split", (strided(v), (3, 2, 2))),
        Sample("transposed-flatten-is-None", (transposed(v), (12,)), expect_none=True),
    ]


def _permute_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        Sample("basic", (contig(values(rng, (2, 3, 4), dtype)), (2, 0, 1))),
        Sample("transposed", (transposed(values(rng, (3, 4), dtype)), (1, 0))),
        Sample("0-d", (contig(values(rng, (), dtype)), ())),
        Sample("empty", (contig(values(rng, (0, 3), dtype)), (1, 0))),
    ]


def _expand_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        Sample("basic", (contig(values(rng, (3, 1), dtype)), (3, 4))),
        Sample("new-dims", (contig(values(rng, (4,), dtype)), (2, 3, 4))),
        Sample("0-d", (contig(values(rng, (), dtype)), (2, 2))),
        Sample("to-empty", (contig(values(rng, (1, 3), dtype)), (0, 3))),
        Sample("strided", (strided(values(rng, (1, 3), dtype)), (2, 3))),
    ]


def _slice_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    v = values(rng, (4, 5), dtype)
    return [
        Sample("int", (contig(v), (1,))),
        Sample("step-int", (contig(v), (slice(0, 4, 2), 1))),
        Sample("ranges", (contig(v), (slice(1, 3, 1), slice(0, 5, 2)))),
        Sample("empty", (contig(v), (slice(2, 2, 1),))),
        Sample("transposed", (transposed(v), (slice(0, 4, 3),))),
        Sample("0-d", (contig(values(rng, (), dtype)), ())),
    ]


def _as_strided_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    v = values(rng, (12,), dtype)
    return [
        Sample("windows", (contig(v), (3, 2), (2, 1), 1)),
        Sample("columns", (contig(v), (2, 2), (1, 4), 0)),
        Sample("broadcast", (contig(v), (2, 3), (0, 1), 5)),
        Sample("empty", (contig(v), (0, 2), (2, 1), 0)),
    ]


def _as_strided_ref(x: np.ndarray, shape, strides, offset) -> np.ndarray:  # type: ignore[no-untyped-def]
    flat = np.ascontiguousarray(x).reshape(-1)
    size = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], shape, tuple(s * size for s in strides)).copy()


# Integer targets only: every bit pattern is a valid value, so results compare exactly.
# The same-itemsize partner of each dtype (None: bool and uint8 use uint8/int8 below).
_SAME_SIZE = {"int8": "uint8", "bool": "uint8", "uint8": "int8", "int16": "int16", "float16": "int16"}
_SAME_SIZE.update({"bfloat16": "int16", "int32": "int32", "float32": "int32", "int64": "int64"})
_SAME_SIZE.update({"float64": "int64", "complex64": "int64"})


def _bitcast_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """To bytes (the last dim grows), to int64 (it shrinks unless 8 bytes), and to the same
    itemsize in every layout (strides kept) and 0-d. Larger targets see only last-dim-contiguous
    inputs: the frontend refuses the others, as PyTorch does."""
    v = values(rng, (3, 8), dtype)
    small = "int8" if dtype == "uint8" else "uint8"
    out = [
        Sample(f"to_{small}", (contig(v), D(small), dtype), out_dtype=small),
        Sample(f"empty_to_{small}", (contig(values(rng, (0, 4), dtype)), D(small), dtype), out_dtype=small),
    ]
    if dtype != "complex128":
        out.append(Sample("to_int64", (contig(v), D("int64"), dtype), out_dtype="int64"))
        same = _SAME_SIZE[dtype]
        for label, t in (("transposed", transposed(v)), ("strided", strided(v))):
            out.append(Sample(f"{label}_to_{same}", (t, D(same), dtype), out_dtype=same))
        zero_d = contig(values(rng, (), dtype))
        out.append(Sample(f"0-d_to_{same}", (zero_d, D(same), dtype), out_dtype=same))
    return out


def _bitcast_call(kernel, x, dtype, source):  # type: ignore[no-untyped-def]
    """The sample's last argument is the source dtype, for the reference only."""
    return kernel(x, dtype)


def _bitcast_ref(x: np.ndarray, target: str, source: str) -> np.ndarray:
    """The reference sees values upcast (float64...): back to ``source``, then its bytes."""
    return np.array(x.astype(np_dtype(source)), order="C").view(np_dtype(target)).astype(np.int64)


RECORDS = [
    OpCase("full", _full_samples, _full_ref, ALL, "every dtype"),
    OpCase("arange", _arange_samples, _arange_ref, REAL, "real numbers"),
    OpCase("philox", _philox_samples, _philox_ref, ("int64",), "words as int64 in [0, 2**32) (ops.py)"),
    OpCase("cast", _cast_samples, _cast_ref, ALL, "from every dtype to every declared dtype"),
    OpCase("assign", _assign_samples, _assign_ref, ALL, "every dtype", call=_assign_call),
    OpCase("reshape", _reshape_samples, lambda x, s: x.reshape(s), ALL, "every dtype"),
    OpCase("permute", _permute_samples, lambda x, d: x.transpose(d), ALL, "every dtype"),
    OpCase("expand", _expand_samples, lambda x, s: np.broadcast_to(x, s), ALL, "every dtype"),
    OpCase("slice", _slice_samples, lambda x, k: x[k], ALL, "every dtype"),
    OpCase("as_strided", _as_strided_samples, _as_strided_ref, ALL, "every dtype"),
    OpCase(
        "bitcast",
        _bitcast_samples,
        _bitcast_ref,
        ALL,
        "every dtype, to integer types of every itemsize",
        call=_bitcast_call,
    ),
]
