"""Indexing ops against NumPy: take, index_add/copy/fill, masked ops, scatter_reduce."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _opsref import close, dbl, grad_ok, same

# Composites without a kernel on the primitives-only test backend warn once (by design).
pytestmark = pytest.mark.filterwarnings("ignore:.*has no kernel.*:RuntimeWarning")

X = np.arange(24.0).reshape(2, 3, 4)


def test_take_and_take_along_dim():
    x = ember.tensor(X).permute(2, 0, 1)
    xn = X.transpose(2, 0, 1)
    same(ember.take(x, ember.tensor([[0, -1], [5, 7]])), np.take(xn, [[0, -1], [5, 7]]))
    idx = np.argsort(-xn, axis=1)[:, :2]
    same(ember.take_along_dim(x, ember.tensor(idx), 1), np.take_along_axis(xn, idx, 1))
    same(ember.take_along_dim(x, ember.tensor([3, 0])), xn.reshape(-1)[[3, 0]])
    same(
        ember.take_along_dim(x, ember.tensor([[[0]]]), 2), np.take_along_axis(xn, np.zeros((4, 2, 1), int), 2)
    )
    with pytest.raises(IndexError):
        ember.take(x, ember.tensor([24]))


def test_index_add_copy_fill():
    x = ember.zeros(3, 4)
    idx = ember.tensor([0, 2, 0])
    src = ember.arange(12.0).reshape(3, 4)
    exp = np.zeros((3, 4))
    np.add.at(exp, [0, 2, 0], 2 * np.arange(12.0).reshape(3, 4))
    same(ember.index_add(x, 0, idx, src, alpha=2), exp)
    same(x.index_add(1, ember.tensor([3, 3, 1]), src[:, :3]).sum(0), [0, 18, 0, 27])
    got = ember.index_copy(x, 1, ember.tensor([3, 0]), src[:, :2])
    same(got[:, 3], [0, 4, 8])
    same(got[:, 0], [1, 5, 9])
    same(x.index_fill(1, ember.tensor([1, 2]), -1.0)[0], [0, -1, -1, 0])
    y = ember.zeros(4, dtype=ember.int64)
    y.index_add_(0, ember.tensor([1, 1]), ember.tensor([5, 6]))
    same(y, [0, 11, 0, 0])
    with pytest.raises(RuntimeError):
        ember.index_copy(x, 0, idx, src.to(ember.float64))
    with pytest.raises(IndexError):
        ember.index_add(x, 0, ember.tensor([[0]]), src[:1])


def test_masked_select_scatter_argwhere():
    x = ember.tensor(X)
    same(ember.masked_select(x, x > 20), X[X > 20])
    same(
        ember.masked_select(x, ember.tensor([True, False, False, True])),
        X[..., [True, False, False, True]].reshape(-1),
    )
    m = ember.tensor([[True, False, True], [False, True, False]])
    same(ember.masked_scatter(ember.zeros(2, 3), m, ember.arange(6.0)), [[0, 0, 1], [0, 2, 0]])
    same(ember.argwhere(ember.tensor([[0, 1], [2, 0]])), [[0, 1], [1, 0]])
    with pytest.raises(RuntimeError):
        ember.masked_scatter(ember.zeros(3), ember.ones(3, dtype=ember.bool), ember.ones(2))


def _np_scatter_reduce(x, dim, index, src, reduce, include_self):
    out = x.copy()
    count = np.zeros(x.shape)
    seen = np.zeros(x.shape, bool)
    for pos in np.ndindex(index.shape):
        tgt = list(pos)
        tgt[dim] = index[pos]
        tgt = tuple(tgt)
        v = src[pos]
        if not include_self and not seen[tgt]:
            out[tgt] = v
        elif reduce in ("sum", "mean"):
            out[tgt] += v
        elif reduce == "prod":
            out[tgt] *= v
        elif reduce == "amax":
            out[tgt] = max(out[tgt], v)
        else:
            out[tgt] = min(out[tgt], v)
        seen[tgt] = True
        count[tgt] += 1
    if reduce == "mean":
        c = count + include_self
        out = np.where(c > 0, out / np.maximum(c, 1), out)
    return out


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self, cpu_prims):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 5))
    src = rng.normal(size=(3, 4))
    index = rng.integers(0, 5, size=(3, 4))
    exp = _np_scatter_reduce(x, 1, index, src, reduce, include_self)
    for dev in ("cpu", cpu_prims):
        got = ember.scatter_reduce(
            ember.tensor(x, device=dev),
            1,
            ember.tensor(index, device=dev),
            ember.tensor(src, device=dev),
            reduce,
            include_self=include_self,
        )
        close(got, exp)
    xs, ss = dbl(3, 5, seed=2), dbl(3, 4, seed=3)
    grad_ok(
        lambda a, b: ember.scatter_reduce(a, 1, ember.tensor(index), b, reduce, include_self=include_self),
        xs,
        ss,
    )


def test_scatter_reduce_int_and_multiply():
    x = ember.tensor([1, 2, 3])
    got = ember.scatter_reduce(x, 0, ember.tensor([0, 0, 2]), ember.tensor([4, 5, 6]), "mean")
    same(got, [3, 2, 4])
    same(
        ember.ones(2, 3).scatter(1, ember.tensor([[0, 0], [2, 1]]), 3.0, reduce="multiply"),
        [[9, 1, 1], [1, 3, 3]],
    )
    same(ember.scatter_reduce(x, 0, ember.tensor([0]), x, "max"), [1, 2, 3])  # PyTorch's older name for amax
    with pytest.raises(RuntimeError):
        ember.scatter_reduce(x, 0, ember.tensor([0]), x, "median")
    with pytest.raises(RuntimeError):  # PyTorch raises RuntimeError (not IndexError) here
        ember.scatter_reduce(x, 0, ember.tensor([5]), x, "amax")


def test_index_grads():
    x, s = dbl(4, 3), dbl(2, 3, seed=1)
    idx = ember.tensor([3, 1])
    grad_ok(lambda a, b: ember.index_add(a, 0, idx, b, alpha=2), x, s)
    grad_ok(lambda a, b: ember.index_copy(a, 0, idx, b), x, s)
    grad_ok(lambda a: ember.index_fill(a, 1, ember.tensor([0, 2]), 1.5), x)
    grad_ok(lambda a: ember.masked_select(a, a > 0), x)
    grad_ok(lambda a: ember.take(a, ember.tensor([0, 5, 5])), x)
