"""Records for reductions, scan, matmul, indexing, sort and join primitives."""

from __future__ import annotations

import numpy as np

from .dtypes import ALL, BOOL, FLOATS, NUMERIC, REAL
from .records import OpCase, Sample
from .samples import LARGE_ROW, contig, edge_values, expanded, large, scalar, strided, transposed, values

__all__ = ["RECORDS", "index_samples", "reduction_samples"]


def reduction_samples(domain: str = "any", empty_dims: tuple[int, ...] = (0,), nan: bool = False):  # type: ignore[no-untyped-def]
    """Reductions over one, several and all axes, keepdim both ways, every layout.

    No 0-d input: ops.py says ``dims`` is never ``()``, and the frontend copies a 0-d tensor
    instead of reducing it."""

    def make(dtype: str, rng: np.random.Generator) -> list[Sample]:
        x3 = values(rng, (2, 3, 4), dtype, domain)
        out = [
            Sample("dim0", (contig(x3), (0,), False)),
            Sample("dims12-keepdim", (contig(x3), (1, 2), True)),
            Sample("all", (contig(x3), (0, 1, 2), False)),
            Sample("empty", (contig(values(rng, (0, 3), dtype, domain)), empty_dims, False)),
            Sample("broadcast", (expanded(values(rng, (1, 4), dtype, domain), (3, 4)), (0,), True)),
            Sample("transposed", (transposed(values(rng, (3, 4), dtype, domain)), (1,), False)),
            Sample("strided", (strided(values(rng, (3, 4), dtype, domain)), (0, 1), True)),
            Sample("large-rows", (large(rng, dtype, domain), (1,), False)),
            Sample("large-all", (large(rng, dtype, domain, LARGE_ROW), (0, 1), False)),
        ]
        if dtype in ("float16", "bfloat16"):
            # Positive rows of 4097: a float16/bfloat16 accumulator stalls far from the sum
            # (ops.py: half inputs are accumulated in at least float32).
            out.append(Sample("long-row-half", (contig(values(rng, (2, 4097), dtype, "pos")), (1,), False)))
        if nan and dtype in FLOATS:
            v = values(rng, (2, 5), dtype, domain)
            v[1, 2] = np.nan
            out.append(Sample("nan", (contig(v), (1,), False)))
        return out

    return make


def _argmax_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """Flat and per-axis, keepdim both ways; small ranges make ties (first index wins)."""
    x = values(rng, (3, 5), dtype, "small")
    out = [
        Sample("flat", (contig(x), None, False)),
        Sample("flat-keepdim", (contig(x), None, True)),
        Sample("dim1", (contig(x), 1, False)),
        Sample("dim0-keepdim", (contig(x), 0, True)),
        Sample("transposed", (transposed(x), 1, False)),
        Sample("strided", (strided(x), 0, False)),
        Sample("0-d", (contig(values(rng, (), dtype)), None, False)),
        Sample("ties", (contig(np.zeros((2, 4), x.dtype)), 1, False)),
    ]
    if dtype in FLOATS:
        v = values(rng, (2, 5), dtype)
        v[1, 3] = np.nan
        out.append(Sample("nan", (contig(v), 1, False)))
    return out


def _argmax_ref(x: np.ndarray, dim: int | None, keepdim: bool, fn=np.argmax) -> np.ndarray:  # type: ignore[no-untyped-def]
    r = np.asarray(fn(x, axis=dim))
    if keepdim:
        r = r.reshape((1,) * x.ndim) if dim is None else np.expand_dims(r, dim)
    return r


def _cumsum_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(rng, (3, 4), dtype)
    return [
        Sample("dim0", (contig(x), 0)),
        Sample("dim1", (contig(x), 1)),
        Sample("transposed", (transposed(x), 1)),
        Sample("strided", (strided(x), 0)),
        Sample("broadcast", (expanded(values(rng, (1, 4), dtype), (3, 4)), 0)),
        Sample("empty", (contig(values(rng, (0, 3), dtype)), 0)),
        Sample("large-row", (large(rng, dtype, "any", LARGE_ROW), 1)),
    ]


def _matmul_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    def v(*shape: int) -> np.ndarray:
        return values(rng, shape, dtype, "small")

    return [
        Sample("basic", (contig(v(3, 4)), contig(v(4, 5)))),
        Sample("batched", (contig(v(2, 3, 4)), contig(v(2, 4, 5)))),
        Sample("k=0", (contig(v(3, 0)), contig(v(0, 2)))),
        Sample("n=0", (contig(v(0, 4)), contig(v(4, 2)))),
        Sample("transposed", (transposed(v(3, 4)), strided(v(4, 2)))),
        Sample("broadcast-batch", (expanded(v(1, 3, 4), (2, 3, 4)), contig(v(2, 4, 3)))),
        Sample("1x1", (contig(v(1, 1)), contig(v(1, 1)))),
        Sample("large-odd", (strided(v(67, 263)), contig(v(263, 129)))),
    ]


