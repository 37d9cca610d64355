"""``ember.fft``: discrete Fourier transforms composed from ember ops.

Even lengths split radix-2; a small odd remainder multiplies by a DFT matrix built from exact
integer phases ``(k * m) mod n``; a large one becomes a chirp-z (Bluestein) convolution of
power-of-two length. So every length costs O(n log n), runs on any backend with complex
arithmetic and is differentiable through the ops it uses.
Normalisation modes follow PyTorch: ``"backward"`` (default), ``"ortho"``, ``"forward"``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ember.backends import dtypes as D

from ._autocast_hook import autocast_op
from ._dtype import get_default_dtype
from ._ops._common import norm_dim
from ._ops.complex import complex as _complex
from ._ops.complex import real as _real
from ._ops.join import cat
from ._ops.matmul import matmul
from ._ops.shape import roll
from ._tensor import Tensor

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = ("backward", "ortho", "forward")


def _complex_dtype(x: Tensor) -> Any:
    if x.dtype.is_complex:
        return x.dtype
    if x.dtype is D.float64 or (x.dtype.category < 2 and get_default_dtype() is D.float64):
        return D.complex128
    return D.complex64


def _dft_matrix(n: int, inverse: bool, dtype: Any, device: Any) -> Tensor:
    """W[k, m] = exp(-+2 pi i (k m mod n) / n); the exact integer phase keeps large n accurate."""
    from ._creation import arange

    k = arange(n, device=device).reshape(-1, 1)
    m = arange(n, device=device).reshape(1, -1)
    real_dt = D.to_real(dtype)
    phase = ((k * m) % max(n, 1)).to(real_dt) * ((2 if inverse else -2) * math.pi / max(n, 1))
    return _complex(phase.cos(), phase.sin())


def _twiddles(n: int, inverse: bool, dtype: Any, device: Any) -> Tensor:
    """exp(-+2 pi i k / n) for k < n / 2."""
    from ._creation import arange

    phase = arange(n // 2, device=device).to(D.to_real(dtype)) * ((2 if inverse else -2) * math.pi / n)
    return _complex(phase.cos(), phase.sin())


def _fft_last(x: Tensor, inverse: bool) -> Tensor:
    """The DFT along the last dim: radix-2 decimation in time while the length is even (both
    halves batched, so log2(n) levels of tensor ops), a DFT matrix product for the odd rest."""
    n = x._shape[-1]
    if n % 2 and n > 64:
        return _bluestein(x, inverse)
    if n % 2 or n <= 16:
        return matmul(x, _dft_matrix(n, inverse, x.dtype, x._device))  # the matrix is symmetric
    halves = x.unflatten(-1, (n // 2, 2)).movedim(-1, -2)
    y = _fft_last(halves, inverse)
    even, odd = y.select(-2, 0), y.select(-2, 1)
    odd = odd * _twiddles(n, inverse, x.dtype, x._device)
    return cat([even + odd, even - odd], -1)


def _bluestein(x: Tensor, inverse: bool) -> Tensor:
    """An odd length m as a chirp-z convolution of power-of-two length: O(m log m)."""
    from ._creation import arange, zeros

    m = x._shape[-1]
    size = 1 << (2 * m - 2).bit_length()
    k = arange(m, device=x._device)
    phase = ((k * k) % (2 * m)).to(D.to_real(x.dtype)) * ((1 if inverse else -1) * math.pi / m)
    w = _complex(phase.cos(), phase.sin())
    a = cat([x * w, zeros(x._shape[:-1] + (size - m,), dtype=x.dtype, device=x._device)], -1)
    wc = w.conj_physical()
    gap = zeros(size - 2 * m + 1, dtype=x.dtype, device=x._device)
    b = cat([wc, gap, wc[1:].flip(0)], 0)
    conv = _fft_last(_fft_last(a, False) * _fft_last(b, False), True) * (1.0 / size)
    return conv[..., :m] * w


def _scale(norm: str | None, n: int, inverse: bool) -> float:
    mode = norm or "backward"
    if mode not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{mode}"')
    if mode == "ortho":
        return 1 / math.sqrt(n) if n else 1.0
    scaled_side = inverse if mode == "backward" else not inverse
    return 1 / n if scaled_side and n else 1.0


def _resize(x: Tensor, n: int, d: int) -> Tensor:
    """Trim or zero-pad dimension ``d`` to length ``n``."""
    from ._creation import zeros

    size = x._shape[d]
    if n == size:
        return x
    if n < size:
        return x.narrow(d, 0, n)
    pad = zeros(x._shape[:d] + (n - size,) + x._shape[d + 1 :], dtype=x.dtype, device=x._device)
    return cat([x, pad], d)


def _transform(x: Tensor, n: int | None, dim: int, norm: str | None, inverse: bool) -> Tensor:
    d = norm_dim(dim, x.ndim)
    n_in = x._shape[d] if n is None else n
    if n_in < 1:
        raise RuntimeError(f"Invalid number of data points ({n_in}) specified")
    xc = _resize(x, n_in, d)
    ct = _complex_dtype(xc)
    xc = xc.to(ct)
    out = _fft_last(xc.movedim(d, -1), inverse)
    s = _scale(norm, n_in, inverse)
    return (out * s if s != 1.0 else out).movedim(-1, d)


@autocast_op("fft.fft")
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform along ``dim`` (complex result)."""
    return _transform(input, n, dim, norm, False)


