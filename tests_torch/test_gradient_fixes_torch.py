"""Gradients the OpInfo table found wrong, against PyTorch's: each case runs the same code with
``lib = torch`` and ``lib = ember`` and must give the same gradients (first and second order)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(13)


def _leaf(lib: Any, a: np.ndarray) -> Any:
    return lib.tensor(a, requires_grad=True)


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t)


def _same(run: Callable[[Any], Any], rtol: float = 1e-10, atol: float = 1e-12) -> None:
    """``run(lib)`` returns tensors (or None); ember's must equal torch's."""
    want, got = run(torch), run(ember)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        if w is None:
            assert g is None
            continue
        np.testing.assert_allclose(_np(g), _np(w), rtol=rtol, atol=atol)


def _grads(lib: Any, f: Callable, *xs: Any, second: bool = True) -> tuple:
    """First gradients of ``sum(f(*xs) * w)`` and, with ``second``, the gradients of their
    weighted sum (double backward through the first rule)."""
    out = f(*xs)
    w = lib.tensor(np.linspace(0.5, 2.0, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)
    gs = lib.autograd.grad(
        (out * w).sum().real if out.is_complex() else (out * w).sum(), xs, create_graph=second
    )
    if not second:
        return gs
    total = sum(((g * g.conj()).real if g.is_complex() else g * g).sum() for g in gs)
    return (*gs, *lib.autograd.grad(total, xs, allow_unused=True))


# -- as_strided: scatter-add into the input's storage, read its geometry back ------------------
AS_STRIDED = [
    ((4, 5), lambda t: t, ((3, 3), (2, 1), 1)),  # overlapping windows
    ((4, 5), lambda t: t, ((2, 2, 3), (5, 1, 1), 0)),  # sliding windows
    ((4, 5), lambda t: t[1:], ((2, 4), (1, 2), None)),  # a view with an offset
    ((4, 5), lambda t: t.t(), ((3, 2), (1, 4), 2)),  # a transposed view
    ((3,), lambda t: t.expand(4, 3), ((2, 2), (1, 1), 0)),  # an input that overlaps itself
]


@pytest.mark.parametrize("case", AS_STRIDED, ids=range(len(AS_STRIDED)))
@pytest.mark.parametrize("name", ["as_strided", "as_strided_copy"])
def test_as_strided_gradients_match(case: tuple, name: str) -> None:
    shape, prep, (size, stride, off) = case
    a = _RNG.standard_normal(shape)

    def run(lib: Any) -> Any:
        x = _leaf(lib, a)
        return _grads(lib, lambda t: getattr(lib, name)(prep(t), size, stride, off) ** 2, x)

    _same(run)


def test_as_strided_empty_result_gives_zeros() -> None:
    def run(lib: Any) -> Any:
        x = _leaf(lib, np.ones((4, 5)))
        return lib.autograd.grad(x.as_strided((0, 3), (1, 1)).sum(), (x,))

    _same(run)


def test_as_strided_node_name() -> None:
    x = ember.ones(4, requires_grad=True)
    assert type(x.as_strided((2,), (2,)).grad_fn).__name__ == "AsStridedBackward0"


# -- householder_product / orgqr -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("shapes", [((4, 3), (3,)), ((2, 5, 3), (2, 2)), ((3, 3), (1,))])
def test_householder_product_gradients_match(dtype: str, shapes: tuple) -> None:
    (sa, st), cx = shapes, dtype == "complex128"
    a = _RNG.standard_normal(sa) + (1j * _RNG.standard_normal(sa) if cx else 0)
    tau = _RNG.standard_normal(st) + (1j * _RNG.standard_normal(st) if cx else 0)

    def run(lib: Any) -> Any:
        A, t = _leaf(lib, a), _leaf(lib, tau)
        return _grads(lib, lib.linalg.householder_product, A, t)

    _same(run, rtol=1e-9, atol=1e-11)


def test_orgqr_gradient_matches_and_value_is_the_kernels() -> None:
    a, tau = _RNG.standard_normal((4, 3)), _RNG.standard_normal(3)

    def run(lib: Any) -> Any:
        A, t = _leaf(lib, a), _leaf(lib, tau)
        return (lib.orgqr(A, t), *_grads(lib, lib.orgqr, A, t, second=False))

    _same(run)
    A = ember.tensor(a, requires_grad=True)
    out = A.orgqr(ember.tensor(tau))
    assert type(out.grad_fn).__name__ == "LinalgHouseholderProductBackward0"


# -- index_put_ --------------------------------------------------------------------------------
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("vshape", [(3, 4), (4,), ()])
def test_index_put__gradients_match(accumulate: bool, vshape: tuple) -> None:
    a, v = _RNG.standard_normal((5, 4)), _RNG.standard_normal(vshape)
    rows = np.array([0, 3, 3] if accumulate else [0, 3, 1])

    def run(lib: Any) -> Any:
        x, val = _leaf(lib, a), _leaf(lib, v)
        y = x * 1.0
        y.index_put_((lib.tensor(rows),), val, accumulate=accumulate)
        assert y.grad_fn.name() if lib is torch else type(y.grad_fn).__name__ == "IndexPutBackward0"
        w = lib.tensor(np.arange(20.0).reshape(5, 4))
        return (y, *lib.autograd.grad((y * y * w).sum(), (x, val)))

    _same(run)


def test_index_put__on_a_view_reaches_the_base() -> None:
    def run(lib: Any) -> Any:
        x, val = _leaf(lib, np.arange(1.0, 7.0)), _leaf(lib, np.array([10.0, 20.0]))
        y = x * 1.0
        y[2:].index_put_((lib.tensor([0, 3]),), val)
        return lib.autograd.grad((y * y).sum(), (x, val))

    _same(run)


# -- complex abs / sgn: second derivatives -----------------------------------------------------
@pytest.mark.parametrize("name", ["abs", "sgn"])
def test_complex_abs_sgn_double_backward_matches(name: str) -> None:
    re, im = _RNG.standard_normal(6), _RNG.standard_normal(6)

    def run(lib: Any) -> Any:
        a, b = _leaf(lib, re), _leaf(lib, im)
        return _grads(lib, lambda p, q: getattr(lib, name)(lib.complex(p, q)), a, b)

    _same(run)


# -- Bessel / Airy functions: no derivative, no grad_fn ----------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "airy_ai",
        "bessel_y0",
        "bessel_y1",
        "modified_bessel_k0",
        "modified_bessel_k1",
        "scaled_modified_bessel_k0",
        "scaled_modified_bessel_k1",
    ],
)
def test_bessel_outputs_do_not_require_grad(name: str) -> None:
    def run(lib: Any) -> Any:
        y = getattr(lib.special, name)(_leaf(lib, np.array([0.5, 1.5])))
        return y.requires_grad, y.grad_fn is None

    assert run(ember) == run(torch) == (False, True)


# -- copy_ into a view, in-place dropout -------------------------------------------------------
def test_copy_into_a_view_rebases_the_base() -> None:
    def run(lib: Any) -> Any:
        a, t = _leaf(lib, np.ones(3)), _leaf(lib, np.array([4.0, 5.0]))
        b = a * 1
        b[1:].copy_(t)
        return lib.autograd.grad((b * b).sum(), (a, t))

    _same(run)
    a = ember.ones(3, requires_grad=True)
    b = a * 1
    b[1:].copy_(ember.tensor([4.0, 5.0]))
    (b * b).sum().backward()
    assert a.grad.tolist() == [2.0, 0.0, 0.0]


def _name(lib: Any, t: Any) -> str:
    return t.grad_fn.name() if lib is torch else type(t.grad_fn).__name__


@pytest.mark.parametrize("p", [0.4, 1.0])
def test_inplace_dropout_is_a_mul(p: float) -> None:
    """On a view: the base's gradient goes through the mask (PyTorch names the view's node
    AsStridedBackward0, ember keeps MulBackward0); on a non-view the node is MulBackward0."""
    for lib in (torch, ember):
        y = _leaf(lib, np.ones(3)) * 1.0
        assert _name(lib, lib.nn.functional.dropout(y, p, training=True, inplace=True)) == "MulBackward0"

    def run(lib: Any) -> Any:
        lib.manual_seed(0)
        x = _leaf(lib, np.arange(1.0, 9.0))
        y = x * 1.0
        v = y[2:]
        out = lib.nn.functional.dropout(v, p, training=True, inplace=True)
        kept = _np(out) != 0
        (g,) = lib.autograd.grad((y * y).sum(), (x,))
        return out is v, kept, g

    for lib in (torch, ember):
        same, kept, g = run(lib)
        assert same
        scale = 0.0 if p == 1.0 else 1 / (1 - p)
        want = 2 * np.arange(1.0, 9.0)
        want[2:] = want[2:] * np.where(kept, scale * scale, 0.0)
        np.testing.assert_allclose(_np(g), want)


def test_a_real_non_leaf_receives_the_real_part_of_a_complex_gradient() -> None:
    """PyTorch's engine cuts a complex gradient to its real part at every real input, leaf or not."""

    def run(lib: Any) -> tuple:
        z = lib.tensor([3.0 + 4.0j, 1.0 - 2.0j], dtype=lib.complex128, requires_grad=True)
        r = lib.abs(z)
        (g,) = lib.autograd.grad((z / r).sum().real, r)
        a = _leaf(lib, np.array([0.5, -1.5]))
        b = _leaf(lib, np.array([2.0, 0.25]))
        w = lib.complex(a, b)
        lib.real(w / lib.abs(w)).sum().backward()
        return g, a.grad, b.grad

    _same(run)
