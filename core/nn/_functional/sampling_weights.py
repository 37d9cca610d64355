"""1-D resampling weights of ``interpolate``, as (out, in) matrices or index lists.

Every separable mode of ``interpolate`` is a product of one such matrix per spatial dim, so
the resize is a chain of matmuls (any backend; the gradient is the transposed matrix).
Weights follow PyTorch's CPU kernels step by step, in the input's floating precision ``ft``
(float32 or float64, PyTorch's "opmath" type), so results agree to the last bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["aa_weights", "area_weights", "cubic_weights", "linear_weights", "nearest_index"]

_A_CUBIC = -0.75  # upsample_bicubic2d's convolution constant
_A_CUBIC_AA = -0.5  # the antialiased (PIL) filter's


def _scale(n: int, o: int, align_corners: bool, scale: float | None, ft: type) -> float:
    """PyTorch's ``area_pixel_compute_scale``: input step per output step."""
    if align_corners:
        return ft(n - 1) / ft(o - 1) if o > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n) / ft(o)


def _source(s: float, i: int, align_corners: bool, cubic: bool, ft: type) -> float:
    if align_corners:
        return ft(s * ft(i))
    src = ft(s * ft(i + 0.5) - ft(0.5))
    return ft(0) if not cubic and src < 0 else src


def _guard(src: float, n: int, ft: type) -> tuple[int, float]:
    i0 = min(math.floor(src), n - 1)
    return i0, ft(min(max(ft(src - ft(i0)), ft(0)), ft(1)))


def linear_weights(n: int, o: int, align_corners: bool, scale: float | None, ft: type) -> np.ndarray:
    """Two taps per output: ``(1 - t)·x[i] + t·x[i + 1]`` (the identity when ``n == o``)."""
    m: np.ndarray = np.zeros((o, n), dtype=ft)
    if n == o:
        return np.eye(n, dtype=ft)
    s = _scale(n, o, align_corners, scale, ft)
    for i in range(o):
        i0, lam = _guard(_source(s, i, align_corners, False, ft), n, ft)
        m[i, i0] += ft(1) - lam
        m[i, i0 + (1 if i0 < n - 1 else 0)] += lam
    return m


def _cubic1(x: float, a: float) -> float:
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic2(x: float, a: float) -> float:
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def cubic_coefficients(t: float, a: float = _A_CUBIC) -> tuple[float, float, float, float]:
    """Keys' cubic convolution weights of the taps at offsets -1, 0, 1, 2 for fraction ``t``."""
    return _cubic2(t + 1, a), _cubic1(t, a), _cubic1(1 - t, a), _cubic2(2 - t, a)


def cubic_weights(n: int, o: int, align_corners: bool, scale: float | None, ft: type) -> np.ndarray:
    """Four taps per output, indices clamped to the edge (``upsample_bicubic2d``)."""
    m: np.ndarray = np.zeros((o, n), dtype=ft)
    s = _scale(n, o, align_corners, scale, ft)
    for i in range(o):
        i0, lam = _guard(_source(s, i, align_corners, True, ft), n, ft)
        for j, w in enumerate(cubic_coefficients(lam)):
            m[i, min(max(i0 - 1 + j, 0), n - 1)] += ft(w)
    return m


def _tri(x: float) -> float:
    x = abs(x)
    return 1.0 - x if x < 1.0 else 0.0


def _cubic_aa(x: float) -> float:
    x = abs(x)
    if x < 1.0:
        return _cubic1(x, _A_CUBIC_AA)
    if x < 2.0:
        return _cubic2(x, _A_CUBIC_AA)
    return 0.0


def _sinc(x: float) -> float:
    return 1.0 if x == 0.0 else math.sin(math.pi * x) / (math.pi * x)


def _lanczos3(x: float) -> float:
    return _sinc(x) * _sinc(x / 3.0) if -3.0 < x < 3.0 else 0.0


_AA_FILTERS: dict[str, tuple[int, Callable[[float], float]]] = {
    "bilinear": (2, _tri),
    "bicubic": (4, _cubic_aa),
    "lanczos": (6, _lanczos3),
}


def aa_weights(n: int, o: int, align_corners: bool, scale: float | None, ft: type, mode: str) -> np.ndarray:
    """Antialiased weights: the filter stretched by the downscale factor, normalised to sum 1."""
    size, fn = _AA_FILTERS[mode]
    s = _scale(n, o, align_corners, scale, ft)
    support = ft(size * 0.5 * s) if s >= 1.0 else ft(size * 0.5)
    inv = ft(1.0 / s) if s >= 1.0 else ft(1.0)
    widest = math.ceil(support) * 2 + 1
    m: np.ndarray = np.zeros((o, n), dtype=ft)
    for i in range(o):
        center = ft(s * ft(i + 0.5))
        lo = max(int(center - support + ft(0.5)), 0)
        count = min(max(min(int(center + support + ft(0.5)), n) - lo, 0), widest)
        w: np.ndarray = np.array(
            [fn(float(ft((j + lo - center + ft(0.5)) * inv))) for j in range(count)], dtype=ft
        )
        total = w.sum(dtype=ft)
        m[i, lo : lo + count] = w / total if total != 0 else w
    return m


def area_weights(n: int, o: int, ft: type) -> np.ndarray:
    """Adaptive average pooling: output i averages ``[floor(i·n/o), ceil((i+1)·n/o))``."""
    m: np.ndarray = np.zeros((o, n), dtype=ft)
    for i in range(o):
        a, b = (i * n) // o, -(-((i + 1) * n) // o)
        m[i, a:b] = ft(1) / ft(b - a)
    return m


def nearest_index(n: int, o: int, scale: float | None, exact: bool) -> list[int]:
    """Source index per output (float32 arithmetic, as PyTorch's nearest kernels)."""
    f = np.float32
    s = f(1.0 / scale) if scale is not None and scale > 0 else f(n) / f(o)
    if exact:
        return [min(math.floor(f(np.float64(i + 0.5) * np.float64(s))), n - 1) for i in range(o)]
    return [min(math.floor(f(f(i) * s)), n - 1) for i in range(o)]
