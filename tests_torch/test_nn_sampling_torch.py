"""``F.interpolate``, ``F.grid_sample``, ``F.affine_grid`` and ``F.pixel_(un)shuffle`` against PyTorch:
forward values and the gradients of every differentiable input, float32 and float64, every mode,
padding and ``align_corners``, odd sizes, scale factors below and above 1, and the errors."""

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
_TOL = {np.float32: {"rtol": 1e-4, "atol": 1e-4}, np.float64: {"rtol": 1e-10, "atol": 1e-12}}


def _both(fn: Callable, arrays: list[np.ndarray], dt: type, grad: bool = True) -> None:
    """Run ``fn(lib, F, *tensors)`` in both libraries; compare outputs and input gradients."""
    res = []
    for lib in (torch, ember):
        xs = [lib.tensor(a.astype(dt), requires_grad=grad) for a in arrays]
        out = fn(lib, _F[lib], *xs)
        row = [out.detach().numpy()]
        if grad:
            w = lib.tensor(np.random.RandomState(7).standard_normal(tuple(out.shape)).astype(dt))
            row += [g.numpy() for g in lib.autograd.grad((out * w).sum(), xs)]
        res.append(row)
    for t, e in zip(*res):
        assert t.shape == e.shape
        np.testing.assert_allclose(e, t, **_TOL[dt])


def _err(fn: Callable) -> None:
    """Both libraries raise the same exception type with the same message."""
    out = []
    for lib in (torch, ember):
        with warnings.catch_warnings(), pytest.raises(Exception) as info:
            warnings.simplefilter("ignore")
            fn(lib, _F[lib])
        out.append((info.type.__name__, str(info.value).split("\n")[0]))
    assert out[0] == out[1]


_RESIZE = [
    {"size": (8, 3)},
    {"size": 5},
    {"scale_factor": 1.7},
    {"scale_factor": 0.45},
    {"scale_factor": (2.0, 0.5)},
    {"scale_factor": 0.6, "recompute_scale_factor": True},
    {"scale_factor": 3},
]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", _RESIZE, ids=str)
@pytest.mark.parametrize(
    "mode,ac,aa",
    [
        ("nearest", None, False),
        ("nearest-exact", None, False),
        ("area", None, False),
        ("bilinear", False, False),
        ("bilinear", True, False),
        ("bicubic", False, False),
        ("bicubic", True, False),
        ("bilinear", False, True),
        ("bilinear", True, True),
        ("bicubic", False, True),
        ("bicubic", True, True),
        ("lanczos", False, True),
    ],
)
def test_interpolate_2d(mode: str, ac: Any, aa: bool, kw: dict, dt: type) -> None:
    x = np.random.randn(2, 3, 5, 7)
    _both(lambda lib, F, t: F.interpolate(t, mode=mode, align_corners=ac, antialias=aa, **kw), [x], dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [{"size": 11}, {"scale_factor": 0.4}, {"scale_factor": 2.5}], ids=str)
@pytest.mark.parametrize(
    "mode,ac",
    [("nearest", None), ("nearest-exact", None), ("area", None), ("linear", False), ("linear", True)],
)
def test_interpolate_1d(mode: str, ac: Any, kw: dict, dt: type) -> None:
    _both(
        lambda lib, F, t: F.interpolate(t, mode=mode, align_corners=ac, **kw), [np.random.randn(2, 3, 6)], dt
    )


@pytest.mark.parametrize("kw", [{"size": (3, 5, 2)}, {"scale_factor": (1.5, 0.7, 2.0)}], ids=str)
@pytest.mark.parametrize(
    "mode,ac",
    [("nearest", None), ("nearest-exact", None), ("area", None), ("trilinear", False), ("trilinear", True)],
)
def test_interpolate_3d(mode: str, ac: Any, kw: dict) -> None:
    _both(
        lambda lib, F, t: F.interpolate(t, mode=mode, align_corners=ac, **kw),
        [np.random.randn(2, 2, 4, 3, 5)],
        np.float64,
    )


