"""log_softmax over a large last axis (the CPU kernel's L2-blocked path, which skips the max
where sum(exp(x)) is safely finite and normal) against PyTorch: logits near 0, near
exp's overflow, far below it (rows that need the max), and with -inf, inf and NaN."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shift", [0.0, 85.0, -95.0, 200.0, -200.0, 700.0, -750.0])
def test_log_softmax_matches_pytorch(dtype: str, shift: float) -> None:
    rng = np.random.default_rng(int(abs(shift)))
    x = rng.standard_normal((40, 3000)) * 3 + shift
    x[1, :5] = shift - 1000  # a row with its max far above some words
    x[2, 7], x[3, :], x[4, 9], x[5, 1] = -np.inf, -np.inf, np.nan, np.inf
    x[6, :] = rng.standard_normal(3000) * 3 - 80  # rows of every magnitude in one call
    got = ember.log_softmax(ember.tensor(x, dtype=getattr(ember, dtype)), 1).numpy()
    want = torch.log_softmax(torch.tensor(x, dtype=getattr(torch, dtype)), 1).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    ulp = 2.0**-23 if dtype == "float32" else 2.0**-52
    # a few roundings of the largest magnitude in play (the row's log-sum-exp and x)
    np.testing.assert_allclose(
        got[fin], want[fin], rtol=0, atol=8 * ulp * (np.abs(x[np.isfinite(x)]).max() + 1)
    )
