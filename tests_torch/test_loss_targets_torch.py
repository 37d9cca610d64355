"""Losses given targets outside their documented values compute what PyTorch computes."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_hinge_embedding_loss_with_targets_other_than_plus_minus_one(reduction: str) -> None:
    x = [0.5, 2.0, -1.0, 0.25, 3.0]
    y = [1.0, 0.0, 2.0, -1.0, -3.0]  # PyTorch: != -1 adds x, != 1 adds max(0, margin - x)
    want = torch.nn.functional.hinge_embedding_loss(
        torch.tensor(x), torch.tensor(y), margin=1.5, reduction=reduction
    )
    got = ember.nn.functional.hinge_embedding_loss(
        ember.tensor(x), ember.tensor(y), margin=1.5, reduction=reduction
    )
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
