"""Records for the special-function, scan, scatter_reduce and complex-part composites.

References come from SciPy in float64 (``scipy.special``), the trusted oracle for these.
"""

from __future__ import annotations

import numpy as np

from .dtypes import COMPLEX, FLOATS, INTS, REAL
from .records import OpCase, Sample
from .samples import binary_samples, contig, layout_variants, strided, transposed, unary_samples, values

__all__ = ["RECORDS"]


def _sp(name: str):  # type: ignore[no-untyped-def]
    def ref(x: np.ndarray, *params: object) -> np.ndarray:
        import scipy.special as sp

        return getattr(sp, name)(*params, x)

    return ref


def _special(op: str, fn: str, domain: str = "any", why: str = "real floating") -> OpCase:
    return OpCase(op, unary_samples(domain, special=True), _sp(fn), FLOATS, why, tol_scale=4.0)


def _lgamma(x: np.ndarray) -> np.ndarray:
    """log|gamma(x)| as PyTorch and C's lgamma give it: SciPy's gammaln returns -inf at -inf
    (C: +inf) and inf at the smallest subnormals (where -log|x| is finite)."""
    import scipy.special as sp

    out = sp.gammaln(x)
    out = np.where(np.isneginf(x), np.inf, out)
    return np.where(np.isinf(out) & (np.abs(x) < 1e-300) & (x != 0), -np.log(np.abs(x)), out)


def _polygamma_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    out = [Sample(label, (t, 1)) for label, t in layout_variants(rng, dtype, "pos")]
    return out + [Sample(f"n={n}", (contig(values(rng, (5,), dtype, "pos")), n)) for n in (0, 2)]


def _polygamma(x: np.ndarray, n: int) -> np.ndarray:
    import scipy.special as sp

    return sp.polygamma(n, x)


def _zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    import scipy.special as sp

    return sp.zeta(x, q)


def _cum_samples(domain: str, nan: bool = False):  # type: ignore[no-untyped-def]
    def make(dtype: str, rng: np.random.Generator) -> list[Sample]:
        x = values(rng, (3, 4), dtype, domain)
        out = [
            Sample("dim0", (contig(x), 0)),
            Sample("dim1", (contig(x), 1)),
            Sample("transposed", (transposed(x), 1)),
            Sample("strided", (strided(x), 0)),
            Sample("empty", (contig(values(rng, (0, 3), dtype, domain)), 0)),
            Sample("ties", (contig(np.round(values(rng, (2, 6), dtype, "small"))), 1)),
        ]
        if nan and dtype in FLOATS:  # NaN takes over and stays; each later NaN moves the index
            v = values(rng, (2, 7), dtype, domain)
            v[0, 2] = v[0, 5] = v[1, 0] = np.nan
            out.append(Sample("nan", (contig(v), 1)))
        return out

    return make


