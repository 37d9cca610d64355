"""Sample-input builders shared by the case records: one description per op family.

Values are drawn in float64/int64 inside an op's domain, then converted to the dtype under
test, so the reference (computed on the converted values) sees exactly what the kernel saw.
Every family reaches the edges a kernel gets wrong: sizes 0, 1 and odd, one large odd size
above any vector/tile/chunk threshold (``LARGE``), 0-d, broadcast size-1 dims, transposed
and step-sliced layouts (the harness starts a step slice at element 1: a non-zero storage
offset), and values at the dtype's limits (``edge_values``: integer min/max, huge, tiny and
subnormal floats, signed zeros, infinities, NaN).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from .dtypes import COMPLEX, FLOATS, INTS, UNSIGNED, np_dtype
from .records import Sample, T

__all__ = [
    "LARGE",
    "LARGE_ROW",
    "binary_samples",
    "contig",
    "edge_values",
    "expanded",
    "large",
    "layout_variants",
    "scalar",
    "strided",
    "transposed",
    "unary_samples",
    "values",
]

# Large odd sizes, above any plausible vector width, tile or chunk threshold (4096, 65536),
# used by one sample per op and dtype: a square and a long row.
LARGE = (263, 263)
LARGE_ROW = (1, 70001)

# domain -> (float low, float high, int low, int high); uint8 clips its low end at 0.
_DOMAINS = {
    "any": (-3.0, 3.0, -5, 5),
    "pos": (0.1, 4.0, 1, 5),
    "small": (-2.0, 2.0, -3, 3),
    "unit": (-0.9, 0.9, -1, 1),
    "exp": (-2.0, 2.0, 0, 3),
    "prob": (0.05, 0.95, 0, 1),  # open unit interval (ndtri)
    "zeta": (1.5, 4.0, 2, 4),  # zeta's first argument, away from the pole at 1
}
# Divisors that make a / b exact in binary floating point, so floor(a / b) cannot differ
# between a correct kernel and the reference by rounding.
_POW2 = np.array([-4.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 4.0])


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, domain: str = "any") -> np.ndarray:
    """Random values of ``dtype`` drawn from ``domain`` (see ``_DOMAINS``)."""
    if domain == "pow2":
        v = rng.choice(_POW2, shape)
        if dtype not in FLOATS:
            v = np.where(np.abs(v) < 1, np.sign(v), v)
            v = np.abs(v) if dtype in UNSIGNED else v
        return np.asarray(v).astype(np_dtype(dtype))
    flo, fhi, ilo, ihi = _DOMAINS[domain]
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in FLOATS:
        return rng.uniform(flo, fhi, shape).astype(np_dtype(dtype))
    if dtype in COMPLEX:
        re = rng.uniform(flo, fhi, shape)
        im = rng.uniform(-abs(fhi), abs(fhi), shape) * (0.5 if domain == "pos" else 1.0)
        return (re + 1j * im).astype(dtype)
    if dtype in UNSIGNED:
        ilo = max(ilo, 0)
    return rng.integers(ilo, ihi + 1, shape).astype(dtype)


def scalar(rng: np.random.Generator, dtype: str, domain: str = "any") -> Any:
    """A Python scalar of ``dtype``'s category, as the frontend passes in place of an array."""
    v = values(rng, (), dtype, domain)
    return v.item() if dtype != "bfloat16" else float(v)


def contig(v: np.ndarray) -> T:
    return T(v)


def expanded(src: np.ndarray, shape: tuple[int, ...]) -> T:
    """``src`` broadcast to ``shape`` on the device with the ``expand`` kernel."""
    return T(np.broadcast_to(src, shape).copy(), "expand", src)


def transposed(v: np.ndarray) -> T:
    """``v`` held as a transposed buffer and viewed back with ``permute``."""
    return T(v, "permute")


def strided(v: np.ndarray) -> T:
    """``v`` held as every other element of a wider buffer, viewed with ``slice``."""
    return T(v, "step")


def layout_variants(
    rng: np.random.Generator, dtype: str, domain: str, shape: tuple[int, int] = (3, 4)
) -> list[tuple[str, T]]:
    """The layouts every elementwise op sees: contiguous, 0-d, empty, broadcast,
    transposed and step-sliced."""
    small = values(rng, (1, shape[1]), dtype, domain)
    return [
        ("basic", contig(values(rng, shape, dtype, domain))),
        ("0-d", contig(values(rng, (), dtype, domain))),
        ("empty", contig(values(rng, (0, shape[1]), dtype, domain))),
        ("broadcast", expanded(small, shape)),
        ("transposed", transposed(values(rng, shape, dtype, domain))),
        ("strided", strided(values(rng, shape, dtype, domain))),
    ]


