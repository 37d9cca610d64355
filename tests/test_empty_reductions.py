"""Reductions over empty dimensions and bool promotion: PyTorch's identities, dtypes and errors."""

import math

import ember
import pytest


def test_identities_of_empty_reductions():
    """sum 0, prod 1, all True, any False, mean nan, over every element of a (2, 0) tensor."""
    x = ember.zeros(2, 0)
    assert x.sum().item() == 0.0
    assert x.prod().item() == 1.0
    assert x.all().item() is True
    assert x.any().item() is False
    assert math.isnan(x.mean().item())


def test_reduction_over_the_empty_dim_keeps_the_other():
    """Reducing dim 1 of (2, 0) leaves (2,) (or (2, 1) with keepdim) of identities."""
    x = ember.zeros(2, 0)
    assert x.sum(1).tolist() == [0.0, 0.0]
    assert x.prod(1, keepdim=True).tolist() == [[1.0], [1.0]]
    assert x.sum(0).shape == (0,)
    assert x.cumsum(1).shape == (2, 0)


def test_amax_names_the_dim_as_written():
    """amax keeps the user's -1 in its message; max (with indices) names it non-negative."""
    x = ember.zeros(2, 0)
    with pytest.raises(IndexError, match=r"^amax\(\): Expected reduction dim -1 to have non-zero size\.$"):
        ember.amax(x, -1)
    with pytest.raises(IndexError, match=r"^max\(\): Expected reduction dim 1 to have non-zero size\.$"):
        ember.max(x, -1)


def test_argmax_of_empty_needs_a_dim():
    with pytest.raises(IndexError, match=r"reduction dim to be specified for input\.numel\(\) == 0\.$"):
        ember.argmax(ember.zeros(0))


def test_aminmax_of_empty_words_its_own_error():
    with pytest.raises(RuntimeError, match=r"^aminmax\(\): cannot compute aminmax over an empty dimension"):
        ember.aminmax(ember.zeros(2, 0))
    with pytest.raises(IndexError, match=r"^aminmax: Expected reduction dim 1 to have non-zero size\.$"):
        ember.aminmax(ember.zeros(2, 0), dim=-1)


def test_square_and_sum_of_bool_are_int64():
    x = ember.tensor([True, False, True])
    assert x.square().dtype == ember.int64
    assert x.square().tolist() == [1, 0, 1]
    assert x.sum().dtype == ember.int64
    assert x.cumsum(0).tolist() == [1, 1, 2]


def test_index_put_refuses_another_source_dtype():
    x = ember.zeros(3)
    message = (
        "Index put requires the source and destination dtypes match, "
        "got Float for the destination and Double for the source."
    )
    with pytest.raises(RuntimeError) as caught:
        x.index_put_((ember.tensor([0]),), ember.tensor([1.0], dtype=ember.float64))
    assert str(caught.value) == message
    assert x.tolist() == [0.0, 0.0, 0.0]


def test_grad_of_empty_sum_is_empty():
    x = ember.zeros(2, 0, requires_grad=True)
    x.sum().backward()
    assert x.grad is not None
    assert x.grad.shape == (2, 0)


def test_median_of_nothing_is_nan_or_its_integer_cast():
    """PyTorch's empty median: NaN for floats, NaN cast as x86 does for int64 (its minimum)."""
    assert math.isnan(ember.zeros(0).median().item())
    assert ember.zeros(0, dtype=ember.int64).median().item() == -(2**63)
    assert ember.zeros(2, 0, dtype=ember.int16).median().item() == 0
