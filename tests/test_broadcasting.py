"""Broadcasting: result shapes against NumPy and PyTorch's mismatch message."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import assert_equal


@pytest.mark.parametrize(
    "sa, sb",
    [
        ((2, 3), (3,)),
        ((4, 1, 3), (5, 1)),
        ((1,), (2, 2)),
        ((), (2, 3)),
        ((0, 1), (1, 3)),
        ((2, 1, 1), (1, 1, 4)),
    ],
)
def test_broadcast_shapes_and_values_match_numpy(sa, sb):
    a = np.arange(int(np.prod(sa))).reshape(sa)
    b = np.arange(int(np.prod(sb))).reshape(sb) * 10
    assert_equal(ember.tensor(a) + ember.tensor(b), a + b, ember.int64)
    assert ember.broadcast_shapes(sa, sb) == np.broadcast_shapes(sa, sb)


@pytest.mark.parametrize(
    "sa, sb, msg",
    [
        (
            (2, 2),
            (2, 3),
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1",
        ),
        (
            (4, 1, 3),
            (2, 5),
            "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 2",
        ),
        (
            (3,),
            (4,),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0",
        ),
    ],
)
def test_broadcast_mismatch_message(sa, sb, msg):
    with pytest.raises(RuntimeError) as e:
        ember.ones(*sa) + ember.ones(*sb)
    assert str(e.value) == msg


def test_inplace_result_cannot_grow():
    with pytest.raises(
        RuntimeError, match=r"^output with shape \[3\] doesn't match the broadcast shape \[2, 3\]$"
    ):
        ember.zeros(3).add_(ember.ones(2, 3))
    t = ember.zeros(2, 3)
    t.add_(ember.tensor([1.0, 2.0, 3.0]))
    assert t.tolist() == [[1.0, 2.0, 3.0]] * 2


def test_expand_and_broadcast_to():
    t = ember.tensor([[1], [2]])
    assert t.expand(2, 3).tolist() == [[1, 1, 1], [2, 2, 2]]
    assert t.expand(-1, 2).shape == (2, 2)
    assert ember.broadcast_shapes((2, 1), (3,)) == (2, 3)
