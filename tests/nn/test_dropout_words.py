"""Dropout's keep mask compares the raw Philox words with one threshold: it must be the mask
``rand(shape) >= p`` gives (same draws, same generator state after), for every dtype and for
``p`` on and next to the uniforms' grid."""

from __future__ import annotations

import ember
import pytest
from ember.nn._functional.linear import keep_mask

PS = [
    1e-9,
    2**-25,
    2**-24,
    0.05,
    0.1,
    0.1 + 1e-9,
    0.2,
    1 / 3,
    0.5,
    0.9,
    0.999,
    1 - 2**-24,
    1 - 2**-25,
    0.99999999,
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("p", PS)
def test_mask_is_rand_compared(dtype: str, p: float) -> None:
    dt = getattr(ember, dtype)
    ember.manual_seed(123)
    want = ember.rand((50, 41), dtype=dt) >= p
    state = ember.get_rng_state()
    ember.manual_seed(123)
    got = keep_mask((50, 41), p, dt, None)
    assert got.dtype is ember.bool and got.shape == (50, 41)
    assert bool((got == want).all())
    assert bool((ember.get_rng_state() == state).all())


def test_dropout_numbers_unchanged_by_seed() -> None:
    """F.dropout and attention dropout draw as before: the kept positions of a seed."""
    ember.manual_seed(7)
    x = ember.ones(4, 5)
    y = ember.nn.functional.dropout(x, 0.5)
    ember.manual_seed(7)
    keep = ember.rand((4, 5)) >= 0.5
    assert bool(((y != 0) == keep).all())
    assert bool((y[keep] == 2.0).all())


def test_integer_input_keeps_rand_error() -> None:
    with pytest.raises(NotImplementedError, match="check_uniform_bounds"):
        keep_mask((3,), 0.5, ember.int64, None)
