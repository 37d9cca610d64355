"""Complex math on special values against the CPU backend (NumPy, hence glibc's C99 Annex G).

Every complex unary and binary kernel runs on a grid whose real and imaginary parts are
±0, ±inf, NaN, small and large finite values and a subnormal. A result part must be NaN
exactly where the CPU's is, infinite or zero with the same sign, and finite parts must agree
to a few ulps (the transcendental functions are not correctly rounded on either side).
"""

from __future__ import annotations

import warnings
from typing import Any

import ember.backends as eb
import numpy as np
import pytest
from ember_opencl.cexprs import COMPLEX_BINARY, COMPLEX_UNARY

PARTS = np.array([0.0, -0.0, 1.5, -2.5, 100.0, -800.0, 1e-40, np.inf, -np.inf, np.nan])
RTOL = {"complex64": 4e-6, "complex128": 1e-14}


def _grid(dtype: str) -> np.ndarray:
    re, im = np.meshgrid(PARTS, PARTS, indexing="ij")
    z = np.empty(re.size, dtype)
    z.real, z.imag = re.ravel(), im.ravel()
    return z


def _mismatches(got: np.ndarray, want: np.ndarray, rtol: np.ndarray, signs: Any = True) -> np.ndarray:
    """Positions where a part differs in NaN-ness, in the sign of a zero or inf, or (finite
    parts) by more than ``rtol`` times the whole result's magnitude (complex error is
    norm-wise: a part that cancels to a tiny value carries the other part's rounding).
    ``signs`` false: the signs of zeros and infinities are not compared there."""
    bad = np.zeros(want.shape, bool)
    pairs = [(got.real, want.real), (got.imag, want.imag)] if np.iscomplexobj(want) else [(got, want)]
    tiny = 8 * np.finfo(want.real.dtype).smallest_subnormal
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.where(np.isfinite(want), np.abs(want), 0)
    for g, w in pairs:
        gn, wn = np.isnan(g), np.isnan(w)
        finite = np.isfinite(g) & np.isfinite(w)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.where(finite, np.abs(g - w) <= rtol * scale + tiny, g == w)
            close |= ~np.asarray(signs) & np.isinf(g) & np.isinf(w)
        zero_sign = (g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w)) & signs
        bad |= (gn != wn) | (~gn & ~wn & (~close | zero_sign))
    return bad


def _run(ocl: eb.LoadedBackend, op: str, *args: np.ndarray) -> np.ndarray:
    return np.asarray(ocl.backend.to_numpy(ocl.k[op](*(ocl.backend.from_numpy(a, 0) for a in args))))


def _check(got: np.ndarray, want: np.ndarray, dtype: str, *args: np.ndarray, cond: Any = 1.0) -> None:
    # Where the argument's rounding is amplified past the precision (a huge power), the
    # angle of an overflowed or underflowed result, hence its signs, is noise on both sides.
    bad = _mismatches(got, want, RTOL[dtype] * cond, signs=RTOL[dtype] * cond < 1e-3)
    if bad.any():
        rows = [f"{tuple(a[i] for a in args)}: got {got[i]}, want {want[i]}" for i in np.flatnonzero(bad)[:8]]
        pytest.fail(f"{int(bad.sum())} mismatches:\n" + "\n".join(rows))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", sorted(COMPLEX_UNARY))
def test_unary_special_values_match_cpu(ocl, cpu, op: str, dtype: str) -> None:  # type: ignore[no-untyped-def]
    z = _grid(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.asarray(cpu.k[op](z))
    _check(_run(ocl, op, z), want, dtype, z)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", sorted(COMPLEX_BINARY))
def test_binary_special_values_match_cpu(ocl, cpu, op: str, dtype: str) -> None:  # type: ignore[no-untyped-def]
    z = _grid(dtype)
    a, b = np.repeat(z, z.size), np.tile(z, z.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.asarray(cpu.k[op](a, b))
    cond: Any = 1.0
    if op == "pow":  # exp(b log a): the error of log a grows |b| times (and with |log a|)
        with np.errstate(all="ignore"):
            cond = 1 + np.nan_to_num(np.abs(b) * (1 + np.abs(np.log(np.abs(a)))), posinf=0)
    _check(_run(ocl, op, a, b), want, dtype, a, b, cond=cond)