def test_interpolate_same_size_is_identity_and_upsample_module() -> None:
    x = np.random.randn(1, 2, 4, 4)
    _both(
        lambda lib, F, t: F.interpolate(t, size=(4, 4), mode="bilinear", align_corners=False), [x], np.float64
    )
    _both(lambda lib, F, t: lib.nn.Upsample(scale_factor=(2, 1.5), mode="bicubic")(t), [x], np.float64)
    _both(lambda lib, F, t: lib.nn.UpsamplingBilinear2d(scale_factor=2)(t), [x], np.float64)
    _both(lambda lib, F, t: lib.nn.UpsamplingNearest2d(size=(3, 7))(t), [x], np.float64)
    assert repr(ember.nn.Upsample(scale_factor=(2, 3), mode="bicubic")) == repr(
        torch.nn.Upsample(scale_factor=(2, 3), mode="bicubic")
    )


_GRID_CASES = [
    (m, p, ac)
    for m in ("bilinear", "nearest", "bicubic")
    for p in ("zeros", "border", "reflection")
    for ac in (False, True)
]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mode,pad,ac", _GRID_CASES)
def test_grid_sample_2d(mode: str, pad: str, ac: bool, dt: type) -> None:
    x = np.random.randn(2, 3, 5, 7)
    g = np.random.uniform(-1.4, 1.4, (2, 4, 6, 2))
    _both(lambda lib, F, a, b: F.grid_sample(a, b, mode, pad, ac), [x, g], dt)


@pytest.mark.parametrize("mode,pad,ac", [c for c in _GRID_CASES if c[0] != "bicubic"])
def test_grid_sample_3d(mode: str, pad: str, ac: bool) -> None:
    x = np.random.randn(2, 2, 4, 3, 5)
    g = np.random.uniform(-1.4, 1.4, (2, 3, 4, 2, 3))
    _both(lambda lib, F, a, b: F.grid_sample(a, b, mode, pad, ac), [x, g], np.float64)


def test_grid_sample_size_one_and_far_outside() -> None:
    x = np.random.randn(1, 2, 1, 4)
    g = np.random.uniform(-4.0, 4.0, (1, 3, 5, 2))
    for pad in ("zeros", "border", "reflection"):
        for ac in (False, True):
            _both(
                lambda lib, F, a, b, pad=pad, ac=ac: F.grid_sample(a, b, "bilinear", pad, ac),
                [x, g],
                np.float64,
            )


@pytest.mark.parametrize("ac", [False, True])
@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 1, 3, 4, 5], [2, 3, 1, 6]], ids=str)
def test_affine_grid(size: list, ac: bool) -> None:
    theta = np.random.randn(2, 3, 4) if len(size) == 5 else np.random.randn(2, 2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _both(lambda lib, F, t: F.affine_grid(t, size, ac), [theta], np.float64)
        _both(lambda lib, F, t: F.affine_grid(t, size, ac), [theta], np.float32)


def test_affine_grid_then_grid_sample_round_trip() -> None:
    """The identity transform samples the input back (align_corners=False, bilinear)."""
    x = ember.tensor(np.random.randn(1, 2, 5, 6).astype(np.float32))
    grid = ef.affine_grid(
        ember.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]), [1, 2, 5, 6], align_corners=False
    )
    y = ef.grid_sample(x, grid, align_corners=False)
    np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-6)


def test_grid_sample_default_align_corners_warns() -> None:
    x, g = ember.zeros(1, 1, 2, 2), ember.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
        ef.grid_sample(x, g)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_pixel_shuffle_roundtrip(dt: type) -> None:
    _both(lambda lib, F, t: F.pixel_shuffle(t, 3), [np.random.randn(2, 18, 3, 4)], dt)
    _both(lambda lib, F, t: F.pixel_unshuffle(t, 2), [np.random.randn(2, 3, 4, 6)], dt)
    _both(lambda lib, F, t: lib.nn.PixelShuffle(2)(t), [np.random.randn(8, 2, 3)], dt)
    _both(lambda lib, F, t: lib.nn.PixelUnshuffle(3)(t), [np.random.randn(1, 2, 1, 3, 6)], dt)


def _r(lib: Any, *shape: int, dtype: Any = None) -> Any:
    return lib.tensor(np.random.RandomState(0).randn(*shape).astype(np.float32))


