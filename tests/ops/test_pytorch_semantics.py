"""Edge semantics recorded from PyTorch 2.13 CPU (values pasted as literals), plus the
fallback policy for composites that have no decomposition."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from _opsref import close, same

INF, NAN = float("inf"), float("nan")


def test_recorded_values():
    close(ember.asinh(ember.tensor([INF, -INF, -3.0])), [INF, -INF, -1.8184465])
    close(
        ember.nanquantile(ember.tensor([-3.0, -0.5, 0.0, 0.7, 2.0, NAN, INF]), ember.tensor([0.1, 0.9])),
        [-1.75, NAN],
    )
    same(
        ember.tensor([1, -3, 5], dtype=ember.int8) << ember.tensor([1, 2, 7], dtype=ember.int8),
        [2, -12, -128],
    )
    same(ember.tensor([-128, 64, 5], dtype=ember.int8) >> 2, [-32, 16, 1])
    same(ember.tensor([200], dtype=ember.uint8) << 1, [144])
    same(ember.tensor([-5, 5]) >> 70, [-1, 0])
    x = ember.tensor([3, 8])
    x <<= 2
    same(x, [12, 32])
    same(ember.angle(ember.tensor([-1, 2])), np.float32([np.pi, 0.0]))
    same(ember.unique(ember.tensor([2.0, 1.0, 2.0])), [1.0, 2.0])
    r = ember.unique_consecutive(ember.tensor([1, 1, 2, 2, 3, 1]), return_inverse=True, return_counts=True)
    same(r[1], [0, 0, 1, 1, 2, 3])
    same(r[2], [2, 2, 1, 1])
    same(ember.searchsorted(ember.tensor([1, 2, 2, 3]), ember.tensor([2, 2.5])), [1, 3])
    same(ember.bucketize(ember.tensor([[0.5, 2.0]]), ember.tensor([1.0, 2.0]), right=True), [[0, 2]])
    same(
        ember.cross(
            ember.tensor([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), ember.tensor([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
        ),
        [[0, 0, -1], [-1, 0, 0], [0, -1, 0]],
    )


@pytest.mark.parametrize("name", ["atan2", "hypot", "fmax", "fmin", "logaddexp", "logaddexp2"])
def test_tensor_only_operands(name):
    with pytest.raises(TypeError):
        getattr(ember, name)(ember.tensor([1.0]), 2)


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2"])
def test_float_only(name):
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        getattr(ember, name)(ember.tensor([1]), ember.tensor([2]))


def test_fallback_policy_for_composites(cpu_prims, fallback_policy):
    x = ember.tensor([0.5], device=cpu_prims)
    fallback_policy("error")
    with pytest.raises(ember.backends.FallbackError):
        ember.special.i0(x)
    fallback_policy("warn")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        ember.special.i0e(x)
    assert any("i0e" in str(w.message) for w in got)
    fallback_policy("silent")
    close(ember.special.i1(x).cpu(), [0.25789430539])
