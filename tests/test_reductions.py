"""Reductions: dims as int/tuple/None, keepdim, dtypes, return types, empty inputs.

Literal expectations were recorded with PyTorch 2.13; float values are checked against NumPy.
"""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import assert_close, assert_equal

X = np.array([[1.0, 5, 3], [4, 2, 6]], dtype=np.float32)
R = np.random.default_rng(0).standard_normal((3, 4, 5))


@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1, (0, 2), (2, 0), (0, 1, 2), ()])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin"])
def test_float_reductions_against_numpy(name, dim, keepdim):
    ref = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "amax": np.amax, "amin": np.amin}[name]
    axis = None if dim == () else dim
    exp = ref(R, axis=axis, keepdims=keepdim)
    t = ember.tensor(R)
    got = getattr(t, name)(dim, keepdim=keepdim) if dim is not None else getattr(t, name)()
    if dim is None and keepdim:
        got = getattr(ember, name)(t, dim=tuple(range(3)), keepdim=True)
    assert got.dtype is ember.float64
    assert_close(got, exp if (dim is not None or keepdim) else np.asarray(exp), rtol=1e-12, atol=1e-12)


def test_keepdim_defaults_to_false():
    t = ember.tensor(X)
    assert t.sum(1).shape == (2,) and t.sum(1, keepdim=True).shape == (2, 1)
    assert t.amax(0).shape == (3,) and t.mean((0, 1)).shape == ()
    assert t.max(1).values.shape == (2,) and t.argmax(1).shape == (2,)


def test_integer_and_bool_sums_accumulate_in_int64():
    i = ember.tensor([[1, 5, 3], [4, 2, 6]])
    b = ember.tensor([[True, False, True], [True, True, True]])
    assert_equal(i.sum(), 21, ember.int64)
    assert_equal(b.sum(), 5, ember.int64)
    assert_equal(ember.tensor([100, 100], dtype=ember.int8).sum(), 200, ember.int64)
    assert_equal(i.sum(dtype=ember.float64), 21.0, ember.float64)
    assert_equal(b.prod(), 0, ember.int64)
    assert_equal(ember.tensor([2, 3], dtype=ember.int32).prod(), 6, ember.int64)
    assert_equal(i.cumsum(1), [[1, 6, 9], [4, 6, 12]], ember.int64)
    assert_equal(b.cumsum(0), [[1, 0, 1], [2, 1, 2]], ember.int64)
    assert_equal(ember.tensor([1, 2], dtype=ember.int32).cumsum(0), [1, 3], ember.int64)
    assert_equal(ember.full((4096,), 1.0, dtype=ember.float16).sum(), np.float16(4096), ember.float16)
    assert_equal(ember.tensor([1.0, 2.0], dtype=ember.float16).mean(), np.float16(1.5), ember.float16)


def test_mean_needs_floating_dtype():
    i = ember.tensor([[1, 5, 3], [4, 2, 6]])
    msg = (
        r"^mean\(\): could not infer output dtype. Input dtype must be either a floating point or "
        r"complex dtype. Got: Long$"
    )
    with pytest.raises(RuntimeError, match=msg):
        i.mean()
    assert_equal(i.mean(dtype=ember.float64), 3.5, ember.float64)


def test_dim_errors():
    t = ember.tensor(X)
    with pytest.raises(RuntimeError, match="^dim 0 appears multiple times in the list of dims$"):
        t.sum((0, 0))
    with pytest.raises(
        IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"
    ):
        t.sum(2)


def test_max_min_with_dim_return_values_and_indices():
    t = ember.tensor(X)
    r = t.max(1)
    assert type(r).__name__ == "max" and isinstance(r, tuple)
    values, indices = r
    assert_equal(values, np.array([5.0, 6.0], np.float32), ember.float32)
    assert_equal(indices, [1, 2], ember.int64)
    assert r.values is values and r.indices is indices
    r0 = t.max(dim=0)
    assert r0.values.tolist() == [4.0, 5.0, 6.0] and r0.indices.tolist() == [1, 0, 1]
    m = t.min(1, keepdim=True)
    assert type(m).__name__ == "min"
    assert m.values.tolist() == [[1.0], [2.0]] and m.indices.tolist() == [[0], [1]]
    assert_equal(t.max(), np.float32(6.0), ember.float32)
    assert t.max(ember.tensor(3.0)).tolist() == [[3.0, 5.0, 3.0], [4.0, 3.0, 6.0]]
    assert ember.max(ember.tensor(3.0), 0).values.item() == 3.0