def _cum_extreme(take):  # type: ignore[no-untyped-def]
    """(running extreme, index of its last occurrence): ``take(new, best)`` says when to move."""

    def ref(x: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
        xs = np.moveaxis(x, dim, 0)
        vals, idx = np.empty_like(xs), np.zeros(xs.shape, np.int64)
        for i in range(xs.shape[0]):
            move = np.ones(xs.shape[1:], bool) if i == 0 else take(xs[i], vals[i - 1]) | np.isnan(xs[i])
            vals[i] = np.where(move, xs[i], vals[i - 1] if i else xs[i])
            idx[i] = np.where(move, i, idx[i - 1] if i else 0)
        return np.moveaxis(vals, 0, dim), np.moveaxis(idx, 0, dim)

    return ref


def _scatter_reduce_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(rng, (3, 4), dtype, "small")
    out = []
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            index = rng.integers(0, 3, (4, 4)).astype(np.int64)
            src = values(rng, (4, 4), dtype, "small")
            out.append(
                Sample(
                    f"{reduce}-self={include_self}",
                    (contig(x), contig(index), contig(src), 0, reduce, include_self),
                )
            )
    index = rng.integers(0, 4, (3, 2)).astype(np.int64)
    out.append(
        Sample(
            "dim1-bigger-src", (contig(x), contig(index), contig(values(rng, (3, 5), dtype)), 1, "sum", True)
        )
    )
    return out


def _scatter_reduce(
    x: np.ndarray, index: np.ndarray, src: np.ndarray, dim: int, reduce: str, include_self: bool
) -> np.ndarray:
    out = x.copy()
    groups: dict[tuple[int, ...], list[object]] = {}
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = int(index[pos])
        groups.setdefault(tuple(target), []).append(src[pos])
    for t, vals in groups.items():
        items = ([x[t]] if include_self else []) + vals
        if reduce == "mean":
            total = np.sum(items)
            out[t] = total // len(items) if x.dtype.kind in "iu" else total / len(items)
        else:
            out[t] = {"sum": np.sum, "prod": np.prod, "amax": np.max, "amin": np.min}[reduce](items)
    return out


def _real_of(dtype: str) -> str:
    return {"complex64": "float32", "complex128": "float64"}[dtype]


def _complex_of(dtype: str) -> str:
    return {"float32": "complex64", "float64": "complex128"}[dtype]


def _sort_like(dtype: str) -> tuple[str, str]:
    return dtype, "int64"


_PARTS = unary_samples("any", special=False)

RECORDS = [
    OpCase("atan", unary_samples(special=True), np.arctan, FLOATS, "real floating"),
    OpCase("atan2", binary_samples(), np.arctan2, FLOATS, "real floating; quadrant-aware", tol_scale=2.0),
    OpCase("asin", unary_samples("unit", special=True), np.arcsin, FLOATS, "real floating"),
    OpCase("acos", unary_samples("unit", special=True), np.arccos, FLOATS, "real floating"),
    _special("erfc", "erfc"),
    _special("erfinv", "erfinv", "unit"),
    _special("erfcx", "erfcx"),
    OpCase("lgamma", unary_samples("pos", special=True), _lgamma, FLOATS, "real floating", tol_scale=4.0),
    _special("digamma", "digamma", "pos"),
    OpCase("polygamma", _polygamma_samples, _polygamma, FLOATS, "real floating; n = 0, 1, 2", tol_scale=4.0),
    OpCase(
        "zeta", binary_samples("zeta", "pos", scalars=False), _zeta, FLOATS, "real floating", tol_scale=4.0
    ),
    _special("ndtri", "ndtri", "prob"),
    _special("log_ndtr", "log_ndtr"),
    _special("i0", "i0"),
    _special("i0e", "i0e"),
    _special("i1", "i1"),
    _special("i1e", "i1e"),
    _special("bessel_j0", "j0"),
    _special("bessel_j1", "j1"),
    OpCase(
        "cumprod",
        _cum_samples("unit"),
        lambda x, d: np.cumprod(x, axis=d),
        INTS + FLOATS + COMPLEX,
        "numbers; keeps the dtype",
        magnitude=lambda x, d: np.cumprod(np.abs(x), axis=d),
    ),
    OpCase(
        "cummax",
        _cum_samples("small", nan=True),
        _cum_extreme(np.greater_equal),
        REAL,
        "ordered types; ties take the last index",
        out_dtype=_sort_like,
    ),
    OpCase(
        "cummin",
        _cum_samples("small", nan=True),
        _cum_extreme(np.less_equal),
        REAL,
        "ordered types; ties take the last index",
        out_dtype=_sort_like,
    ),
    OpCase(
        "scatter_reduce",
        _scatter_reduce_samples,
        _scatter_reduce,
        REAL,
        "real numbers; kernel(x, index, src, dim, reduce, include_self); integer mean floors",
    ),
    OpCase("real", _PARTS, np.real, COMPLEX, "complex only", out_dtype=_real_of),
    OpCase("imag", _PARTS, np.imag, COMPLEX, "complex only", out_dtype=_real_of),
    OpCase(
        "complex",
        binary_samples(scalars=False),
        lambda re, im: re + 1j * im,
        ("float32", "float64"),
        "float32 -> complex64, float64 -> complex128",
        out_dtype=_complex_of,
    ),
]
