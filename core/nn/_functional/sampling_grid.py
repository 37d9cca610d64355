"""``F.grid_sample`` (4-D and 5-D; bilinear, nearest, bicubic; zeros/border/reflection) and
``F.affine_grid``, in ember ops: coordinates are tensor arithmetic, taps are ``gather``.

Gradients come from autograd: the input's through gather, the grid's through the
interpolation weights (``floor``/``round`` pass none), with PyTorch's conventions at the
padding edges (a coordinate exactly on the clip border gets no gradient).
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np

from ..._autocast_hook import autocast_op
from ..._creation import tensor
from ..._dtype import pt_name as _pt
from ..._ops.select import where
from ..._tensor import Tensor
from .sampling_weights import cubic_coefficients

__all__ = ["affine_grid", "grid_sample"]

_DEFAULT_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
    "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for "
    "details."
)


def _unnormalize(c: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (c + 1) * ((size - 1) / 2)
    return (c + 1) * (size / 2) - 0.5


def _clip(c: Tensor, size: int) -> Tensor:
    """Clamp to [0, size - 1]; only strictly interior points pass a gradient (as PyTorch)."""
    hi = size - 1
    inside = (c > 0) & (c < hi)
    return where(inside, c, c.detach().clamp(0, hi))


def _reflect(c: Tensor, size: int, align_corners: bool) -> Tensor:
    """Mirror into [-0.5, size - 0.5] (or [0, size - 1] with ``align_corners``), sign-correct gradient."""
    lo2, hi2 = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
    if lo2 == hi2:
        return c.detach() * 0
    low, span = lo2 / 2, (hi2 - lo2) / 2
    t = c - low
    t = where(t < 0, -t, t)
    flips = (t.detach() / span).floor()
    extra = t - flips * span
    odd = (flips.remainder(2)) == 1
    return where(odd, (span + low) - extra, extra + low)


def _pad_coord(c: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    if padding_mode == "border":
        return _clip(c, size)
    if padding_mode == "reflection":
        return _clip(_reflect(c, size, align_corners), size)
    return c


def _tap(flat: Tensor, idx: list[Tensor], sizes: list[int]) -> Tensor:
    """Values of (N, C, prod sizes) ``flat`` at integer coords ``idx`` (N, P each); zero outside."""
    mask = None
    lin = None
    for i, n in zip(idx, sizes):
        ok = (i >= 0) & (i < n)
        mask = ok if mask is None else mask & ok
        lin = i.clamp(0, n - 1) if lin is None else lin * n + i.clamp(0, n - 1)
    assert lin is not None and mask is not None
    n, c = flat.shape[0], flat.shape[1]
    index = lin.long().unsqueeze(1).expand(n, c, lin.shape[1])
    return flat.gather(2, index) * mask.to(flat.dtype).unsqueeze(1)


def _check(input: Tensor, grid: Tensor, mode: str) -> None:
    d = input.ndim - 2
    if grid.shape[-1] != d:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {d} in last dimension, but got grid with sizes "
            f"{list(grid.shape)}"
        )
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
            f"{list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes "
                f"{list(input.shape)} with dimension {i} being empty"
            )
    want = 4 if input.ndim == 4 else 5
    if input.ndim != want or grid.ndim != want:
        raise RuntimeError(
            f"grid_sampler(): expected {want}D input and grid with same number of dimensions, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if want == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"expected scalar type {_pt(input.dtype)} but found {_pt(grid.dtype)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"grid_sampler_{want - 2}d_cpu_kernel_impl\" not implemented for '{_pt(input.dtype)}'"
        )


@autocast_op("nn.functional.grid_sample")
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample (N, C, [D,] H, W) ``input`` at the normalized [-1, 1] points of (N, [D,] H', W', 2|3) ``grid``.

    ``grid[..., 0]`` is x (width), ``[..., 1]`` y, ``[..., 2]`` z; points outside read zeros,
    the border, or the mirror image, per ``padding_mode``.
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
            f"but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, stacklevel=2)
        align_corners = False
    _check(input, grid, mode)
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])
    out_shape = tuple(grid.shape[1:-1])
    flat = input.reshape(n, c, math.prod(sizes))
    g = grid.reshape(n, math.prod(out_shape), len(sizes))
    # coordinate k of the grid indexes spatial dim -1-k: reorder to (D,) H, W
    raw = [_unnormalize(g[..., len(sizes) - 1 - k], sizes[k], align_corners) for k in range(len(sizes))]
    if mode == "bicubic":
        out = _bicubic(flat, raw, sizes, padding_mode, align_corners)
    else:
        coords = [_pad_coord(r, s, padding_mode, align_corners) for r, s in zip(raw, sizes)]
        if mode == "nearest":
            out = _tap(flat, [r.detach().round() for r in coords], sizes)
            if g.requires_grad:  # PyTorch's grid gradient of nearest sampling: zeros, not "unused"
                out = out + (g.round() * 0).sum(-1).unsqueeze(1)
        else:
            out = _linear(flat, coords, sizes)
    return out.reshape((n, c) + out_shape)


def _linear(flat: Tensor, coords: list[Tensor], sizes: list[int]) -> Tensor:
    lows = [r.detach().floor() for r in coords]
    out = None
    for corner in itertools.product((0, 1), repeat=len(coords)):
        w = None
        for b, r, lo in zip(corner, coords, lows):
            f = (r - lo) if b else (lo + 1 - r)
            w = f if w is None else w * f
        assert w is not None
        v = _tap(flat, [lo + b for b, lo in zip(corner, lows)], sizes) * w.unsqueeze(1)
        out = v if out is None else out + v
    assert out is not None
    return out


def _bicubic(
    flat: Tensor, raw: list[Tensor], sizes: list[int], padding_mode: str, align_corners: bool
) -> Tensor:
    """16 taps; padding applies to each tap's integer coordinate, weights are cubic in the fraction."""
    (ry, rx), (h, w) = raw, sizes
    y0, x0 = ry.detach().floor(), rx.detach().floor()
    cy, cx = cubic_coefficients(ry - y0), cubic_coefficients(rx - x0)  # type: ignore[arg-type]
    out = None
    for i in range(4):
        yi = _pad_coord(y0 + (i - 1), h, padding_mode, align_corners).floor()
        for j in range(4):
            xj = _pad_coord(x0 + (j - 1), w, padding_mode, align_corners).floor()
            v = _tap(flat, [yi, xj], sizes) * (cy[i] * cx[j]).unsqueeze(1)  # type: ignore[attr-defined]
            out = v if out is None else out + v
    assert out is not None
    return out


