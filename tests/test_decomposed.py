"""The frontend's decompositions of composite ops, run on a primitives-only backend.

``cpu_prims`` (conftest.py) has the CPU backend's primitive kernels and none of its
composite overrides, so each op below runs through the frontend's default decomposition;
the result must equal the CPU backend's direct NumPy kernel exactly (or to float rounding).
"""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.backends import COMPOSITES


def test_cpu_prims_really_lacks_the_composites(cpu_prims):
    lb = ember.backends.get(cpu_prims)
    assert all(lb.k[op] is None for op in COMPOSITES)
    assert ember.backends.get("cpu").k["index"] is not None


FLOATS = np.array([[-2.5, -1.5, -0.5, 0.0, 0.5, 1.5], [2.5, 3.49, -3.51, 7.25, -0.0, 1e-8]])
INTS = np.array([[-7, -3, 0, 3, 7, 9], [5, -5, 2, -2, 1, 100]])

UNARY = ["ceil", "trunc", "round", "sign", "sigmoid", "log1p", "expm1", "clone"]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_composites_match_cpu(op, dtype, cpu_prims):
    x = np.abs(FLOATS) if op == "log1p" else FLOATS
    a = ember.tensor(x, dtype=getattr(ember, dtype))
    b = ember.tensor(x, dtype=getattr(ember, dtype), device=cpu_prims)
    got, exp = getattr(b, op)(), getattr(a, op)()
    assert got.dtype is exp.dtype and got.device.type == cpu_prims
    np.testing.assert_allclose(
        got.to("cpu").cpu().numpy(), exp.cpu().numpy(), rtol=2e-7 if dtype == "float32" else 1e-15
    )


def test_round_half_to_even_decomposed(cpu_prims):
    t = ember.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6], device=cpu_prims)
    assert t.round().tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0, 3.0]
    assert ember.tensor([1.2345, 2.5551], device=cpu_prims).round(decimals=2).tolist() == pytest.approx(
        [1.23, 2.56]
    )


@pytest.mark.parametrize(
    "a, b", [(INTS, 3), (INTS, -4), (INTS, INTS[::-1] + 200), (FLOATS, 1.25), (FLOATS, -0.75)]
)
def test_remainder_decomposed(a, b, cpu_prims):
    tb = ember.tensor(b) if isinstance(b, np.ndarray) else b
    pb = ember.tensor(b, device=cpu_prims) if isinstance(b, np.ndarray) else b
    got = ember.tensor(a, device=cpu_prims) % pb
    exp = ember.tensor(a) % tb
    np.testing.assert_allclose(got.to("cpu").cpu().numpy(), exp.cpu().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        exp.cpu().numpy(), np.remainder(a, b).astype(exp.cpu().numpy().dtype), rtol=1e-6, atol=1e-6
    )


def test_integer_remainder_by_zero_raises_decomposed(cpu_prims):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ember.tensor([1, 2], device=cpu_prims) % 0
    empty = ember.zeros(0, dtype=ember.int64, device=cpu_prims)
    assert (empty % 0).shape == (0,) and (empty // 0).shape == (0,)  # as in PyTorch


def test_log1p_expm1_keep_precision_for_tiny_inputs(cpu_prims):
    x = np.array([1e-8, -1e-8, 1e-20, 1e-3, -0.5, 3.0, 50.0, -50.0])
    t = ember.tensor(x, device=cpu_prims)
    np.testing.assert_allclose(t.log1p().to("cpu").cpu().numpy(), np.log1p(x), rtol=4e-16)
    np.testing.assert_allclose(t.expm1().to("cpu").cpu().numpy(), np.expm1(x), rtol=4e-16)
    assert t.float().log1p().tolist()[0] == pytest.approx(1e-8, rel=1e-7)


@pytest.mark.parametrize("x", [FLOATS, INTS, INTS.astype(np.int8), INTS > 0])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_amin_argmin_decomposed(x, dim, cpu_prims):
    a, b = ember.tensor(x), ember.tensor(x, device=cpu_prims)
    arg = x.dtype != bool  # argmin refuses bool, as PyTorch's; min(dim) takes it
    if dim is None:
        assert b.amin().item() == a.amin().item() and b.min().item() == a.min().item()
        assert not arg or b.argmin().item() == a.argmin().item()
    else:
        assert b.amin(dim).tolist() == a.amin(dim).tolist()
        assert not arg or b.argmin(dim).tolist() == a.argmin(dim).tolist()
        r, e = b.min(dim, keepdim=True), a.min(dim, keepdim=True)
        assert r.values.tolist() == e.values.tolist() and r.indices.tolist() == e.indices.tolist()


def test_argmin_picks_the_first_minimum_decomposed(cpu_prims):
    assert ember.tensor([3, 1, 2, 1], device=cpu_prims).argmin().item() == 1
    assert ember.tensor([[2.0, 0.0, 0.0]], device=cpu_prims).argmin(1).tolist() == [1]


@pytest.mark.parametrize("shape", [(0,), (7,), (3, 4), (2, 3, 4), ()])
def test_nonzero_decomposed(shape, cpu_prims):
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 3 == 1) if shape else np.array(1)
    got = ember.tensor(x, device=cpu_prims).nonzero()
    assert got.dtype is ember.int64
    assert got.tolist() == ember.tensor(x).nonzero().tolist() == np.argwhere(x).tolist()


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax_decomposed(dim, cpu_prims):
    x = np.random.default_rng(0).standard_normal((3, 5)) * 10
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    ref = e / e.sum(axis=dim, keepdims=True)
    t = ember.tensor(x, device=cpu_prims)
    f = ember.nn.functional
    np.testing.assert_allclose(f.softmax(t, dim).to("cpu").cpu().numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(f.log_softmax(t, dim).to("cpu").cpu().numpy(), np.log(ref), rtol=1e-10)


def test_clone_is_contiguous_copy_decomposed(cpu_prims):
    t = ember.arange(6.0, device=cpu_prims).reshape(2, 3).t()
    c = t.clone()
    assert c.is_contiguous() and c.tolist() == t.tolist()
    c[0, 0] = 9.0
    assert t[0, 0].item() == 0.0
