"""Trilinear ``Upsample``/``interpolate`` against PyTorch's recorded values and gradients."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import nn

X0 = np.sin(np.arange(2 * 2 * 3 * 4 * 5)).reshape(2, 2, 3, 4, 5)

# (Upsample kwargs, PyTorch 2.x: output shape, sum(y * sin), sum(x.grad * x) for g = cos)
CASES = [
    ({"scale_factor": 2}, [2, 2, 6, 8, 10], 0.30149993311348067, -1.3932364604650411),
    ({"size": (5, 3, 7), "align_corners": True}, [2, 2, 5, 3, 7], -2.0667640562253973, -4.101103127274696),
    ({"scale_factor": (1.5, 0.7, 2.3)}, [2, 2, 4, 2, 11], -0.10147871860824154, -0.008392508248377006),
    (
        {"scale_factor": 1.7, "recompute_scale_factor": True},
        [2, 2, 5, 6, 8],
        -0.8444643904830915,
        -2.856282441097211,
    ),
    ({"size": (1, 1, 1), "align_corners": True}, [2, 2, 1, 1, 1], 0.15840029585973836, 0.38682570899968977),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_matches_pytorch(i: int) -> None:
    kw, shape, y_sum, g_sum = CASES[i]
    x = ember.tensor(X0, requires_grad=True)
    y = nn.Upsample(mode="trilinear", **kw)(x)
    assert list(y.shape) == shape
    g = np.cos(np.arange(int(np.prod(shape)))).reshape(shape)
    (y * ember.tensor(g)).sum().backward()
    a = y.detach().cpu().numpy()
    got = [
        float((a * np.sin(np.arange(a.size)).reshape(a.shape)).sum()),
        float((x.grad.cpu().numpy() * X0).sum()),
    ]
    np.testing.assert_allclose(got, [y_sum, g_sum], rtol=1e-10, atol=1e-13)


def test_repr_and_dimension_error() -> None:
    assert (
        repr(nn.Upsample(scale_factor=2, mode="trilinear")) == "Upsample(scale_factor=2.0, mode='trilinear')"
    )
    with pytest.raises(NotImplementedError, match="Got 4D input, but trilinear mode needs 5D input"):
        ember.nn.functional.interpolate(ember.zeros(1, 1, 2, 2), scale_factor=2, mode="trilinear")
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        ember.nn.functional.interpolate(ember.zeros(1, 1, 2, 2), scale_factor=2, mode="linear")
