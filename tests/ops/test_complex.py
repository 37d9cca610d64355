"""Complex parts, construction, angle; gradients match values recorded from PyTorch 2.13."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _opsref import close, same

Z = np.array([1 + 2j, -3 + 0.5j, 0j, -1 - 1j])


def test_parts_and_construction(cpu_prims):
    for dev in ("cpu", cpu_prims):
        z = ember.tensor(Z, device=dev)
        close(z.real, Z.real)
        close(z.imag, Z.imag)
        close(ember.real(z), Z.real)
        close(ember.view_as_real(z), np.stack([Z.real, Z.imag], -1))
        close(ember.angle(z), np.angle(Z))
        close(ember.conj_physical(z), np.conj(Z))
        close(z.conj(), np.conj(Z))
    assert ember.tensor(Z, dtype=ember.complex64).real.dtype == ember.float32
    r, i = ember.tensor([1.0, 2.0]), ember.tensor([3.0, -1.0])
    c = ember.complex(r, i)
    assert c.dtype == ember.complex64
    close(c, [1 + 3j, 2 - 1j])
    close(ember.polar(r, i), np.array([1.0, 2.0]) * np.exp(1j * np.array([3.0, -1.0])), rtol=1e-6)
    close(
        ember.view_as_complex(ember.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ember.float64)), [1 + 2j, 3 + 4j]
    )
    same(ember.angle(ember.tensor([-1.0, 0.0, 2.0, -0.0])), np.float32([np.pi, 0.0, 0.0, 0.0]))
    assert ember.conj_physical(ember.tensor([1.0])).dtype == ember.float32
    assert ember.tensor(Z).real.shape == (4,)
    assert ember.tensor(1 + 1j).imag.shape == ()


def test_errors():
    with pytest.raises(RuntimeError):
        _ = ember.tensor([1.0]).imag
    with pytest.raises(RuntimeError):
        ember.view_as_real(ember.tensor([1.0]))
    with pytest.raises(RuntimeError):
        ember.view_as_complex(ember.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError):
        ember.complex(ember.tensor([1.0]), ember.tensor([1.0], dtype=ember.float64))


def test_gradients_match_pytorch():
    z = ember.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
    z.imag.sum().backward()
    close(z.grad, [1j, 1j])
    z.grad = None
    ember.angle(z).sum().backward()
    close(z.grad, [-0.4 + 0.2j, -0.05405405 - 0.32432432j], rtol=1e-6)
    z.grad = None
    ember.view_as_real(z).pow(2).sum().backward()
    close(z.grad, [2 + 4j, -6 + 1j])
    r = ember.tensor([1.0, 2.0], requires_grad=True)
    i = ember.tensor([3.0, -1.0], requires_grad=True)
    c = ember.complex(r, i)
    (c * c).real.sum().backward()
    close(r.grad, [2.0, 4.0])
    close(i.grad, [-6.0, 2.0])
    r.grad = None
    ember.polar(r, i).imag.sum().backward()
    close(r.grad, [0.14112001, -0.84147098], rtol=1e-6)
