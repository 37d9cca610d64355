"""The eager hot paths (same-shape binary ops, a tensor with a Python scalar, ``add_``/``sub_``
with ``alpha`` written straight into ``self``, broadcast views of a contiguous operand, the
transpose views) against PyTorch: values, dtypes, version counters, graph node names,
gradients and the errors of the cases they must hand back to the general path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 6))
B = RNG.standard_normal((4, 6))
X3 = RNG.standard_normal((2, 3, 4))


def _both(fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    return fn(ember), fn(torch)


def _err(fn: Callable[[], Any]) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


def _same_error(fn: Callable[[Any], Any]) -> None:
    (et, em), (tt, tm) = _err(lambda: fn(ember)), _err(lambda: fn(torch))
    assert (et, em) == (tt, tm)


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("alpha", [-20.0, 3, 0.5, -0.0])
def test_inplace_alpha_values_version_and_identity(op: str, dtype: str, alpha: Any) -> None:
    def run(lib: Any) -> tuple:
        d = getattr(lib, dtype)
        x = lib.tensor(A, dtype=d)
        v = x._version
        r = getattr(x, op + "_")(lib.tensor(B, dtype=d), alpha=alpha)
        return r is x, x._version - v, x.numpy()

    (eid, ev, ex), (tid, tv, tx) = _both(run)
    assert (eid, ev) == (tid, tv) == (True, 1)
    np.testing.assert_array_equal(ex, tx)  # one rounding (a fused multiply-add), as PyTorch


def test_sgd_update_on_data_reaches_the_parameter() -> None:
    def run(lib: Any) -> Any:
        p = lib.nn.Parameter(lib.tensor(A))
        p.grad = lib.tensor(B)
        p.data.add_(p.grad, alpha=-20.0)
        return p.detach().numpy()

    ep, tp = _both(run)
    np.testing.assert_array_equal(ep, tp)


def test_inplace_alpha_self_alias_and_general_cases() -> None:
    def run(lib: Any) -> list:
        out = []
        x = lib.tensor([1.0, 2.0, 3.0])
        x.add_(x, alpha=2)
        out.append(x.tolist())
        y = lib.tensor([1.0, 2.0, 3.0])
        y.add_(lib.ones(1), alpha=2)  # broadcast other
        out.append(y.tolist())
        z = lib.tensor([1.0, 2.0, 3.0])
        z.add_(lib.ones(3, dtype=lib.float64), alpha=2)  # other of a wider dtype
        out += [z.tolist(), str(z.dtype).split(".")[1]]
        w = lib.tensor([1.0, 2.0, 3.0])
        w.add_(2.0, alpha=3)
        out.append(w.tolist())
        i = lib.tensor([1, 2, 3])
        i.sub_(lib.tensor([1, 1, 1]), alpha=2)
        out.append(i.tolist())
        with lib.no_grad():
            leaf = lib.ones(3, requires_grad=True)
            leaf.add_(lib.ones(3), alpha=-1.5)
        out += [leaf.tolist(), leaf.grad_fn is None]
        return out

    e, t = _both(run)
    assert e == t


def _partial_overlap(b: Any) -> Any:
    return b[1:].add_(b[:-1], alpha=1.0)


@pytest.mark.parametrize(
    "case",
    [
        lambda lib: lib.zeros(1).expand(3).add_(lib.ones(3), alpha=2.0),
        lambda lib: _partial_overlap(lib.arange(5.0)),
        lambda lib: lib.arange(3).add_(lib.arange(3), alpha=2.0),
        lambda lib: lib.arange(3.0).add_(lib.arange(3.0), alpha=True),
        lambda lib: lib.ones(3, requires_grad=True).add_(lib.ones(3), alpha=2.0),
        lambda lib: lib.ones(3).add_(lib.ones(3, dtype=lib.complex64), alpha=2),
        lambda lib: lib.ones(3).add_(lib.ones(4), alpha=2.0),
    ],
)
def test_inplace_alpha_errors_match(case: Callable[[Any], Any]) -> None:
    _same_error(case)


def test_inplace_alpha_on_inference_tensor_refuses() -> None:
    def run(lib: Any) -> Any:
        with lib.inference_mode():
            t = lib.ones(3)
        return t.add_(lib.ones(3), alpha=2.0)

    _same_error(run)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "complex64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_same_shape_and_scalar_operands(dtype: str, op: str) -> None:
    def run(lib: Any) -> list:
        d = getattr(lib, dtype)
        a, b = lib.tensor(A * 3).to(d), lib.tensor(B * 3 + 5).to(d)
        f = getattr(lib, op)
        outs = [f(a, b), f(a, 2.5), f(a, 3), f(2.5, a)] + ([] if op == "sub" else [f(a, True)])
        return [(str(o.dtype).split(".")[1], o.shape == a.shape, o.to(lib.complex128).numpy()) for o in outs]

    for (edt, es, ev), (tdt, ts, tv) in zip(*_both(run)):
        assert (edt, es) == (tdt, ts)
        np.testing.assert_allclose(ev, tv, rtol=2e-3 if dtype in ("float16", "bfloat16") else 1e-6)


def test_binary_grad_nodes_and_gradients() -> None:
    def run(lib: Any) -> list:
        w = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        y = w * 2.0 + b
        z = y * b - 3
        names = [type(y.grad_fn).__name__, type(z.grad_fn).__name__]
        z.sum().backward()
        return [names, w.grad.numpy(), b.grad.numpy()]

    (en, ew, eb), (tn, tw, tb) = _both(run)
    assert en == tn
    np.testing.assert_allclose(ew, tw)
    np.testing.assert_allclose(eb, tb)


@pytest.mark.parametrize("shape", [(6,), (1, 6), (4, 1), (), (3, 1, 6)])
def test_broadcast_operand_values_and_gradient(shape: tuple) -> None:
    bias = RNG.standard_normal(shape)

    def run(lib: Any) -> tuple:
        x = lib.tensor(A, requires_grad=True)
        c = lib.tensor(bias, requires_grad=True)
        y = x + c
        y.backward(lib.ones_like(y))
        return y.detach().numpy(), c.grad.numpy()

    (ey, ec), (ty, tc) = _both(run)
    np.testing.assert_array_equal(ey, ty)
    np.testing.assert_array_equal(ec, tc)


def test_expanded_view_aliases_and_refuses_writes() -> None:
    def run(lib: Any) -> tuple:
        base = lib.tensor([1.0, 2.0, 3.0])
        e = base.expand(2, 3)
        base.add_(1)
        return e.tolist(), e.stride(), _err(lambda: e.add_(1))

    assert run(ember) == run(torch)


def test_transpose_views_name_their_nodes_and_differentiate() -> None:
    def run(lib: Any) -> tuple:
        w = lib.tensor(A, requires_grad=True)
        x3 = lib.tensor(X3, requires_grad=True)
        ys = [w.t(), w.transpose(0, 1), x3.transpose(0, 2), x3.permute(2, 0, 1), w.T]
        names = [type(y.grad_fn).__name__ for y in ys]
        shapes = [tuple(y.shape) for y in ys]
        sum(y.sum() * (i + 1) for i, y in enumerate(ys)).backward()
        return names, shapes, w.grad.numpy(), x3.grad.numpy(), ys[0]._base is w

    e, t = _both(run)
    assert e[0] == t[0] and e[1] == t[1] and e[4] == t[4]
    np.testing.assert_allclose(e[2], t[2])
    np.testing.assert_allclose(e[3], t[3])


def test_data_is_pytorchs_data() -> None:
    # ``Tensor.data`` (``views.data_alias``): the same memory, no base, a version counter of its
    # own, so an update through it leaves the graph's saved tensors valid.
    def run(lib: Any, data: Callable[[Any], Any]) -> list:
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (w * w).sum()
        d = data(w)
        d.mul_(2)
        y.backward()
        v = data(w[0:2])
        with lib.inference_mode():
            t = lib.ones(2)
        return [
            w.grad.tolist(),
            w.detach().tolist(),
            w._version,
            d._version,
            d._base is None,
            d.is_leaf,
            d.requires_grad,
            v._base is None,
            data(t).is_inference(),
        ]

    assert run(ember, lambda t: t.data) == run(torch, lambda t: t.data)