def _base(s: int, align_corners: bool) -> np.ndarray:
    if s <= 1:
        return np.zeros(max(s, 1))
    r = np.linspace(-1.0, 1.0, s)
    return r if align_corners else r * (s - 1) / s


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """Sampling grid of the affine maps ``theta`` (N, 2, 3) or (N, 3, 4) for output ``size``.

    ``grid[n, ..., :] = theta[n] @ [x, y, (z,) 1]`` over the normalized output coordinates.
    """
    size = [int(s) for s in size]
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    shape = tuple(theta.shape)
    if len(size) == 4:
        if theta.ndim != 3 or shape[-2:] != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got {theta.shape}."
            )
    elif len(size) == 5:
        if theta.ndim != 3 or shape[-2:] != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got {theta.shape}."
            )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {size}."
        )
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True. "
            "This is not an intended use case of affine_grid. See the documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    d = len(spatial)
    if shape[0] != size[0]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {d + 1}] but got: "
            f"[{shape[0]}, {d + 1}]."
        )
    axes = [_base(s, align_corners) for s in spatial]  # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [mesh[d - 1 - k] for k in range(d)] + [np.ones(mesh[0].shape)]  # x, y, (z,) 1
    base = tensor(np.stack(cols, -1).reshape(1, -1, d + 1), dtype=theta.dtype, device=theta.device)
    grid = base @ theta.transpose(1, 2)
    return grid.reshape([size[0]] + spatial + [d])
