"""Complex matmul as four real matmuls over views of the real and imaginary parts.

A complex64/complex128 array is interleaved (re, im) pairs, so its parts are strided real
views of the same buffer (strides doubled, the imaginary part one element on): the real
tiled kernel reads them in place, and two elementwise passes write the parts of the result
((ar br - ai bi) + (ar bi + ai br) i), the textbook product BLAS's cgemm computes too.
"""

from __future__ import annotations

from . import elementwise as ew
from .clarray import CLArray, empty
from .matmul import matmul as real_matmul

__all__ = ["complex_matmul", "parts"]


def parts(x: CLArray) -> tuple[CLArray, CLArray]:
    """(real part, imaginary part) of complex ``x`` as views of its buffer."""
    r = ew.real_of(x.dtype)
    strides = tuple(2 * s for s in x.strides)
    re = CLArray(x.buf, 2 * x.nelem, x.shape, strides, 2 * x.offset, r, x.dev)
    return re, re.view(x.shape, strides, 2 * x.offset + 1)


def complex_matmul(a: CLArray, b: CLArray) -> CLArray:
    ar, ai = parts(a)
    br, bi = parts(b)
    out = empty(a.dev, a.shape[:-2] + (a.shape[-2], b.shape[-1]), a.dtype)
    if out.size == 0:
        return out
    ore, oim = parts(out)
    r = ore.dtype
    rr, ii = real_matmul(ar, br), real_matmul(ai, bi)
    ew.run(ore, "a - b", "", [("a", r, rr), ("b", r, ii)])
    ri, ir = real_matmul(ar, bi), real_matmul(ai, br)
    ew.run(oim, "a + b", "", [("a", r, ri), ("b", r, ir)])
    return out
