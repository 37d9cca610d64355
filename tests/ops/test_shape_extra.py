"""Shape ops against NumPy: flips, rolls, repeats, diagonals, splits, windows, grids."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _opsref import close, dbl, grad_ok, same

X = np.arange(24.0).reshape(2, 3, 4)


def t(a=X, dtype=None):
    return ember.tensor(a, dtype=dtype)


def nc():
    """A non-contiguous view of X's values (transpose of a transpose copy)."""
    return ember.tensor(np.ascontiguousarray(X.transpose(2, 1, 0))).permute(2, 1, 0)


@pytest.mark.parametrize("src", [t, nc])
def test_flip_roll_rot90(src):
    x = src()
    same(ember.flip(x, (0, 2)), np.flip(X, (0, 2)))
    same(x.flip(-1), np.flip(X, -1))
    same(ember.fliplr(x), np.fliplr(X))
    same(ember.flipud(x), np.flipud(X))
    same(ember.roll(x, 5), np.roll(X, 5))
    same(ember.roll(x, (1, -5), (0, 2)), np.roll(X, (1, -5), (0, 2)))
    for k in range(-1, 5):
        same(ember.rot90(x, k, (1, 2)), np.rot90(X, k, (1, 2)))


def test_flip_edge_cases():
    same(ember.flip(ember.tensor(3.0), ()), np.array(3.0))
    same(ember.flip(ember.zeros(0, 2), (0,)), np.zeros((0, 2)))
    with pytest.raises(RuntimeError):
        ember.fliplr(ember.zeros(3))
    with pytest.raises(IndexError):
        ember.flip(ember.zeros(3), 1)
    with pytest.raises(RuntimeError):
        ember.rot90(ember.zeros(2, 2), 1, (0, 0))


def test_repeat_tile_interleave():
    x = nc()
    same(x.repeat(2, 1, 1, 2), np.tile(X, (2, 1, 1, 2)))
    same(ember.tile(x, (2,)), np.tile(X, (2,)))
    same(ember.tile(ember.tensor(2), (3,)), np.tile(2, 3))
    same(x.repeat_interleave(2, 1), np.repeat(X, 2, 1))
    same(ember.repeat_interleave(x, 2), np.repeat(X, 2))
    same(x.repeat_interleave(ember.tensor([0, 2, 1]), dim=1), np.repeat(X, [0, 2, 1], 1))
    same(ember.repeat_interleave(ember.tensor([2, 0, 3])), np.repeat([0, 1, 2], [2, 0, 3]))
    same(ember.zeros(0, 2).repeat(2, 1), np.zeros((0, 2)))
    with pytest.raises(RuntimeError):
        x.repeat(2)


def test_broadcast_split_stack():
    a, b = ember.broadcast_tensors(ember.ones(3, 1), ember.zeros(4))
    assert a.shape == b.shape == (3, 4)
    same(ember.broadcast_to(ember.tensor([1, 2]), (2, 2)), [[1, 2], [1, 2]])
    got = [p.tolist() for p in ember.tensor_split(ember.arange(7), 3)]
    assert got == [[0, 1, 2], [3, 4], [5, 6]]
    got = [p.tolist() for p in ember.tensor_split(ember.arange(7), [1, 5, 9])]
    assert got == [[0], [1, 2, 3, 4], [5, 6], []]
    parts = ember.tensor_split(t(), 2, dim=2)
    same(parts[1], X[:, :, 2:])
    v = [np.arange(3.0), np.arange(3.0) + 3]
    same(ember.dstack([ember.tensor(a) for a in v]), np.dstack(v))
    same(ember.column_stack([ember.tensor(a) for a in v]), np.column_stack(v))
    with pytest.raises(RuntimeError):
        ember.broadcast_tensors(ember.ones(3), ember.ones(4))


@pytest.mark.parametrize("offset,d1,d2", [(0, 0, 1), (1, 1, 2), (-1, 2, 0), (5, 0, 1), (-2, -1, -2)])
def test_diagonal_is_a_view(offset, d1, d2):
    x = t()
    d = ember.diagonal(x, offset, d1, d2)
    same(d, np.diagonal(X, offset, d1, d2))
    if d.numel():
        d.fill_(-1)
        assert (x == -1).sum().item() == d.numel()


def test_diag_diag_embed():
    v = np.array([1.0, 2.0, 3.0])
    for k in (-1, 0, 2):
        same(ember.diag(ember.tensor(v), k), np.diag(v, k))
        same(ember.diag(t(X[0]), k), np.diag(X[0], k))
    got = ember.diag_embed(ember.tensor([[1.0, 2.0], [3.0, 4.0]]), 1)
    same(got, [[[0, 1, 0], [0, 0, 2], [0, 0, 0]], [[0, 3, 0], [0, 0, 4], [0, 0, 0]]])
    got = ember.diag_embed(ember.tensor([[1.0, 2.0]]), -1, 0, 2)
    assert got.shape == (3, 1, 3)
    same(got[:, 0, :], np.diag([1.0, 2.0], 1).T)


@pytest.mark.parametrize("k", [-2, 0, 1, 5])
def test_tril_triu(k):
    same(ember.tril(nc(), k), np.tril(X, k))
    same(ember.triu(nc(), k), np.triu(X, k))
    same(ember.tril(ember.ones(2, 3, dtype=ember.bool), k), np.tril(np.ones((2, 3), bool), k))
    with pytest.raises(RuntimeError):
        ember.tril(ember.ones(3))


def test_unfold_view_and_errors():
    x = ember.arange(7.0)
    u = x.unfold(0, 3, 2)
    same(u, np.lib.stride_tricks.sliding_window_view(np.arange(7.0), 3)[::2])
    u[0, 0] = 100.0
    assert x[0].item() == 100.0
    same(t().unfold(2, 2, 1), np.lib.stride_tricks.sliding_window_view(X, 2, axis=2))
    assert ember.tensor(1.0).unfold(0, 1, 1).shape == (1,)
    with pytest.raises(RuntimeError):
        x.unfold(0, 8, 1)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    a, b, c = np.arange(3), np.arange(2), np.arange(4)
    got = ember.meshgrid(ember.tensor(a), ember.tensor(b), ember.tensor(c), indexing=indexing)
    for g, e in zip(got, np.meshgrid(a, b, c, indexing=indexing)):
        same(g, e)


def test_shape_grads():
    x = dbl(3, 4)
    grad_ok(lambda a: ember.flip(a, (0, 1)), x)
    grad_ok(lambda a: ember.roll(a, 2, 1), x)
    grad_ok(lambda a: ember.rot90(a), x)
    grad_ok(lambda a: a.repeat(2, 1, 2), x)
    grad_ok(lambda a: a.repeat_interleave(ember.tensor([1, 0, 2, 1]), dim=1), x)
    grad_ok(lambda a: ember.diagonal(a, 1) * 2, x)
    grad_ok(lambda a: ember.diag_embed(a, -1), x)
    grad_ok(lambda a: ember.tril(a, 1), x)
    grad_ok(lambda a: a.unfold(1, 2, 1), x)
    grad_ok(lambda a: ember.tensor_split(a, 3, 1)[1], x)


def test_diagonal_double_backward():
    x = dbl(3, 3)
    (g,) = ember.autograd.grad((ember.diagonal(x) ** 3).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    close(gg, np.diag(6 * np.diagonal(x.detach().cpu().numpy())))
