"""Complex parts, construction, angle; gradients match values recorded from PyTorch 2.13."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _opsref import close, same

# Composites without a kernel on the primitives-only test backend warn once (by design).
pytestmark = pytest.mark.filterwarnings("ignore:.*has no kernel.*:RuntimeWarning")

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


def _z():
    return ember.tensor(
        [[1 + 2j, 0.5 - 1j], [-0.3 + 0.2j, 2 - 0.7j]], dtype=ember.complex128, requires_grad=True
    )


def test_complex_gradients_recorded_from_pytorch():
    z = _z()
    ember.cumprod(z, 1).imag.sum().backward()
    close(z.grad, [[-1 + 1.5j, 2 + 1j], [-0.7 + 3j, 0.2 - 0.3j]], rtol=1e-12)
    z = _z()
    r = ember.linalg.svd(z)
    (r.U @ r.Vh).real.sum().backward()
    close(
        z.grad,
        [
            [0.2613910530588578 - 0.15879501631959111j, 0.013745716409000186 - 0.09872650775494629j],
            [0.043234279764656436 - 0.08334712800931127j, 0.07431708381816153 + 0.24056406354883703j],
        ],
        rtol=1e-9,
    )
    z = _z()
    ember.linalg.slogdet(z).logabsdet.backward()
    close(
        z.grad,
        [
            [0.2378708773717051 + 0.41487329682923724j, 0.02164777791926651 + 0.07844135998981282j],
            [0.06239653635553295 - 0.24449255061759842j, 0.46606392461479695 - 0.19355660257226537j],
        ],
        rtol=1e-9,
    )
    z = _z()
    z.conj().imag.sum().backward()
    close(z.grad, np.full((2, 2), -1j))
    assert ember.tensor([[1 + 1j, 2j]]).mH.shape == (2, 1)
    close(ember.tensor([[1 + 1j, 2j]]).H, [[1 - 1j], [-2j]])


def test_python_complex_scalar_operands_are_conjugated():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (x * (1 + 2j)).abs().sum().backward()
    close(x.grad.real, [2.2360679775, 2.2360679775], rtol=1e-6)  # PyTorch 2.13: 2.2361 each
    z = ember.tensor([1 + 1j], requires_grad=True)
    (z / (1 + 2j)).abs().sum().backward()
    close(z.grad, [0.31622777 + 0.31622777j], rtol=1e-6)
