"""Reductions, scans, counting and search against NumPy (and values recorded from PyTorch)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _opsref import close, dbl, grad_ok, same

# Composites without a kernel on the primitives-only test backend warn once (by design).
pytestmark = pytest.mark.filterwarnings("ignore:.*has no kernel.*:RuntimeWarning")

RNG = np.random.default_rng(7)
A = RNG.normal(size=(3, 4, 5))
NAN = np.where(RNG.random((3, 4, 5)) < 0.2, np.nan, A)


def t(a):
    return ember.tensor(a)


def test_logsumexp_nansum_nanmean():
    close(ember.logsumexp(t(A), (0, 2)), np.log(np.exp(A).sum((0, 2))), rtol=1e-12)
    close(t(A).logsumexp(1, keepdim=True), np.log(np.exp(A).sum(1, keepdims=True)), rtol=1e-12)
    close(ember.logsumexp(ember.tensor([float("-inf"), float("-inf")]), 0), -np.inf)
    close(ember.logsumexp(ember.tensor([1000.0, 1000.0]), 0), 1000 + np.log(2), rtol=1e-6)
    assert ember.logsumexp(ember.tensor([1, 2]), 0).dtype == ember.float32
    close(ember.nansum(t(NAN), 1), np.nansum(NAN, 1))
    close(ember.nanmean(t(NAN), (0, 2)), np.nanmean(NAN, (0, 2)))
    grad_ok(lambda a: ember.logsumexp(a, 1), dbl(3, 4))


def test_median_family():
    x = t(A).permute(2, 0, 1)
    xn = A.transpose(2, 0, 1)
    close(ember.median(x), np.sort(xn.reshape(-1))[(xn.size - 1) // 2])
    m = ember.median(x, 1)
    close(m.values, np.sort(xn, 1)[:, (xn.shape[1] - 1) // 2])
    close(np.take_along_axis(xn, m.indices.unsqueeze(1).cpu().numpy(), 1)[:, 0], m.values.cpu().numpy())
    assert ember.median(x, 1, keepdim=True).values.shape == (5, 1, 4)
    # recorded from PyTorch 2.13: ties pick the first occurrence
    r = ember.median(ember.tensor([[1.0, 5, 3, 3], [2, 2, 7, 1]]), 1)
    same(r.values, [3.0, 2.0])
    same(r.indices, [2, 0])
    assert np.isnan(ember.median(ember.tensor([1.0, float("nan"), 2.0])).item())
    close(ember.nanmedian(t(NAN), 2).values, _np_lower_nanmedian(NAN, 2))
    k = ember.kthvalue(t(A), 2, 1)
    close(k.values, np.sort(A, 1)[:, 1])
    with pytest.raises(RuntimeError):
        ember.kthvalue(t(A), 9, 1)
    with pytest.raises(IndexError):
        ember.kthvalue(ember.zeros(0, 3), 1, 0)
    grad_ok(lambda a: ember.median(a, 1).values, dbl(3, 4))


def _np_lower_nanmedian(x, axis):
    s = np.sort(x, axis)
    n = (~np.isnan(x)).sum(axis)
    k = np.maximum((n - 1) // 2, 0)
    return np.take_along_axis(s, np.expand_dims(k, axis), axis).squeeze(axis)


def test_mode():
    r = ember.mode(ember.tensor([3, 1, 3, 1, 2]))
    assert (r.values.item(), r.indices.item()) == (1, 3)  # recorded from PyTorch 2.13
    r = ember.tensor([[1, 2, 2], [3, 3, 4]]).mode(1)
    same(r.values, [2, 3])
    same(r.indices, [2, 1])
    x = ember.tensor([[1.0, 2.0, 2.0], [5.0, 4.0, 4.0]], requires_grad=True)
    ember.mode(x, 1).values.sum().backward()
    same(x.grad, [[0, 0, 1], [0, 0, 1]])  # the gradient goes to the returned index


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(interp):
    q = ember.tensor([0.0, 0.1, 0.5, 0.9, 1.0], dtype=ember.float64)
    close(
        ember.quantile(t(A), q, 1, interpolation=interp),
        np.quantile(A, q.cpu().numpy(), axis=1, method=interp),
    )
    close(ember.quantile(t(A), 0.3, interpolation=interp), np.quantile(A, 0.3, method=interp))
    got = ember.quantile(t(A), q, 2, keepdim=True, interpolation=interp)
    close(got, np.quantile(A, q.cpu().numpy(), axis=2, keepdims=True, method=interp))
    close(
        ember.nanquantile(t(NAN), q, 1, interpolation=interp),
        np.nanquantile(NAN, q.cpu().numpy(), axis=1, method=interp),
    )


def test_quantile_errors():
    with pytest.raises(RuntimeError):
        ember.quantile(ember.tensor([1.0]), 1.5)
    with pytest.raises(RuntimeError):
        ember.quantile(ember.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError):
        ember.quantile(ember.tensor([1.0]), 0.5, interpolation="cubic")


def test_scans(cpu_prims):
    for dev in ("cpu", cpu_prims):
        x = ember.tensor(A, device=dev)
        close(ember.cumprod(x, 1), np.cumprod(A, 1))
        close(ember.cummax(x, 2).values, np.maximum.accumulate(A, 2))
        close(ember.cummin(x, 0).values, np.minimum.accumulate(A, 0))
        close(ember.logcumsumexp(x, 1), np.log(np.cumsum(np.exp(A), 1)), rtol=1e-12)
    r = ember.cummax(ember.tensor([1.0, 3.0, 3.0, 2.0, float("nan"), 5.0]), 0)
    same(r.indices, [0, 1, 2, 2, 4, 4])  # ties take the later index; NaN sticks (PyTorch)
    assert ember.cumprod(ember.tensor([1, 2, 3], dtype=ember.int32), 0).dtype == ember.int64
    grad_ok(lambda a: ember.cumprod(a, 1), dbl(2, 4))
    grad_ok(
        lambda a: ember.cumprod(a * ember.tensor([1.0, 0.0, 1.0, 1.0], dtype=ember.float64), 1), dbl(2, 4)
    )
    grad_ok(lambda a: ember.cummax(a, 1).values, dbl(2, 4))
    grad_ok(lambda a: ember.logcumsumexp(a, 0), dbl(3, 2))


def test_counting():
    x = ember.tensor([[0, 1, 2], [3, 0, 0]])
    same(ember.count_nonzero(x), 3)
    same(ember.count_nonzero(x, 0), [1, 1, 1])
    mn, mx = ember.aminmax(t(A), dim=1)
    close(mn, A.min(1))
    close(mx, A.max(1))
    same(ember.bincount(ember.tensor([0, 2, 2, 5])), np.bincount([0, 2, 2, 5]))
    same(ember.bincount(ember.tensor([1]), minlength=3), [0, 1, 0])
    w = ember.bincount(ember.tensor([0, 2, 2]), ember.tensor([1.0, 2.0, 3.0]))
    assert w.dtype == ember.float32  # float32 weights keep their dtype (PyTorch 2.13)
    assert ember.bincount(ember.tensor([0]), ember.tensor([1])).dtype == ember.float64
    with pytest.raises(RuntimeError):
        ember.bincount(ember.tensor([-1]))
    data = RNG.normal(size=50)
    close(ember.histc(ember.tensor(data), 7, -1, 1), np.histogram(data, 7, (-1, 1))[0])
    close(ember.histc(ember.tensor([1.0, 2.0, 1.0]), 4), [2, 0, 0, 1])


def test_unique():
    x = ember.tensor([3, 1, 3, 2, 1, 1])
    u, inv, cnt = ember.unique(x, return_inverse=True, return_counts=True)
    nu, ninv, ncnt = np.unique(x.cpu().numpy(), return_inverse=True, return_counts=True)
    same(u, nu)
    same(inv, ninv)
    same(cnt, ncnt)
    u, cnt = ember.unique_consecutive(x, return_counts=True)
    same(u, [3, 1, 3, 2, 1])
    same(cnt, [1, 1, 1, 1, 2])
    m = ember.tensor([[1, 2], [0, 5], [1, 2]])
    same(ember.unique(m, dim=0), [[0, 5], [1, 2]])
    assert ember.unique(ember.zeros(0)).shape == (0,)
    same(ember.tensor([2.0, 2.0]).unique(), [2.0])


def test_searchsorted_bucketize():
    seq = np.array([1, 3, 5, 7, 9])
    v = np.array([[0, 3, 6], [9, 10, 5]])
    for right in (False, True):
        side = "right" if right else "left"
        same(
            ember.searchsorted(ember.tensor(seq), ember.tensor(v), right=right), np.searchsorted(seq, v, side)
        )
        same(ember.bucketize(ember.tensor(v), ember.tensor(seq), right=right), np.searchsorted(seq, v, side))
    rows = ember.tensor([[1, 3, 5], [2, 4, 6]])
    same(ember.searchsorted(rows, ember.tensor([[3], [3]]), side="right"), [[2], [1]])
    assert ember.searchsorted(ember.tensor(seq), 4).item() == 2
    assert ember.searchsorted(ember.tensor(seq), ember.tensor([4]), out_int32=True).dtype == ember.int32
    with pytest.raises(RuntimeError):
        ember.searchsorted(ember.tensor(seq), ember.tensor([1]), side="middle")


def test_norm_dist_cdist_diff_trace():
    close(ember.norm(t(A)), np.linalg.norm(A.reshape(-1)))
    close(ember.norm(t(A), 1, dim=2), np.abs(A).sum(2))
    close(ember.norm(t(A[0]), "nuc"), np.linalg.norm(A[0], "nuc"))
    close(ember.dist(t(A[0]), t(A[1]), 3), np.sum(np.abs(A[0] - A[1]) ** 3) ** (1 / 3))
    from scipy.spatial.distance import cdist as sc

    for p in (1.0, 2.0, 3.0):
        close(ember.cdist(t(A[0]), t(A[1]), p), sc(A[0], A[1], "minkowski", p=p))
    close(ember.diff(t(A), 2, 1), np.diff(A, 2, 1))
    close(ember.diff(ember.tensor([1, 3]), prepend=ember.tensor([0]), append=ember.tensor([10])), [1, 2, 7])
    same(ember.diff(ember.tensor([True, False, False])), [True, False])
    close(ember.trace(t(A[0])), np.trace(A[0]))
    grad_ok(lambda a, b: ember.cdist(a, b), dbl(3, 2), dbl(4, 2, seed=1))
    grad_ok(lambda a: ember.norm(a), dbl(3, 2))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint8", "bool"])
def test_scan_decompositions_match_kernels(dtype, cpu_prims):
    """cummax/cummin/cumprod by doubling (backends without the kernel) equal the CPU kernels."""
    a = (RNG.normal(size=(3, 37)) * 5).astype(dtype) if dtype != "bool" else RNG.random((3, 37)) > 0.5
    if dtype == "float64":
        a[0, 5] = np.nan
        a[1, 3] = a[1, 4] = a[1, 10]
    for name in ("cummax", "cummin"):
        fast, scan = getattr(ember, name)(t(a), 1), getattr(ember, name)(ember.tensor(a, device=cpu_prims), 1)
        same(scan.values.cpu(), fast.values.cpu().numpy())
        same(scan.indices.cpu(), fast.indices.cpu().numpy())
    if dtype.startswith("float"):
        x = ember.tensor(a * 0.1 + 1)
        close(ember.cumprod(x.to(cpu_prims), 1).cpu(), ember.cumprod(x, 1).cpu().numpy(), rtol=1e-5)


def test_cdist_matmul_path():
    a, b = RNG.normal(size=(30, 5)), RNG.normal(size=(40, 5))
    from scipy.spatial.distance import cdist as sc

    for mode in (
        "use_mm_for_euclid_dist_if_necessary",
        "use_mm_for_euclid_dist",
        "donot_use_mm_for_euclid_dist",
    ):
        close(ember.cdist(t(a), t(b), compute_mode=mode), sc(a, b), rtol=1e-10)
    x = ember.tensor(a, requires_grad=True)
    ember.cdist(x, ember.cat([x[:3].detach(), t(b)])).sum().backward()
    assert np.isfinite(x.grad.cpu().numpy()).all()  # zero distances give a zero gradient, as PyTorch
    with pytest.raises(ValueError):
        ember.cdist(t(a), t(b), compute_mode="fast")