_ERRORS = [
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), size=(0, 3)),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), scale_factor=0.1, mode="bicubic"),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4), size=0, mode="linear"),
    lambda l, F: F.interpolate(_r(l, 1, 1, 2, 3, 4), size=(0, 1, 1), mode="trilinear"),
    lambda l, F: F.interpolate(_r(l, 1, 2, 0, 3), size=(2, 2)),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), size=(3, 3), mode="bogus"),
    lambda l, F: F.interpolate(_r(l, 2, 3), size=3),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), size=(2.5, 2)),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), size=(2, 2), scale_factor=2),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5)),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), size=(2, 2), recompute_scale_factor=True),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), size=(2, 2, 2)),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), scale_factor=(2, 2, 2)),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), size=(2, 2), align_corners=True),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), size=(2, 2), mode="area", align_corners=False),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 5), size=(2, 2), antialias=True),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4), size=(2,), mode="bilinear"),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 3), size=(2, 2), mode="linear"),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 3, 3), size=(2, 2, 2), mode="bicubic"),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 3), size=(2, 2), mode="lanczos"),
    lambda l, F: F.interpolate(
        _r(l, 1, 2, 4, 3), size=(2, 2), mode="lanczos", antialias=True, align_corners=True
    ),
    lambda l, F: F.interpolate(_r(l, 1, 2, 4, 3, 3, 3), size=(2, 2, 2, 2)),
    lambda l, F: F.pixel_shuffle(_r(l, 1, 5, 2, 2), 2),
    lambda l, F: F.pixel_shuffle(_r(l, 5, 2), 2),
    lambda l, F: F.pixel_shuffle(_r(l, 4, 2, 2), 0),
    lambda l, F: F.pixel_unshuffle(_r(l, 1, 5, 3, 4), 2),
    lambda l, F: F.pixel_unshuffle(_r(l, 1, 5, 4, 3), 2),
    lambda l, F: F.pixel_unshuffle(_r(l, 4, 2, 2), -1),
    lambda l, F: F.grid_sample(_r(l, 1, 2, 4, 5), _r(l, 1, 3, 3, 3), align_corners=False),
    lambda l, F: F.grid_sample(_r(l, 1, 2, 4, 5), _r(l, 2, 3, 3, 2), align_corners=False),
    lambda l, F: F.grid_sample(_r(l, 1, 2, 0, 5), _r(l, 1, 3, 3, 2), align_corners=False),
    lambda l, F: F.grid_sample(_r(l, 1, 2, 4), _r(l, 1, 3, 1), align_corners=False),
    lambda l, F: F.grid_sample(_r(l, 1, 2, 4, 5), _r(l, 1, 3, 3, 3, 2), align_corners=False),
    lambda l, F: F.grid_sample(
        _r(l, 1, 2, 4, 5, 3), _r(l, 1, 3, 3, 3, 3), mode="bicubic", align_corners=False
    ),
    lambda l, F: F.grid_sample(_r(l, 1, 2, 4, 5), _r(l, 1, 3, 3, 2), mode="x", align_corners=False),
    lambda l, F: F.grid_sample(_r(l, 1, 2, 4, 5), _r(l, 1, 3, 3, 2), padding_mode="x", align_corners=False),
    lambda l, F: F.grid_sample(_r(l, 1, 2, 4, 5), _r(l, 1, 3, 3, 2).double(), align_corners=False),
    lambda l, F: F.affine_grid(_r(l, 2, 2, 3), [2, 1, 3], align_corners=False),
    lambda l, F: F.affine_grid(_r(l, 2, 2, 3), [2, 1, 0, 3], align_corners=False),
    lambda l, F: F.affine_grid(_r(l, 2, 2, 3), [3, 1, 4, 3], align_corners=False),
]


@pytest.mark.parametrize("case", range(len(_ERRORS)))
def test_errors_match_pytorch(case: int) -> None:
    _err(_ERRORS[case])


def test_affine_grid_theta_errors() -> None:
    """Same type and wording; the dtype and Size are spelled by each library."""
    with pytest.raises(ValueError, match="Expected theta to have floating point type, but got ember.int32"):
        ef.affine_grid(ember.zeros(2, 2, 3, dtype=ember.int32), [2, 1, 3, 3], align_corners=False)
    with pytest.raises(
        ValueError, match=r"Expected a batch of 3D affine matrices of shape Nx3x4 for size \[2, 1, 3, 3, 3\]"
    ):
        ef.affine_grid(ember.zeros(2, 2, 3), [2, 1, 3, 3, 3], align_corners=False)
