"""Edge semantics recorded from PyTorch 2.13 CPU (values pasted as literals), plus the
fallback policy for composites that have no decomposition."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from _opsref import close, same

# Composites without a kernel on the primitives-only test backend warn once (by design).
pytestmark = pytest.mark.filterwarnings("ignore:.*has no kernel.*:RuntimeWarning")

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


def test_fallback_policy_for_composites(cpu_prims, fallback_policy, monkeypatch):
    from ember._ops._composite import DECOMPOSITIONS

    # i0, i0e and i1 decompose into primitives; without their decompositions they fall back.
    for op in ("i0", "i0e", "i1"):
        monkeypatch.delitem(DECOMPOSITIONS, op)
        monkeypatch.delitem(ember.backends.registry._decomposed, op)
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


# (op, dtype) pairs PyTorch 2.13 refuses with "... not implemented for '<dtype>'"-style RuntimeErrors
REFUSED = [
    (lambda x: ember.cdist(x, x), ember.float16),
    (lambda x: ember.logcumsumexp(x, 0), ember.int64),
    (lambda x: ember.lerp(x, x, 0.5), ember.int32),
    (lambda x: ember.median(x), ember.bool),
    (lambda x: ember.kthvalue(x, 1, 0), ember.bool),
    (lambda x: ember.trace(x), ember.bool),
    (lambda x: ember.addcmul(x, x, x), ember.bool),
    (lambda x: ember.searchsorted(x[0], x), ember.bool),
    (lambda x: ember.erfc(x), ember.complex64),
    (lambda x: ember.lgamma(x), ember.complex64),
    (lambda x: ember.isposinf(x), ember.complex64),
    (lambda x: ember.nansum(x), ember.complex64),
    (lambda x: ember.cummax(x, 0), ember.complex64),
    (lambda x: ember.atan2(x, x), ember.complex64),
    (lambda x: ember.hypot(x, x), ember.complex64),
    (lambda x: ember.xlogy(x, x), ember.complex64),
    (lambda x: ember.unique(x), ember.complex64),
    (lambda x: ember.cdist(x, x), ember.complex64),
]


@pytest.mark.parametrize("fn,dtype", REFUSED, ids=[f"{i}-{d.name}" for i, (_, d) in enumerate(REFUSED)])
def test_refused_dtypes(fn, dtype):
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]]).to(dtype)
    with pytest.raises(RuntimeError):
        fn(x)


def test_complex_logsumexp():
    z = np.array([[1 + 1j, 2 - 0.5j], [0.3j, -1.0 + 0j]])
    close(ember.logsumexp(ember.tensor(z), 1), np.log(np.exp(z).sum(1)), rtol=1e-12)
    close(ember.logcumsumexp(ember.tensor(z), 1), np.log(np.cumsum(np.exp(z), 1)), rtol=1e-12)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.int32, ember.uint8, ember.int8])
def test_small_dtypes_keep_pytorch_result_types(dtype):
    x = ember.tensor([[0.0, 1.0, 2.0], [3.0, 1.0, 0.0]]).to(dtype)
    floating = dtype in (ember.float16, ember.bfloat16)
    assert ember.sinh(x).dtype == (dtype if floating else ember.float32)
    assert ember.flip(x, [0]).dtype == dtype
    assert ember.cumprod(x, 0).dtype == (dtype if floating else ember.int64)
    assert ember.median(x, 1).values.dtype == dtype
    assert ember.atan2(x, x).dtype == (dtype if floating else ember.float32)
    close(
        ember.lgamma(x + 1).float(),
        np.float32([[0.0, 0.0, 0.6931472], [1.7917595, 0.0, 0.0]]),
        rtol=1e-2,
        atol=1e-2,
    )


def test_empty_and_single_shapes():
    with pytest.raises(IndexError):
        ember.mode(ember.zeros(0, 5), 0)
    assert ember.tensordot(ember.zeros(4, 0), ember.zeros(4, 0), ([1], [1])).shape == (4, 4)
    same(ember.inner(ember.zeros(4, 0), ember.zeros(3, 0)), np.zeros((4, 3)))
    assert ember.cov(ember.ones(1, 3)).shape == ()