def index_samples(
    rng: np.random.Generator, n: int, shape: tuple[int, ...], unique_dim: int | None = None
) -> np.ndarray:
    """int64 indices in [0, n); a permutation along ``unique_dim`` so scatter has no ties."""
    if unique_dim is None:
        return rng.integers(0, n, shape).astype(np.int64)
    moved = list(shape)
    moved.pop(unique_dim)
    cols = [rng.permutation(n)[: shape[unique_dim]] for _ in range(int(np.prod(moved)))]
    arr = np.stack(cols, axis=-1).reshape((shape[unique_dim], *moved)) if cols else np.zeros(shape)
    return np.moveaxis(arr, 0, unique_dim).astype(np.int64)


def _gather_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(rng, (3, 4), dtype)
    return [
        Sample("dim0", (contig(x), 0, contig(index_samples(rng, 3, (2, 4))))),
        Sample("dim1", (contig(x), 1, contig(index_samples(rng, 4, (3, 6))))),
        Sample("smaller-index", (contig(x), 1, contig(index_samples(rng, 4, (2, 3))))),
        Sample("transposed", (transposed(x), 0, transposed(index_samples(rng, 3, (3, 4))))),
        Sample("strided", (strided(x), 1, contig(index_samples(rng, 4, (3, 2))))),
        Sample("empty-index", (contig(x), 0, contig(index_samples(rng, 3, (0, 4))))),
        Sample("0-d", (contig(values(rng, (), dtype)), 0, contig(np.zeros((), np.int64)))),
    ]


def _gather_ref(x: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    if x.ndim == 0:
        return x.copy()
    xs = x[tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(index.shape))]
    return np.take_along_axis(xs, index, axis=dim)


def _scatter_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(rng, (3, 4), dtype)
    out = [
        Sample(
            "dim0",
            (
                contig(x),
                0,
                contig(index_samples(rng, 3, (2, 4), 0)),
                contig(values(rng, (2, 4), dtype)),
                None,
            ),
        ),
        Sample(
            "dim1-bigger-src",
            (
                contig(x),
                1,
                contig(index_samples(rng, 4, (3, 2), 1)),
                contig(values(rng, (3, 4), dtype)),
                None,
            ),
        ),
        Sample(
            "scalar-src", (contig(x), 1, contig(index_samples(rng, 4, (2, 3), 1)), scalar(rng, dtype), None)
        ),
        Sample(
            "transposed",
            (
                transposed(x),
                0,
                contig(index_samples(rng, 3, (3, 4), 0)),
                transposed(values(rng, (3, 4), dtype)),
                None,
            ),
        ),
        Sample(
            "empty-index",
            (contig(x), 0, contig(index_samples(rng, 3, (0, 4))), contig(values(rng, (0, 4), dtype)), None),
        ),
        Sample(
            "0-d",
            (
                contig(values(rng, (), dtype)),
                0,
                contig(np.zeros((), np.int64)),
                contig(values(rng, (), dtype)),
                None,
            ),
        ),
        Sample(
            "0-d-scalar-src",
            (contig(values(rng, (), dtype)), 0, contig(np.zeros((), np.int64)), scalar(rng, dtype), None),
        ),
    ]
    if dtype != "bool":
        out.append(
            Sample(
                "add-duplicates",
                (
                    contig(x),
                    0,
                    contig(index_samples(rng, 3, (5, 4))),
                    contig(values(rng, (5, 4), dtype)),
                    "add",
                ),
            )
        )
    return out


def _scatter_ref(x: np.ndarray, dim: int, index: np.ndarray, src: object, reduce: str | None) -> np.ndarray:
    if x.ndim == 0:  # as a 1-element 1-d array
        src = src.reshape(1) if isinstance(src, np.ndarray) else src
        return _scatter_ref(x.reshape(1), 0, index.reshape(1), src, reduce).reshape(())
    out = x.copy()
    grid = list(np.ogrid[tuple(slice(0, s) for s in index.shape)])
    grid[dim] = index
    if isinstance(src, np.ndarray):
        src = src[tuple(slice(0, s) for s in index.shape)]
    if reduce == "add":
        np.add.at(out, tuple(grid), src)
    else:
        out[tuple(grid)] = src
    return out