def edge_values(dtype: str) -> np.ndarray:
    """The values at ``dtype``'s limits: integer min/max and their neighbours; for floats
    the largest, smallest normal and smallest subnormal of both signs, signed zeros,
    infinities and NaN; False/True for bool; complex numbers with such parts."""
    if dtype == "bool":
        return np.array([False, True])
    if dtype in INTS:
        info = np.iinfo(dtype)
        v = [info.min, info.min + 1, info.max - 1, info.max, 0, 1, 2] + ([-1, -2] if info.min else [])
        return np.array(v, dtype=dtype)
    real = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
    fi = ml_dtypes.finfo(np_dtype(real))
    mags = [float(fi.max), float(fi.tiny), float(fi.smallest_subnormal), 1.0, 0.5, 3.0, np.inf]
    v = np.array([m * sgn for m in mags for sgn in (1.0, -1.0)] + [0.0, -0.0, np.nan])
    if dtype in COMPLEX:
        return (v + 1j * np.roll(v, 3)).astype(dtype)
    return v.astype(np_dtype(dtype))


def _special(dtype: str) -> list[np.ndarray]:
    return [edge_values(dtype)] if dtype in FLOATS or dtype in INTS else []


def large(rng: np.random.Generator, dtype: str, domain: str = "any", shape: tuple[int, ...] = LARGE) -> T:
    """One contiguous input of a large odd size."""
    return contig(values(rng, shape, dtype, domain))


def unary_samples(
    domain: str = "any", special: bool = False
) -> Callable[[str, np.random.Generator], list[Sample]]:
    """Samples for a one-input elementwise op; ``special`` adds NaN/inf/signed zeros."""

    def make(dtype: str, rng: np.random.Generator) -> list[Sample]:
        out = [Sample(label, (t,)) for label, t in layout_variants(rng, dtype, domain)]
        out.append(Sample("one", (contig(values(rng, (1,), dtype, domain)),)))
        out.append(Sample("odd-transposed", (transposed(values(rng, (7, 5), dtype, domain)),)))
        out.append(Sample("broadcast-col", (expanded(values(rng, (5, 1), dtype, domain), (5, 3)),)))
        out.append(Sample("large", (large(rng, dtype, domain),)))
        if special:
            out += [Sample("special", (contig(v),)) for v in _special(dtype)]
        return out

    return make


def binary_samples(
    dom_a: str = "any", dom_b: str = "any", with_nan: bool = False, scalars: bool = True, limits: bool = False
) -> Callable[[str, np.random.Generator], list[Sample]]:
    """Samples for a two-input elementwise op: both inputs through every layout (the second
    one rotated so layouts mix), a large odd size, a Python scalar second argument, optional
    NaNs and, with ``limits``, every pair of ``edge_values`` (integer wrap-around, IEEE
    infinities, signed zeros)."""

    def make(dtype: str, rng: np.random.Generator) -> list[Sample]:
        first = layout_variants(rng, dtype, dom_a)
        second = layout_variants(rng, dtype, dom_b)
        out = []
        for i, (label, a) in enumerate(first):
            b = second[i] if label in ("0-d", "empty") else second[(i + 1) % len(second)]
            if b[0] in ("0-d", "empty") and label not in ("0-d", "empty"):
                b = second[3]  # keep shapes equal: use the broadcast variant
            out.append(Sample(f"{label}+{b[0]}", (a, b[1])))
        one = (contig(values(rng, (1,), dtype, dom_a)), contig(values(rng, (1,), dtype, dom_b)))
        out.append(Sample("one", one))
        col = expanded(values(rng, (7, 1), dtype, dom_b), (7, 5))
        out.append(Sample("odd-strided+broadcast-col", (strided(values(rng, (7, 5), dtype, dom_a)), col)))
        out.append(
            Sample("large", (large(rng, dtype, dom_a, LARGE_ROW), large(rng, dtype, dom_b, LARGE_ROW)))
        )
        if limits and dtype not in COMPLEX:
            e = edge_values(dtype)
            grid_a, grid_b = np.meshgrid(e, e, indexing="ij")
            out.append(Sample("limits", (contig(grid_a.copy()), contig(grid_b.copy()))))
        if scalars:
            a = values(rng, (3, 4), dtype, dom_a)
            out.append(Sample("scalar", (contig(a), scalar(rng, dtype, dom_b))))
        if with_nan and dtype in FLOATS:
            a, b = values(rng, (6,), dtype, dom_a), values(rng, (6,), dtype, dom_b)
            a[0], b[1], a[2], b[2] = np.nan, np.nan, np.nan, np.nan
            out.append(Sample("nan", (contig(a), contig(b))))
        return out

    return make
