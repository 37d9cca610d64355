"""ember.autograd.functional and anomaly mode against closed-form derivatives."""

import ember
import numpy as np
import pytest
from ember.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

F64 = ember.float64


def x3():
    return ember.tensor([1.0, 2.0, 3.0], dtype=F64)


def test_jacobian_of_square_is_diagonal_2x():
    np.testing.assert_array_equal(jacobian(lambda x: x**2, x3()).cpu().numpy(), np.diag([2.0, 4.0, 6.0]))


def test_jacobian_of_matrix_input_has_output_then_input_shape():
    a = ember.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64)
    j = jacobian(lambda m: m.sum(0), a)
    assert j.shape == (2, 2, 2)
    np.testing.assert_array_equal(j.cpu().numpy(), [[[1, 0], [1, 0]], [[0, 1], [0, 1]]])


def test_hessian_of_cube_sum():
    np.testing.assert_array_equal(
        hessian(lambda x: (x**3).sum(), x3()).cpu().numpy(), np.diag([6.0, 12.0, 18.0])
    )


def test_vjp_jvp_hvp_vhp():
    v = ember.tensor([1.0, -1.0, 0.5], dtype=F64)
    out, g = vjp(lambda x: x**2, x3(), v)
    np.testing.assert_array_equal(out.cpu().numpy(), [1, 4, 9])
    np.testing.assert_array_equal(g.cpu().numpy(), [2, -4, 3])
    _, jv = jvp(lambda x: x * x.sum(), x3(), v)
    # J = diag(s) + x 1^T with s = 6: J v = 6 v + x (1 . v)
    np.testing.assert_allclose(jv.cpu().numpy(), 6 * v.cpu().numpy() + x3().cpu().numpy() * 0.5)
    f = lambda x: (x**3).sum()
    val, hv = hvp(f, x3(), v)
    assert val.item() == 36.0
    np.testing.assert_array_equal(hv.cpu().numpy(), [6, -12, 9])
    np.testing.assert_array_equal(vhp(f, x3(), v)[1].cpu().numpy(), [6, -12, 9])


def test_vjp_without_v_requires_scalar_output():
    with pytest.raises(RuntimeError, match="single element"):
        vjp(lambda x: x**2, x3())


def test_detect_anomaly_names_the_op_that_made_nan():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with ember.autograd.detect_anomaly():
        y = (x.sqrt() * 0).sum()
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            y.backward()
    assert not ember.autograd.is_anomaly_enabled()