def _sort_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    """Stable sorts both ways on every layout, with ties, NaNs and the dtype's limits (no 0-d:
    the frontend answers that itself)."""
    x = values(rng, (3, 5), dtype, "small")
    if dtype in FLOATS:
        x[:, ::2] = x[:, 1::2][:, :1]  # ties, to prove stability
    out = []
    for descending in (False, True):
        way = "-descending" if descending else ""
        out += [
            Sample(f"dim1{way}", (contig(x), 1, descending)),
            Sample(f"dim0{way}", (contig(x), 0, descending)),
            Sample(f"transposed{way}", (transposed(x), 0, descending)),
            Sample(f"strided{way}", (strided(x), 1, descending)),
            Sample(f"limits{way}", (contig(np.tile(edge_values(dtype), (2, 2))), 1, descending)),
            Sample(f"large-row{way}", (large(rng, dtype, "any", LARGE_ROW), 1, descending)),
        ]
        if dtype in FLOATS:  # NaN sorts last ascending, first descending (PyTorch)
            v = values(rng, (2, 9), dtype, "small")
            v[:, ::3] = np.nan
            v[1, 4] = v[1, 5]
            out.append(Sample(f"nan{way}", (contig(v), 1, descending)))
    return out + [Sample("empty", (contig(values(rng, (0, 3), dtype)), 0, False))]


def _sort_ref(x: np.ndarray, dim: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    keys = np.moveaxis(x, dim, -1)
    # Stable: ties keep their order either way; NaN after everything ascending, first descending.
    # ~ reverses integers (and bool) without overflowing at the minimum.
    if descending:
        nan = np.isnan(keys) if keys.dtype.kind == "f" else np.zeros(keys.shape, bool)
        idx = np.lexsort((-keys if keys.dtype.kind == "f" else ~keys, ~nan))
    else:
        idx = np.argsort(keys, axis=-1, kind="stable")
    idx = np.moveaxis(idx, -1, dim)
    return np.take_along_axis(x, idx, axis=dim), idx


def _cat_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    def v(*shape: int) -> np.ndarray:
        return values(rng, shape, dtype)

    return [
        Sample("dim0", ([contig(v(2, 3)), contig(v(1, 3)), contig(v(0, 3))], 0)),
        Sample("dim1-views", ([transposed(v(2, 2)), strided(v(2, 3)), expanded(v(1, 1), (2, 2))], 1)),
        Sample("one", ([contig(v(4))], 0)),
        Sample("1-d", ([contig(v(3)), contig(v(2))], 0)),
    ]


def _int64(dtype: str) -> str:
    return "int64"


def _sort_out(dtype: str) -> tuple[str, str]:
    return dtype, "int64"


def _red(fn):  # type: ignore[no-untyped-def]
    return lambda x, dims, keepdim: fn(x, axis=dims, keepdims=keepdim)


def _red_mag(fn):  # type: ignore[no-untyped-def]
    return lambda x, dims, keepdim: fn(np.abs(x), axis=dims, keepdims=keepdim)


RECORDS = [
    OpCase(
        "sum",
        reduction_samples(),
        _red(np.sum),
        NUMERIC,
        "numbers; result keeps the input dtype "
        "(the frontend casts small ints to int64 first, as PyTorch sums them)",
        magnitude=_red_mag(np.sum),
    ),
    OpCase(
        "prod",
        reduction_samples("unit"),
        _red(np.prod),
        NUMERIC,
        "numbers; result keeps the dtype",
        magnitude=_red_mag(np.prod),
    ),
    OpCase(
        "amax",
        reduction_samples(empty_dims=(1,), nan=True),
        _red(np.max),
        BOOL + REAL,
        "ordered types; NaN propagates; empty only along non-empty axes",
    ),
    OpCase(
        "argmax",
        _argmax_samples,
        _argmax_ref,
        REAL,
        "real numbers (first index wins; NaN is max)",
        out_dtype=_int64,
    ),
    OpCase(
        "cumsum",
        _cumsum_samples,
        lambda x, d: np.cumsum(x, axis=d),
        NUMERIC,
        "numbers, keeps the dtype",
        magnitude=lambda x, d: np.cumsum(np.abs(x), axis=d),
    ),
    OpCase(
        "matmul",
        _matmul_samples,
        np.matmul,
        NUMERIC,
        "numbers (no bool); >= 2-d with equal batch dims",
        magnitude=lambda a, b: np.abs(a) @ np.abs(b),
    ),
    OpCase("gather", _gather_samples, _gather_ref, ALL, "every dtype; int64 indices"),
    OpCase("scatter", _scatter_samples, _scatter_ref, ALL, "every dtype; reduce='add' for numbers"),
    OpCase("sort", _sort_samples, _sort_ref, BOOL + REAL, "ordered types; stable", out_dtype=_sort_out),
    OpCase("cat", _cat_samples, lambda xs, d: np.concatenate(xs, axis=d), ALL, "every dtype"),
]
