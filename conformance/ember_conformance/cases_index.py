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
    """One, two and three index arrays, each with accumulate False (distinct points: which
    duplicate wins is unspecified) and True (duplicates, which must all add up)."""
    x = values(rng, (3, 4), dtype)
    rows = rng.permutation(3)[:2].astype(np.int64)
    out = [
        Sample("rows", (contig(x), (contig(rows),), contig(values(rng, (2, 4), dtype)), False)),
        Sample(
            "transposed-dst", (transposed(x), (None, contig(rows)), contig(values(rng, (3, 2), dtype)), False)
        ),
    ]
    shape = (3, 4, 5)
    for arity in (1, 2, 3):
        x = values(rng, shape[:arity] if arity > 1 else (5, 4), dtype)
        flat = rng.permutation(int(np.prod(x.shape[:arity])))[:4]
        unique = np.unravel_index(flat, x.shape[:arity])
        dup = tuple(index_samples(rng, n, (9,)) for n in x.shape[:arity])
        dup = tuple(np.concatenate([d, d[:3]]) for d in dup)  # points 9..11 repeat 0..2
        rest = x.shape[arity:]
        key_u = tuple(contig(i.astype(np.int64)) for i in unique)
        out.append(
            Sample(f"{arity}-arrays", (contig(x), key_u, contig(values(rng, (4, *rest), dtype)), False))
        )
        if dtype in NUMERIC:
            key_d = tuple(contig(d) for d in dup)
            vals = contig(values(rng, (12, *rest), dtype))
            out.append(Sample(f"{arity}-arrays-accumulate-duplicates", (contig(x), key_d, vals, True)))
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
        # duplicates add up in the result's dtype, in any order
        magnitude=lambda x, i, v, acc: _index_put_ref(np.abs(x), i, np.abs(v), acc),
    ),
    OpCase("nonzero", _nonzero_samples, lambda x: np.argwhere(x), ALL, "every dtype", out_dtype=_int64),
]
