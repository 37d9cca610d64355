"""Records for the advanced-indexing composites (``index``, ``index_put``, ``nonzero``)."""

from __future__ import annotations

import numpy as np

from .cases_reduce import index_samples
from .dtypes import ALL, NUMERIC
from .records import OpCase, Sample
from .samples import contig, layout_variants, transposed, values

__all__ = ["RECORDS"]


def _key(indices: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(slice(None) if i is None else i for i in indices)


def _index_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(rng, (3, 4), dtype)
    i0, i1 = index_samples(rng, 3, (5,)), index_samples(rng, 4, (5,))
    return [
        Sample("dim0", (contig(x), (contig(i0),))),
        Sample("dim1", (contig(x), (None, contig(i1)))),
        Sample("both", (contig(x), (contig(i0), contig(i1)))),
        Sample("2-d-index", (transposed(x), (contig(index_samples(rng, 3, (2, 2))),))),
        Sample("empty-index", (contig(x), (contig(index_samples(rng, 3, (0,))),))),
    ]


def _index_put_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(rng, (3, 4), dtype)
    rows = rng.permutation(3)[:2].astype(np.int64)
    out = [
        Sample("rows", (contig(x), (contig(rows),), contig(values(rng, (2, 4), dtype)), False)),
        Sample(
            "points", (contig(x), (contig(rows), contig(rows + 1)), contig(values(rng, (2,), dtype)), False)
        ),
        Sample(
            "transposed-dst", (transposed(x), (None, contig(rows)), contig(values(rng, (3, 2), dtype)), False)
        ),
    ]
    if dtype in NUMERIC:
        dup = index_samples(rng, 3, (6,))
        out.append(
            Sample(
                "accumulate-duplicates", (contig(x), (contig(dup),), contig(values(rng, (6, 4), dtype)), True)
            )
        )
    return out


def _index_put_call(kernel, x, indices, vals, accumulate):  # type: ignore[no-untyped-def]
    """``index_put`` writes in place: its result is ``x`` after the write."""
    kernel(x, indices, vals, accumulate)
    return x


def _index_put_ref(
    x: np.ndarray, indices: tuple[object, ...], vals: np.ndarray, accumulate: bool
) -> np.ndarray:
    out = x.copy()
    if accumulate:
        np.add.at(out, _key(indices), vals)
    else:
        out[_key(indices)] = vals
    return out


def _nonzero_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = []
    for label, t in layout_variants(rng, dtype, "small"):
        out.append(Sample(label, (t,)))
    return out


def _int64(dtype: str) -> str:
    return "int64"


RECORDS = [
    OpCase("index", _index_samples, lambda x, i: x[_key(i)], ALL, "every dtype; int64 index arrays"),
    OpCase(
        "index_put",
        _index_put_samples,
        _index_put_ref,
        ALL,
        "every dtype; accumulate for numbers",
        call=_index_put_call,
    ),
    OpCase("nonzero", _nonzero_samples, lambda x: np.argwhere(x), ALL, "every dtype", out_dtype=_int64),
]
