"""view(dtype), view_as_real/view_as_complex, real/imag and conj against PyTorch: values,
layout (shape, stride, storage offset), storage sharing both ways, errors and gradients."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest
from ember._ops import complex as CX

torch = pytest.importorskip("torch")

NAMES = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
NAMES_C = (*NAMES, "complex64", "complex128")


def _pair(name: str) -> tuple[Any, Any]:
    return getattr(ember, name), getattr(torch, name)


def _base(name: str) -> tuple[Any, Any]:
    """(6, 8) of small non-negative integers (no NaN bit patterns in any view), both sides."""
    v = np.arange(48, dtype=np.int64).reshape(6, 8) * 5 + 3
    t = torch.tensor(v).to(_pair(name)[1])
    return ember.tensor(v).to(_pair(name)[0]), t


def _layouts(e: Any, t: Any) -> list[tuple[str, Any, Any]]:
    return [
        ("contig", e, t),
        ("rows", e[1:6:2], t[1:6:2]),
        ("offset-cols", e[:, 2:6], t[:, 2:6]),
        ("odd-offset", e[:, 1:5], t[:, 1:5]),
        ("transposed", e.t(), t.t()),
        ("0-d", e[1, 1], t[1, 1]),
    ]


def _same_bits(e: Any, t: Any) -> None:
    """Equal shape, layout and bytes (values compared through a same-size integer view)."""
    assert tuple(e.shape) == tuple(t.shape)
    assert tuple(e.stride()) == tuple(t.stride()) and e.storage_offset() == t.storage_offset()
    ints = {1: (ember.uint8, torch.uint8), 2: (ember.int16, torch.int16), 4: (ember.int32, torch.int32)}
    ints[8], ints[16] = (ember.int64, torch.int64), (ember.int64, torch.int64)
    ei, ti = ints[e.element_size()]
    if e.element_size() == 16:  # complex128: as float64 pairs
        e, t = ember.view_as_real(e), torch.view_as_real(t)
    assert e.view(ei).tolist() == t.view(ti).tolist()


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except Exception as ex:  # noqa: BLE001 - the exception is what is compared
        return ex


@pytest.mark.parametrize("src", NAMES_C)
@pytest.mark.parametrize("dst", ("uint8", "bfloat16", "int16", "float32", "int64", "complex128"))
def test_view_dtype_matches_torch(src: str, dst: str) -> None:
    e, t = _base(src)
    for label, ev, tv in _layouts(e, t):
        want = _outcome(lambda tv=tv: tv.view(_pair(dst)[1]))
        got = _outcome(lambda ev=ev: ev.view(_pair(dst)[0]))
        if isinstance(want, Exception):
            assert type(got) is type(want) and str(got) == str(want).replace("torch.", "ember."), label
            continue
        assert not isinstance(got, Exception), (label, got)
        assert got.dtype is _pair(dst)[0], label
        _same_bits(got, want)


def test_view_dtype_writes_reach_the_base_and_back() -> None:
    e, t = _base("float32")
    ev, tv = e.view(ember.int16), t.view(torch.int16)
    ev[2, 3] = 0x4000
    tv[2, 3] = 0x4000
    assert e.tolist() == t.tolist()
    e[0, 0], t[0, 0] = -2.5, -2.5
    assert ev.tolist() == tv.tolist()
    assert ev._version == e._version == 2


def test_view_dtype_is_not_differentiable() -> None:
    for dst in ("float32", "int32", "float64"):
        e = ember.ones(2, 4, requires_grad=True)
        t = torch.ones(2, 4, requires_grad=True)
        got, want = e.view(_pair(dst)[0]), t.view(_pair(dst)[1])
        assert got.requires_grad == want.requires_grad and got.grad_fn is None and want.grad_fn is None


def _cplx(e_dtype: Any = None) -> tuple[Any, Any]:
    v = np.array([[1 + 2j, 3 - 4j, -5 + 0.5j], [0.25 - 1j, 2 + 2j, -3 - 3j]])
    e, t = ember.tensor(v), torch.tensor(v)
    if e_dtype == "complex64":
        e, t = e.to(ember.complex64), t.to(torch.complex64)
    return e, t


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_view_as_real_layouts_and_sharing(dtype: str) -> None:
    e, t = _cplx(dtype)
    for ev, tv in ((e, t), (e.t(), t.t()), (e[:, 1:], t[:, 1:]), (e[1, 2], t[1, 2])):
        got, want = ember.view_as_real(ev), torch.view_as_real(tv)
        assert got.dtype is _pair(str(want.dtype).split(".")[1])[0]
        _same_bits(got, want)
        assert got.tolist() == want.tolist()
    r, tr = ember.view_as_real(e.t()), torch.view_as_real(t.t())
    r[1, 0, 1], tr[1, 0, 1] = 9.0, 9.0
    r[2, 1, 0], tr[2, 1, 0] = -7.0, -7.0
    assert e.tolist() == t.tolist()


def test_view_as_complex_layouts_and_sharing() -> None:
    v = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
    e, t = ember.tensor(v), torch.tensor(v)
    for ev, tv in ((e, t), (e[::2], t[::2]), (e[:, 1:3], t[:, 1:3]), (e.transpose(0, 1), t.transpose(0, 1))):
        got, want = ember.view_as_complex(ev), torch.view_as_complex(tv)
        assert got.dtype is ember.complex64
        _same_bits(got, want)
    c, tc = ember.view_as_complex(e), torch.view_as_complex(t)
    c[1, 2], tc[1, 2] = 5 - 6j, 5 - 6j
    assert e.tolist() == t.tolist()
    assert ember.view_as_complex(e.double()).dtype is ember.complex128


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.view_as_complex(m.zeros(3)),
        lambda m: m.view_as_complex(m.zeros(3, 2, dtype=m.int32)),
        lambda m: m.view_as_complex(m.zeros(3, 4)[:, ::2]),
        lambda m: m.view_as_complex(m.zeros(3, 3)[:, :2]),
        lambda m: m.view_as_complex(m.zeros(7)[1:].view(3, 2)),
        lambda m: m.view_as_complex(m.tensor(1.0)),
        lambda m: m.view_as_real(m.zeros(3)),
        lambda m: m.zeros(3).imag,
        lambda m: m.zeros(2, 3).view(m.float64),
        lambda m: m.tensor(1.0).view(m.int16),
    ],
)
def test_errors_match_torch(make: Any) -> None:
    want, got = _outcome(lambda: make(torch)), _outcome(lambda: make(ember))
    assert isinstance(want, Exception)
    assert type(got) is type(want) and str(got) == str(want)


def test_real_imag_are_views() -> None:
    e, t = _cplx("complex64")
    for part in ("real", "imag"):
        got, want = getattr(e.t(), part), getattr(t.t(), part)
        _same_bits(got, want)
    e.real.mul_(2)
    t.real.mul_(2)
    e.imag[0] = 7.0
    t.imag[0] = 7.0
    assert e.tolist() == t.tolist()
    e[1, 1] = 1 + 1j
    t[1, 1] = 1 + 1j
    r, tr = e.imag, t.imag
    assert r.tolist() == tr.tolist() and e.real._base is e
    x = ember.ones(3)
    assert x.real is x


def test_view_grads_match_torch() -> None:
    w = np.array([1 + 1j, 2 - 3j, -0.5 + 2j])
    k = np.array([[1.0, 2.0], [3.0, 4.0], [-1.0, 0.5]])
    e, t = ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    got, want = ember.view_as_real(e), torch.view_as_real(t)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__ == "ViewAsRealBackward0"
    (got * ember.tensor(k)).sum().backward()
    (want * torch.tensor(k)).sum().backward()
    assert e.grad.tolist() == t.grad.tolist()
    e.grad, t.grad = None, None
    for ex in (e.real, e.imag):
        assert type(ex.grad_fn).__name__ == "SelectBackward0"
    (e.real * 3 + e.imag**2).sum().backward()
    (t.real * 3 + t.imag**2).sum().backward()
    assert e.grad.tolist() == t.grad.tolist()
    f, tf = ember.tensor(k, requires_grad=True), torch.tensor(k, requires_grad=True)
    c, tc = ember.view_as_complex(f), torch.view_as_complex(tf)
    assert type(c.grad_fn).__name__ == type(tc.grad_fn).__name__ == "ViewAsComplexBackward0"
    (c * ember.tensor(w)).real.sum().backward()
    (tc * torch.tensor(w)).real.sum().backward()
    assert f.grad.tolist() == tf.grad.tolist()


def test_conj_flag_values_and_writes_through() -> None:
    e, t = _cplx("complex64")
    y, ty = e.conj(), t.conj()
    assert (CX.is_conj(y), CX.is_conj(e)) == (ty.is_conj(), t.is_conj()) == (True, False)
    assert y.tolist() == ty.tolist() and CX.is_conj(y[0]) == ty[0].is_conj()
    y[0, 1] = 5 + 6j
    ty[0, 1] = 5 + 6j
    y.add_(1)
    ty.add_(1)
    y.imag[1] = 0.5
    ty.imag[1] = 0.5
    assert e.tolist() == t.tolist() and y.tolist() == ty.tolist()
    for got, want in ((y.conj(), ty.conj()), (y.resolve_conj(), ty.resolve_conj())):
        assert CX.is_conj(got) == want.is_conj() and got.tolist() == want.tolist()
    assert y.conj()._base is e  # the conjugate of the conjugate aliases the source again
    p, tp = e.conj_physical(), torch.conj_physical(t)
    assert CX.is_conj(p) == tp.is_conj() and p.tolist() == tp.tolist()
    r = ember.ones(2)
    assert r.conj() is r and r.resolve_conj() is r and not r.is_conj()


def test_conj_of_conj_errors_match_torch() -> None:
    e, t = _cplx("complex64")
    for make in (
        lambda m, x: x.view(m.float32),
        lambda m, x: x.view(m.complex64),
        lambda m, x: m.view_as_real(x),
    ):
        want = _outcome(lambda make=make: make(torch, t.conj()))
        got = _outcome(lambda make=make: make(ember, e.conj()))
        assert type(got) is type(want) and str(got) == str(want).replace("torch.", "ember.")


def test_conj_grads_match_torch() -> None:
    w = np.array([1 + 1j, 2 - 3j])
    k = np.array([[1.0, 2.0], [3.0, 4.0]])
    e, t = ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    y, ty = e.conj(), t.conj()
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == "ConjBackward0"
    (ember.view_as_real(y.resolve_conj()) * ember.tensor(k)).sum().backward()
    (torch.view_as_real(ty.resolve_conj()) * torch.tensor(k)).sum().backward()
    assert e.grad.tolist() == t.grad.tolist()
    want = _outcome(lambda: ty.add_(1))
    got = _outcome(lambda: y.add_(1))
    assert type(got) is type(want) and str(got) == str(want)


def test_conj_write_back_is_differentiable() -> None:
    w = np.array([1 + 1j, 2 - 3j])
    e0, t0 = ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    e, t = e0 * 1, t0 * 1
    y, ty = e.conj(), t.conj()
    v, tv = ember.tensor([2 + 0.5j], requires_grad=True), torch.tensor([2 + 0.5j], requires_grad=True)
    y[:1] = v * (3 - 1j)
    ty[:1] = tv * (3 - 1j)
    assert e.tolist() == t.tolist()
    k = ember.tensor([[1.0, -2.0], [0.5, 3.0]])
    (ember.view_as_real(e) * k).sum().backward()
    (torch.view_as_real(t) * torch.tensor(k.tolist())).sum().backward()
    assert np.allclose(e0.grad.numpy(), t0.grad.numpy()) and np.allclose(v.grad.numpy(), tv.grad.numpy())
