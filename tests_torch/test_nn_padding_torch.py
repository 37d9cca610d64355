"""``F.pad`` in every mode and dimensionality, ``F.fold``/``F.unfold`` and the padding, fold and
unfold modules against PyTorch: values, gradients (float32 and float64), negative pads, and
each error's type and message."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import ember
import ember.nn.functional as ef
import numpy as np
import pytest

torch = pytest.importorskip("torch")
tf = torch.nn.functional

_F = {torch: tf, ember: ef}


def _run(lib: Any, fn: Callable, a: np.ndarray) -> tuple:
    """(error, output, gradient) of ``fn(lib, F, tensor)``."""
    t = lib.tensor(a, requires_grad=a.dtype.kind == "f")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib, _F[lib], t)
    except Exception as e:  # noqa: BLE001 - the comparison is the point
        return (type(e).__name__, str(e).split("\n")[0]), None, None
    if not t.requires_grad or out.numel() == 0:
        return None, out.detach().numpy(), None
    w = lib.tensor(np.random.RandomState(3).standard_normal(tuple(out.shape)).astype(a.dtype))
    return None, out.detach().numpy(), lib.autograd.grad((out * w).sum(), t)[0].numpy()


def _same(fn: Callable, a: np.ndarray) -> None:
    t, e = _run(torch, fn, a), _run(ember, fn, a)
    assert e[0] == t[0]
    if t[0] is None:
        assert e[1].shape == t[1].shape
        np.testing.assert_allclose(e[1], t[1], rtol=1e-6, atol=1e-6)
        assert (e[2] is None) == (t[2] is None)
        if t[2] is not None:
            np.testing.assert_allclose(e[2], t[2], rtol=1e-5, atol=1e-5)


_SHAPES = [
    (5,),
    (2, 5),
    (1, 2, 5),
    (2, 4, 5),
    (1, 2, 4, 5),
    (2, 3, 4, 5),
    (1, 1, 3, 4, 5),
    (1, 2, 1, 3, 4, 5),
]
_PADS = [
    (1, 2),
    (2, 1, 0, 3),
    (1, 1, 1, 1, 1, 1),
    (-1, 2),
    (3, -2, 1, -1),
    (4, 4),
    (5, 1),
    (1, 2, 3),
    (1, 1) * 4,
    (-2, -3),
    (-3, -3),
    (6, 0),
]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape", _SHAPES, ids=str)
def test_pad_matches_pytorch(shape: tuple, mode: str, dt: type) -> None:
    a = np.random.randn(*shape).astype(dt)
    for p in _PADS:
        _same(lambda lib, F, t, p=p, mode=mode: F.pad(t, p, mode=mode), a)
    if mode == "constant":
        _same(lambda lib, F, t: F.pad(t, (1, 2, -1, 1), value=2.5), a)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_empty_dims_and_values(mode: str) -> None:
    cases = [
        ((0, 5), 1),
        ((2, 0), 1),
        ((1, 0, 5), 1),
        ((0, 2, 3, 5), 2),
        ((2, 0, 3, 5), 2),
        ((1, 1, 0, 4, 5), 3),
    ]
    for shape, n in cases + [((1, 0, 2, 4, 5), 3), ((1, 3, 1), 1)]:
        _same(lambda lib, F, t, n=n: F.pad(t, (1, 1) * n, mode=mode), np.zeros(shape))
    a = np.random.randn(1, 2, 4, 5)
    _same(lambda lib, F, t: F.pad(t, (1, 1, 1, 1), mode=mode, value=1.0), a)
    _same(lambda lib, F, t: F.pad(t, (1, 1, 1, 1), mode=mode, value=0.0), a)
    _same(lambda lib, F, t: F.pad(t, (1, 1), mode=mode), np.arange(6, dtype=np.int64).reshape(2, 3))


def test_pad_errors() -> None:
    a = np.random.randn(1, 2, 4, 5)
    for p, mode in [
        ((1, 2, 3), "constant"),
        ((1, 1) * 5, "reflect"),
        ((1, 1), "zeros"),
        ((-3, -3), "constant"),
    ]:
        _same(lambda lib, F, t, p=p, mode=mode: F.pad(t, p, mode=mode), a)
    _same(lambda lib, F, t: F.pad(t, (1, 1)), np.zeros((1, 2, 0, 5)))


@pytest.mark.parametrize(
    "name,args",
    [
        ("ReflectionPad1d", (2,)),
        ("ReflectionPad2d", ((1, 2, 3, 0),)),
        ("ReflectionPad3d", (1,)),
        ("ReplicationPad1d", ((3, 1),)),
        ("ReplicationPad2d", (2,)),
        ("ReplicationPad3d", ((1, 0, 2, 1, 0, 3),)),
        ("CircularPad1d", (2,)),
        ("CircularPad2d", ((1, 2, 2, 1),)),
        ("CircularPad3d", (1,)),
        ("ZeroPad1d", (2,)),
        ("ZeroPad2d", ((1, 2, 3, 4),)),
        ("ZeroPad3d", (1,)),
        ("ConstantPad1d", (2, 1.5)),
        ("ConstantPad2d", ((1, 0, 2, 3), -1.0)),
        ("ConstantPad3d", (1, 0.5)),
    ],
)
def test_padding_modules(name: str, args: tuple) -> None:
    n = int(name[-2])
    a = np.random.randn(*((2, 3) + (4,) * n))
    _same(lambda lib, F, t: getattr(lib.nn, name)(*args)(t), a)
    assert repr(getattr(ember.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


_FOLD = [
    ("unfold", (2, 3, 7, 6), (3,), {}),
    ("unfold", (3, 7, 6), ((2, 3),), {"dilation": (2, 1), "padding": (1, 2), "stride": (2, 3)}),
    ("unfold", (1, 2, 3, 3), (4,), {}),
    ("unfold", (1, 2, 3, 3), (0,), {}),
    ("unfold", (1, 2, 3, 3), (2,), {"stride": 0}),
    ("unfold", (1, 2, 3, 3), (2,), {"dilation": 0}),
    ("unfold", (1, 2, 3, 3), (2,), {"padding": -1}),
    ("unfold", (1, 2, 3, 3), ((2, 2, 2),), {}),
    ("unfold", (0, 2, 3, 3), (2,), {}),
    ("unfold", (1, 2, 0, 3), (2,), {}),
    ("unfold", (1, 1, 2, 3, 3), (2,), {}),
    ("fold", (1, 8, 4), (3, 2), {}),
    ("fold", (2, 12, 6), ((4, 5), (2, 3)), {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
    ("fold", (8, 4), (3, 2), {}),
    ("fold", (0, 8, 4), (3, 2), {}),
    ("fold", (1, 7, 4), (3, 2), {}),
    ("fold", (1, 8, 5), (3, 2), {}),
    ("fold", (8, 4, 2, 2), (3, 2), {}),
    ("fold", (1, 8, 4), (3, 0), {}),
    ("fold", (1, 8, 4), (3, 2), {"stride": 0, "padding": -1}),
    ("fold", (1, 8, 4), (3, 2), {"dilation": 0}),
    ("fold", (1, 8, 4), (0, 2), {}),
    ("fold", (1, 8, 4), ((3, 3, 3), 2), {}),
    ("fold", (1, 0, 4), (3, 2), {}),
]


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("case", _FOLD, ids=lambda c: f"{c[0]}{c[1]}{c[2]}{c[3]}")
def test_fold_unfold_match_pytorch(case: tuple, dt: type) -> None:
    name, shape, args, kw = case
    _same(lambda lib, F, t: getattr(F, name)(t, *args, **kw), np.random.randn(*shape).astype(dt))


def test_fold_unfold_modules() -> None:
    x = np.random.randn(2, 3, 6, 5)
    _same(lambda lib, F, t: lib.nn.Unfold((2, 3), dilation=1, padding=1, stride=2)(t), x)
    _same(lambda lib, F, t: lib.nn.Fold((6, 5), 2, stride=(2, 1))(lib.nn.Unfold(2, stride=(2, 1))(t)), x)
    assert repr(ember.nn.Fold(3, 2)) == repr(torch.nn.Fold(3, 2))
