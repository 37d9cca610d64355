"""cat / stack: values against NumPy, dtype promotion and PyTorch 2.13's error texts."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import assert_equal

A = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_and_stack_match_numpy(dim):
    t = ember.tensor(A)
    assert_equal(ember.cat([t, t * 2], dim), np.concatenate([A, A * 2], dim))
    assert_equal(ember.stack([t, t * 2], dim), np.stack([A, A * 2], dim))


def test_cat_promotes_and_skips_legacy_empty_1d():
    r = ember.cat([ember.ones(2, dtype=ember.int32), ember.ones(2, dtype=ember.float16)])
    assert r.dtype is ember.float16
    assert ember.cat([ember.tensor(A), ember.tensor([])]).shape == (3, 4)


@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (
            lambda: ember.cat([ember.ones(2, 3), ember.ones(3, 2)]),
            RuntimeError,
            (
                "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for "
                "tensor number 1 in the list."
            ),
        ),
        (
            lambda: ember.cat([ember.ones(2, 3), ember.ones(2)]),
            RuntimeError,
            "Tensors must have same number of dimensions: got 2 and 1",
        ),
        (lambda: ember.cat([]), ValueError, "ember.cat(): expected a non-empty list of Tensors"),
        (
            lambda: ember.cat([ember.ones(2, 3)], 2),
            IndexError,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        ),
        (
            lambda: ember.stack([ember.ones(2, 3), ember.ones(3, 2)]),
            RuntimeError,
            "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 2] at entry 1",
        ),
        (lambda: ember.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    ],
)
def test_join_errors(fn, exc, msg):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value) == msg
