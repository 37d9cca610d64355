"""matmul / mm / bmm / mv / dot / @ in every rank against NumPy; PyTorch 2.13's error texts."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import assert_close, assert_equal

RNG = np.random.default_rng(1)

SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((3,), (2, 3, 4)),
    ((2, 4, 3), (3,)),
    ((2, 1, 2, 3), (5, 3, 4)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
]


@pytest.mark.parametrize("sa, sb", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_against_numpy(sa, sb, dtype):
    a, b = RNG.standard_normal(sa).astype(dtype), RNG.standard_normal(sb).astype(dtype)
    exp = np.matmul(a.astype(np.float64), b.astype(np.float64))
    tol = 1e-5 if dtype == "float32" else 1e-12
    for got in (ember.matmul(ember.tensor(a), ember.tensor(b)), ember.tensor(a) @ ember.tensor(b)):
        assert got.dtype is getattr(ember, dtype)
        assert_close(got, exp, rtol=tol, atol=tol)


def test_matmul_on_non_contiguous_and_integer_inputs():
    a = RNG.standard_normal((4, 3))
    assert_close(ember.tensor(a).t() @ ember.tensor(a), a.T @ a, rtol=1e-12)
    assert_equal(ember.tensor([[1, 2]]) @ ember.tensor([[3], [4]]), [[11]], ember.int64)
    b = np.arange(24).reshape(2, 3, 4)
    assert_equal(ember.tensor(b)[:, ::2, 1:] @ ember.tensor(b)[0, :, :2], b[:, ::2, 1:] @ b[0, :, :2])


def test_mm_bmm_mv_dot():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    assert_close(ember.mm(ember.tensor(a), ember.tensor(b)), a @ b, rtol=1e-12)
    x, y = RNG.standard_normal((5, 2, 3)), RNG.standard_normal((5, 3, 4))
    assert_close(ember.bmm(ember.tensor(x), ember.tensor(y)), x @ y, rtol=1e-12)
    v = RNG.standard_normal(3)
    assert_close(ember.mv(ember.tensor(a), ember.tensor(v)), a @ v, rtol=1e-12)
    assert_close(ember.dot(ember.tensor(v), ember.tensor(v)), v @ v, rtol=1e-12)
    assert ember.dot(ember.tensor(v), ember.tensor(v)).shape == ()


def _ones(*s):
    return ember.ones(*s)


@pytest.mark.parametrize(
    "fn, msg",
    [
        (
            lambda: ember.mm(_ones(2, 3), _ones(4, 5)),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
        ),
        (lambda: _ones(2, 3) @ _ones(4, 5), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
        (lambda: _ones(3) @ _ones(4, 5), "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x5)"),
        (lambda: _ones(2, 2, 3) @ _ones(4, 5), "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)"),
        (
            lambda: _ones(3) @ _ones(4),
            (
                "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
                "elements, but got 3 and 4 elements respectively"
            ),
        ),
        (lambda: _ones(2, 3) @ _ones(4), "size mismatch, got input (2), mat (2x3), vec (4)"),
        (lambda: _ones(3, 2, 3) @ _ones(4), "size mismatch, got input (6), mat (6x3), vec (4)"),
        (lambda: ember.mv(_ones(2, 3), _ones(4)), "size mismatch, got input (2), mat (2x3), vec (4)"),
        (
            lambda: _ones(2, 2, 3) @ _ones(2, 4, 5),
            "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].",
        ),
        (
            lambda: _ones(2, 1, 2, 3) @ _ones(5, 4, 5),
            "Expected size for first two dimensions of batch2 tensor to be: [10, 3] but got: [10, 4].",
        ),
        (
            lambda: ember.bmm(_ones(2, 2, 3), _ones(3, 3, 5)),
            "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3].",
        ),
        (
            lambda: _ones(2, 2, 3) @ _ones(3, 3, 5),
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
        ),
        (lambda: ember.bmm(_ones(2, 3), _ones(3, 5)), "batch1 must be a 3D tensor"),
        (lambda: ember.mm(_ones(3), _ones(3, 5)), "self must be a matrix"),
        (lambda: ember.dot(_ones(3, 1), _ones(3)), "1D tensors expected, but got 2D and 1D tensors"),
        (
            lambda: _ones(()) @ _ones(3),
            "both arguments to matmul need to be at least 1D, but they are 0D and 1D",
        ),
        (
            lambda: _ones(2, 3) @ ember.ones(3, 2, dtype=ember.float64),
            "expected m1 and m2 to have the same dtype, but got: float != double",
        ),
        (
            lambda: ember.tensor([[1, 2]]) @ ember.tensor([[3.0], [4]]),
            "expected m1 and m2 to have the same dtype, but got: long int != float",
        ),
    ],
)
def test_matmul_errors_match_pytorch(fn, msg):
    with pytest.raises(RuntimeError) as e:
        fn()
    assert str(e.value) == msg


def test_bool_matmul_is_not_implemented():
    with pytest.raises(NotImplementedError, match="\"addmm_impl_cpu_\" not implemented for 'Bool'"):
        ember.tensor([[True]]) @ ember.tensor([[True]])
