"""Sample-input builders shared by the case records.

Values are drawn in float64/int64 inside an op's domain, then converted to the dtype under
test, so the reference (computed on the converted values) sees exactly what the kernel saw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .dtypes import COMPLEX, FLOATS, UNSIGNED, np_dtype
from .records import Sample, T

__all__ = [
    "binary_samples",
    "contig",
    "expanded",
    "layout_variants",
    "scalar",
    "strided",
    "transposed",
    "unary_samples",
    "values",
]

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


def _special(dtype: str) -> list[np.ndarray]:
    if dtype not in FLOATS:
        return []
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], dtype=np.float64)
    return [v.astype(np_dtype(dtype))]


def unary_samples(
    domain: str = "any", special: bool = False
) -> Callable[[str, np.random.Generator], list[Sample]]:
    """Samples for a one-input elementwise op; ``special`` adds NaN/inf/signed zeros."""

    def make(dtype: str, rng: np.random.Generator) -> list[Sample]:
        out = [Sample(label, (t,)) for label, t in layout_variants(rng, dtype, domain)]
        if special:
            out += [Sample("special", (contig(v),)) for v in _special(dtype)]
        return out

    return make


def binary_samples(
    dom_a: str = "any", dom_b: str = "any", with_nan: bool = False, scalars: bool = True
) -> Callable[[str, np.random.Generator], list[Sample]]:
    """Samples for a two-input elementwise op: both inputs through every layout (the second
    one rotated so layouts mix), a Python scalar second argument and optional NaNs."""

    def make(dtype: str, rng: np.random.Generator) -> list[Sample]:
        first = layout_variants(rng, dtype, dom_a)
        second = layout_variants(rng, dtype, dom_b)
        out = []
        for i, (label, a) in enumerate(first):
            b = second[i] if label in ("0-d", "empty") else second[(i + 1) % len(second)]
            if b[0] in ("0-d", "empty") and label not in ("0-d", "empty"):
                b = second[3]  # keep shapes equal: use the broadcast variant
            out.append(Sample(f"{label}+{b[0]}", (a, b[1])))
        if scalars:
            a = values(rng, (3, 4), dtype, dom_a)
            out.append(Sample("scalar", (contig(a), scalar(rng, dtype, dom_b))))
        if with_nan and dtype in FLOATS:
            a, b = values(rng, (6,), dtype, dom_a), values(rng, (6,), dtype, dom_b)
            a[0], b[1], a[2], b[2] = np.nan, np.nan, np.nan, np.nan
            out.append(Sample("nan", (contig(a), contig(b))))
        return out

    return make