def test_arg_reductions_pick_the_first_extreme():
    t = ember.tensor(X)
    assert_equal(t.argmax(), 5, ember.int64)
    assert t.argmax(0).tolist() == [1, 0, 1]
    assert t.argmax(1, keepdim=True).tolist() == [[1], [2]]
    assert t.argmin(1).tolist() == [0, 1]
    assert ember.tensor([1, 3, 3, 0]).argmax().item() == 1
    assert ember.tensor([1, 0, 3, 0]).argmin().item() == 1
    assert ember.tensor([[1, 3, 3, 0]]).max(1).indices.tolist() == [1]
    assert ember.tensor(3.0).argmax(0).item() == 0


def test_nan_propagates_through_max():
    t = ember.tensor([1.0, float("nan"), 3.0])
    assert np.isnan(t.max().item()) and t.argmax().item() == 1
    r = ember.tensor([[1.0, float("nan"), 3.0]]).max(1)
    assert np.isnan(r.values.item()) and r.indices.tolist() == [1]


def test_all_any():
    i = ember.tensor([[1, 5, 3], [4, 2, 6]])
    b = ember.tensor([[True, False, True], [True, True, True]])
    assert_equal(i.all(), True, ember.bool)
    assert b.all(1).tolist() == [False, True]
    assert (i > 4).any(0).tolist() == [False, True, True]
    assert ember.tensor([1.0, 0.0]).all().item() is False
    assert_equal(ember.tensor([1, 2], dtype=ember.uint8).all(), np.uint8(1), ember.uint8)
    assert ember.zeros(0).all().item() is True and ember.zeros(0).any().item() is False


def test_var_std_correction_and_unbiased():
    t = ember.tensor(X)
    x64 = X.astype(np.float64)
    assert_close(t.var(), np.var(x64, ddof=1))
    assert_close(t.var(1), np.var(x64, axis=1, ddof=1))
    assert_close(t.var(1, unbiased=False), np.var(x64, axis=1))
    assert_close(t.var(1, correction=0), np.var(x64, axis=1))
    assert_close(t.var(correction=2), np.var(x64, ddof=2))
    assert_close(t.std(0), np.std(x64, axis=0, ddof=1))
    assert t.std(0, keepdim=True).shape == (1, 3)
    std, mean = ember.std_mean(t, 1)
    assert_close(std, [2.0, 2.0]) and assert_close(mean, [3.0, 4.0])
    var, mean = ember.var_mean(t, 1, correction=0)
    assert_close(var, np.var(x64, axis=1)) and assert_close(mean, [3.0, 4.0])
    assert np.isnan(ember.tensor([1.0]).var().item())
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        ember.tensor([1, 2]).var()


def test_empty_reductions():
    e = ember.zeros(0, 3)
    assert e.sum(0).tolist() == [0.0, 0.0, 0.0] and e.prod(0).tolist() == [1.0, 1.0, 1.0]
    assert np.isnan(ember.zeros(0).mean().item())
    r = e.max(1)
    assert r.values.shape == (0,) and r.indices.shape == (0,)
    whole = "Expected reduction dim to be specified for input.numel\\(\\) == 0. Specify the reduction dim"
    for name in ("max", "min", "amax", "amin"):
        with pytest.raises(RuntimeError, match=f"^{name}\\(\\): {whole}"):
            getattr(ember.zeros(0), name)()
    for name in ("argmax", "argmin"):
        with pytest.raises(
            IndexError,
            match=f"^{name}\\(\\): Expected reduction dim to be specified for input.numel\\(\\) == 0.$",
        ):
            getattr(ember.zeros(0), name)()
    for name in ("max", "amax", "argmax"):
        with pytest.raises(
            IndexError, match=f"^{name}\\(\\): Expected reduction dim 0 to have non-zero size.$"
        ):
            getattr(e, name)(0)


def test_cumsum_against_numpy():
    for dim in (0, 1, 2, -1):
        assert_close(ember.tensor(R).cumsum(dim), np.cumsum(R, axis=dim), rtol=1e-12, atol=1e-12)
