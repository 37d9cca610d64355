"""ember.fft against numpy.fft (float64), dtypes and gradients."""

from __future__ import annotations

import ember
import ember.fft as F
import numpy as np
import pytest
from _opsref import close, dbl, grad_ok

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 8))
Z = X + 1j * RNG.normal(size=(3, 8))
NORMS = [None, "backward", "ortho", "forward"]


def t(a):
    return ember.tensor(a)


@pytest.mark.parametrize("norm", NORMS)
def test_one_dimensional(norm):
    close(F.fft(t(Z), norm=norm), np.fft.fft(Z, norm=norm), rtol=1e-10, atol=1e-12)
    close(F.ifft(t(Z), norm=norm), np.fft.ifft(Z, norm=norm), rtol=1e-10, atol=1e-12)
    close(F.fft(t(X), n=5, dim=0, norm=norm), np.fft.fft(X, n=5, axis=0, norm=norm), rtol=1e-10, atol=1e-12)
    close(F.fft(t(X), n=11, norm=norm), np.fft.fft(X, n=11, norm=norm), rtol=1e-10, atol=1e-12)
    close(F.rfft(t(X), norm=norm), np.fft.rfft(X, norm=norm), rtol=1e-10, atol=1e-12)
    spec = np.fft.rfft(X)
    close(F.irfft(t(spec), norm=norm), np.fft.irfft(spec, norm=norm), rtol=1e-10, atol=1e-12)
    close(F.irfft(t(spec), n=9, norm=norm), np.fft.irfft(spec, n=9, norm=norm), rtol=1e-10, atol=1e-12)
    close(F.hfft(t(Z), norm=norm), np.fft.hfft(Z, norm=norm), rtol=1e-10, atol=1e-12)
    close(F.hfft(t(Z), n=7, norm=norm), np.fft.hfft(Z, n=7, norm=norm), rtol=1e-10, atol=1e-12)
    close(F.ihfft(t(X), norm=norm), np.fft.ihfft(X, norm=norm), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("norm", NORMS)
def test_n_dimensional(norm):
    close(F.fft2(t(Z), norm=norm), np.fft.fft2(Z, norm=norm), rtol=1e-10, atol=1e-12)
    close(
        F.ifft2(t(Z), s=(2, 4), norm=norm),
        np.fft.ifft2(Z, s=(2, 4), axes=(-2, -1), norm=norm),
        rtol=1e-10,
        atol=1e-12,
    )
    close(F.fftn(t(Z), dim=(0,), norm=norm), np.fft.fftn(Z, axes=(0,), norm=norm), rtol=1e-10, atol=1e-12)
    close(
        F.ifftn(t(Z), s=(2, 4), norm=norm),
        np.fft.ifftn(Z, s=(2, 4), axes=(-2, -1), norm=norm),
        rtol=1e-10,
        atol=1e-12,
    )
    close(F.rfft2(t(X), norm=norm), np.fft.rfft2(X, norm=norm), rtol=1e-10, atol=1e-12)
    close(
        F.irfft2(t(np.fft.rfft2(X)), s=(3, 8), norm=norm),
        np.fft.irfft2(np.fft.rfft2(X), s=(3, 8), axes=(-2, -1), norm=norm),
        rtol=1e-10,
        atol=1e-12,
    )
    cube = X.reshape(3, 2, 4)
    close(F.rfftn(t(cube), norm=norm), np.fft.rfftn(cube, norm=norm), rtol=1e-10, atol=1e-12)
    close(
        F.irfftn(t(np.fft.rfftn(cube)), s=(3, 2, 4), norm=norm),
        np.fft.irfftn(np.fft.rfftn(cube), s=(3, 2, 4), axes=(0, 1, 2), norm=norm),
        rtol=1e-10,
        atol=1e-12,
    )


def test_helpers_and_dtypes():
    close(F.fftfreq(8, 0.5), np.fft.fftfreq(8, 0.5))
    close(F.fftfreq(7), np.fft.fftfreq(7), rtol=1e-6)
    close(F.rfftfreq(7, 2.0, dtype=ember.float64), np.fft.rfftfreq(7, 2.0))
    close(F.fftshift(t(X)), np.fft.fftshift(X))
    close(F.ifftshift(t(X), dim=1), np.fft.ifftshift(X, axes=1))
    assert F.fft(ember.tensor([1.0, 2.0])).dtype == ember.complex64
    assert F.fft(ember.tensor([1, 2])).dtype == ember.complex64
    assert F.fft(t(X)).dtype == ember.complex128
    assert F.irfft(F.rfft(ember.tensor([1.0, 2.0, 3.0, 4.0]))).dtype == ember.float32
    big = RNG.normal(size=2048).astype(np.float32)
    ref = np.fft.fft(big.astype(np.float64))
    assert np.abs(F.fft(ember.tensor(big)).cpu().numpy() - ref).max() < 1e-4 * np.abs(ref).max()
    with pytest.raises(RuntimeError):
        F.fft(t(X), norm="bad")
    with pytest.raises(RuntimeError):
        F.fft(t(X), n=0)
    with pytest.raises(RuntimeError):
        F.rfft(t(Z))


def test_gradients():
    grad_ok(lambda a: F.rfft(a).abs(), dbl(2, 6))
    grad_ok(lambda a: F.irfft(F.fft(a)[:, :4]), dbl(2, 6))
    grad_ok(lambda a: F.fft2(a).real, dbl(3, 4))
    grad_ok(lambda a: F.hfft(ember.complex(a, a.flip(1))), dbl(2, 5))


@pytest.mark.parametrize("n", [1, 2, 17, 48, 65, 1000, 1001, 4096, 15015])
def test_radix2_and_odd_lengths(n):
    x = RNG.normal(size=(2, n)) + 1j * RNG.normal(size=(2, n))
    close(F.fft(t(x)), np.fft.fft(x), rtol=1e-9, atol=1e-9)
    close(F.ifft(t(x)), np.fft.ifft(x), rtol=1e-9, atol=1e-9)


def test_hermitian_n_dimensional():
    # The inverse pairs, and shapes as in PyTorch 2.13 (hfft2 of (4, 5) is (4, 8)).
    x = RNG.normal(size=(4, 6))
    close(F.hfft2(F.ihfft2(t(x))), x, rtol=1e-10, atol=1e-12)
    close(F.hfftn(F.ihfftn(t(x), norm="ortho"), s=(4, 6), norm="ortho"), x, rtol=1e-10, atol=1e-12)
    z = RNG.normal(size=(4, 5)) + 1j * RNG.normal(size=(4, 5))
    assert F.hfft2(t(z)).shape == (4, 8)
    close(F.hfft2(t(z)), np.fft.irfft2(np.conj(z), axes=(-2, -1), norm="forward"), rtol=1e-10, atol=1e-12)