@autocast_op("fft.ifft")
def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``fft``."""
    return _transform(input, n, dim, norm, True)


@autocast_op("fft.rfft")
def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """``fft`` of a real signal, keeping the ``n // 2 + 1`` non-negative frequencies."""
    if input.dtype.is_complex:
        raise RuntimeError("rfft expects a real input tensor, but got " + input.dtype.name)
    d = norm_dim(dim, input.ndim)
    full = fft(input, n, d, norm)
    return full.narrow(d, 0, full._shape[d] // 2 + 1)


def _hermitian_full(x: Tensor, n: int, d: int) -> Tensor:
    """The full length-``n`` spectrum whose first half is ``x`` (Hermitian symmetry)."""
    half = n // 2 + 1
    x = _resize(x, half, d)
    tail = n - half
    if tail <= 0:
        return x
    mirror = x.narrow(d, 1, tail).flip(d).conj_physical()
    return cat([x, mirror], d)


@autocast_op("fft.irfft")
def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``rfft``: a real signal of length ``n`` (default ``2 * (m - 1)``)."""
    d = norm_dim(dim, input.ndim)
    m = input._shape[d]
    length = 2 * (m - 1) if n is None else n
    if length < 1:
        raise RuntimeError(f"Invalid number of data points ({length}) specified")
    x = input.to(_complex_dtype(input))
    return _real(ifft(_hermitian_full(x, length, d), length, d, norm))


_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


@autocast_op("fft.hfft")
def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    x = input.to(_complex_dtype(input))
    return irfft(x.conj_physical(), n, dim, _SWAP.get(norm, norm))


@autocast_op("fft.ihfft")
def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``hfft``: the first ``n // 2 + 1`` terms of ``conj(ifft(input))``."""
    return rfft(input, n, dim, _SWAP.get(norm, norm)).conj_physical()


def _dims_and_sizes(x: Tensor, s: Sequence[int] | None, dim: Any) -> tuple[list, list]:
    """Dims to transform: ``dim``; else the last ``len(s)`` dims; else all of them."""
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
    elif s is not None:
        dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = list(range(x.ndim))
    dims = [norm_dim(d, x.ndim) for d in dims]
    sizes = list(s) if s is not None else [None] * len(dims)
    if len(sizes) != len(dims):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    return dims, sizes


@autocast_op("fft.fftn")
def fftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The n-dimensional FFT over ``dim`` (all dims, or the last ``len(s)``)."""
    dims, sizes = _dims_and_sizes(input, s, dim)
    out = input
    for d, n in zip(dims, sizes):
        out = fft(out, n, d, norm)
    return out


@autocast_op("fft.ifftn")
def ifftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The inverse of ``fftn``."""
    dims, sizes = _dims_and_sizes(input, s, dim)
    out = input
    for d, n in zip(dims, sizes):
        out = ifft(out, n, d, norm)
    return out


@autocast_op("fft.rfftn")
def rfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """``fftn`` of a real input, halving the last transformed dimension."""
    dims, sizes = _dims_and_sizes(input, s, dim)
    out = rfft(input, sizes[-1], dims[-1], norm)
    for d, n in zip(dims[:-1], sizes[:-1]):
        out = fft(out, n, d, norm)
    return out


@autocast_op("fft.irfftn")
def irfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The inverse of ``rfftn``: a real result."""
    dims, sizes = _dims_and_sizes(input, s, dim)
    out = input
    for d, n in zip(dims[:-1], sizes[:-1]):
        out = ifft(out, n, d, norm)
    return irfft(out, sizes[-1], dims[-1], norm)


@autocast_op("fft.fft2")
def fft2(
    input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None
) -> Tensor:
    """``fftn`` over the last two dimensions."""
    return fftn(input, s, dim, norm)


@autocast_op("fft.ifft2")
def ifft2(
    input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None
) -> Tensor:
    """``ifftn`` over the last two dimensions."""
    return ifftn(input, s, dim, norm)


@autocast_op("fft.rfft2")
def rfft2(
    input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None
) -> Tensor:
    """``rfftn`` over the last two dimensions."""
    return rfftn(input, s, dim, norm)


@autocast_op("fft.irfft2")
def irfft2(
    input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None
) -> Tensor:
    """``irfftn`` over the last two dimensions."""
    return irfftn(input, s, dim, norm)


def hfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The n-dimensional ``hfft``: a real result from a half-Hermitian input."""
    x = input.to(_complex_dtype(input))
    return irfftn(x.conj_physical(), s, dim, _SWAP.get(norm, norm))


def ihfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The inverse of ``hfftn``: half of the Hermitian spectrum of a real input."""
    return rfftn(input, s, dim, _SWAP.get(norm, norm)).conj_physical()


def hfft2(
    input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None
) -> Tensor:
    """``hfftn`` over the last two dimensions."""
    return hfftn(input, s, dim, norm)


def ihfft2(
    input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None
) -> Tensor:
    """``ihfftn`` over the last two dimensions."""
    return ihfftn(input, s, dim, norm)


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None, **_: Any) -> Tensor:
    """Sample frequencies ``[0, 1, ..., n/2-1, -n/2, ..., -1] / (d n)``."""
    from ._creation import arange

    k = arange(n, device=device)
    k = k - (k >= (n + 1) // 2).to(D.int64) * n
    return k.to(dtype or get_default_dtype()) / (d * n)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None, **_: Any) -> Tensor:
    """Non-negative sample frequencies ``[0, 1, ..., n/2] / (d n)``."""
    from ._creation import arange

    return arange(n // 2 + 1, device=device).to(dtype or get_default_dtype()) / (d * n)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """Move the zero frequency to the centre (roll by ``n // 2`` along ``dim``)."""
    dims = list(range(input.ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    return roll(input, [input._shape[d] // 2 for d in dims], dims)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of ``fftshift``."""
    dims = list(range(input.ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    return roll(input, [-(input._shape[d] // 2) for d in dims], dims)
