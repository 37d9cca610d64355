"""Pooling edge cases against PyTorch's recorded indices, on the kernel and decomposed paths."""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest


@pytest.fixture(params=["cpu", "prims"])
def device(request: pytest.FixtureRequest) -> str:
    return "cpu" if request.param == "cpu" else request.getfixturevalue("cpu_prims")


def _planes_with_inf(device: str) -> ember.Tensor:
    x = np.arange(60, dtype=np.float64).reshape(1, 2, 5, 6) % 7
    x[0, 0, :2, :3] = -np.inf
    x[0, 1] = -np.inf
    return ember.tensor(x, device=device)


def test_all_minus_inf_windows_report_first_in_bounds_cell(device: str) -> None:
    # PyTorch never reports a padding cell: an all -inf window gives its first real cell.
    _, idx = F.max_pool2d(_planes_with_inf(device), 2, padding=1, return_indices=True)
    assert idx.tolist() == [
        [[[0, 1, 4, 5], [12, 13, 10, 11], [18, 20, 27, 23]], [[0, 1, 3, 5], [6, 7, 9, 11], [18, 19, 21, 23]]]
    ]
    _, idx = F.max_pool2d(_planes_with_inf(device), 2, stride=1, padding=1, dilation=2, return_indices=True)
    assert idx.tolist()[0][1] == [
        [7, 6, 7, 8, 9, 10],
        [1, 0, 1, 2, 3, 4],
        [7, 6, 7, 8, 9, 10],
        [13, 12, 13, 14, 15, 16],
        [19, 18, 19, 20, 21, 22],
    ]


def test_max_pool_gradient_goes_to_real_cells(device: str) -> None:
    x = _planes_with_inf(device).requires_grad_()
    F.max_pool2d(x, 2, padding=1).sum().backward()
    assert x.grad.sum().item() == 24.0  # 2 planes x 12 windows, nothing lost in padding


def test_pool3d_by_2d_taps() -> None:
    x = ember.arange(2 * 5 * 4 * 4, dtype=ember.float64).reshape(1, 2, 5, 4, 4).requires_grad_()
    y = F.max_pool3d(x, 2, padding=1)
    assert y.shape == (1, 2, 3, 3, 3)
    y.sum().backward()
    assert x.grad.sum().item() == 54.0
    a = F.avg_pool3d(x, 2)
    assert a[0, 0, 0, 0, 0].item() == np.mean([0, 1, 4, 5, 16, 17, 20, 21])
