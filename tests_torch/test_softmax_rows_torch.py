"""log_softmax over the last axis of a large tensor (the CPU kernels' L2-sized row blocks,
the word-LM decoder's case) against PyTorch: values and gradients, a last block shorter than
the others, and the layouts that take the whole-array path."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

TOL = {"float64": 1e-12, "float32": 2e-6}


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize(
    ("shape", "dim", "transpose"),
    [((2, 70, 1000), -1, False), ((140, 1000), 0, False), ((1000, 140), 1, True)],
)
def test_log_softmax_large_matches_pytorch(dtype: str, shape: tuple, dim: int, transpose: bool) -> None:
    rng = np.random.default_rng(17)
    x = rng.normal(0, 3, shape)
    g = np.zeros(shape[::-1] if transpose else shape)
    flat = g.reshape(-1, g.shape[-1])
    flat[np.arange(flat.shape[0]), rng.integers(0, flat.shape[1], flat.shape[0])] = -1.0 / flat.shape[0]
    flat[::7] += rng.normal(0, 1e-3, flat[::7].shape)
    e = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
    t = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    ye = ember.log_softmax(e.t() if transpose else e, dim)
    yt = torch.log_softmax(t.t() if transpose else t, dim)
    np.testing.assert_allclose(
        ye.detach().numpy(), yt.detach().numpy(), rtol=TOL[dtype], atol=TOL[dtype] * 10
    )
    ye.backward(ember.tensor(g, dtype=ye.dtype))
    yt.backward(torch.tensor(g, dtype=yt.dtype))
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=TOL[dtype], atol=TOL[dtype])


def test_log_softmax_result_outlives_next_call() -> None:
    """Results come from the backend's buffer cache: a kept result is never handed out again."""
    x = np.random.default_rng(2).normal(0, 1, (100, 1000)).astype(np.float32)
    first = ember.log_softmax(ember.tensor(x), 1)
    kept = first.numpy().copy()
    second = ember.log_softmax(ember.tensor(x * 2), 1)
    np.testing.assert_array_equal(first.numpy(), kept)
    assert not np.array_equal(second.numpy(), kept)
