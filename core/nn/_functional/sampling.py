"""``F.interpolate`` in every PyTorch mode, ``pixel_shuffle`` and ``pixel_unshuffle``.

Each mode but nearest is separable: one (out, in) weight matrix per spatial dim
(``sampling_weights``), applied with matmul, so it runs on every backend and the gradient is
matmul's. Nearest modes are an ``index_select`` per dim (gradient: index_add).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from ember.backends import dtypes as D

from ..._creation import tensor
from ..._dtype import pt_name
from ..._public import op, public
from ..._tensor import Tensor
from .sampling_grid import affine_grid, grid_sample
from .sampling_weights import aa_weights, area_weights, cubic_weights, linear_weights, nearest_index

# The CPU kernel PyTorch names when an integer tensor reaches a mode that needs floats.
_INT_REFUSING_KERNEL = {
    "linear": "compute_indices_weights_linear",
    "bilinear": "upsample_bilinear2d_channels_last",
    "bicubic": "compute_indices_weights_cubic",
    "trilinear": "compute_indices_weights_linear",
    "area": "adaptive_avg_pool2d",
}

PUBLIC = public(
    __name__,
    {
        "pixel_shuffle": op(),
        "pixel_unshuffle": op(),
    },
)
__all__ = [*PUBLIC, "affine_grid", "grid_sample", "interpolate"]

_LINEAR_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2, "lanczos": 2}
_ALL_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def _output_size(input: Tensor, size: Any, scale_factor: Any, recompute: Any, mode: str) -> tuple:
    """PyTorch's ``interpolate`` argument rules: (output sizes, scales passed to the kernel)."""
    dim = input.ndim - 2
    spatial = list(input._shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {spatial} and output size of {size}. Please provide input tensor "
                    "in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )
            if not all(isinstance(s, int) for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], "
                    f"but got size with types {[type(s) for s in size]}"
                )
            out = [int(s) for s in size]
        else:
            out = [int(size)] * dim
        if recompute:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return out, [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                f"spatial dimensions of {spatial} and scale_factor of shape {scale_factor}. Please provide "
                "input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
            )
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * dim
    out = [math.floor(n * s) for n, s in zip(spatial, scales)]
    if recompute or mode == "area":
        return out, [None] * dim
    return out, scales


def _check_sizes(input: Tensor, out: list[int]) -> None:
    spatial = input._shape[2:]
    if all(n > 0 for n in spatial) and all(o > 0 for o in out):
        return
    names = "DHW"[3 - len(spatial) :]
    a = ", ".join(f"{k}: {n}" for k, n in zip(names, spatial))
    b = ", ".join(f"{k}: {o}" for k, o in zip(names, out))
    sep = " and" if len(spatial) == 1 else ""
    raise RuntimeError(
        f"Input and output sizes should be greater than 0, but got input ({a}){sep} output ({b})"
    )


def _along(x: Tensor, axis: int, m: np.ndarray) -> Tensor:
    """Apply the (out, in) matrix ``m`` along ``axis`` of ``x``."""
    if m.shape[0] == m.shape[1] and np.array_equal(m, np.eye(m.shape[0])):
        return x
    w = tensor(np.ascontiguousarray(m.T), dtype=x.dtype, device=x._device)
    return (x.movedim(axis, -1) @ w).movedim(-1, axis)


def _check_mode(input: Tensor, mode: str, antialias: bool) -> None:
    if mode in ("nearest", "nearest-exact", "area") and input.ndim in (3, 4, 5):
        return
    want = _LINEAR_DIMS.get(mode)
    if want is not None and input.ndim - 2 == want:
        if mode == "lanczos" and not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        return
    if mode in ("linear", "bilinear", "trilinear") and input.ndim in (3, 4, 5):
        need = {1: "3D", 2: "4D", 3: "5D"}[want] if want is not None else "3D, 4D or 5D"
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {need} input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the modes: "
        f"{_ALL_MODES} (got {mode})"
    )


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) ``input`` to ``size`` or by ``scale_factor``.

    Modes: nearest, nearest-exact, linear (3-D), bilinear/bicubic (4-D, ``antialias`` too),
    trilinear (5-D), area (adaptive average), lanczos (4-D, antialias only).
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    out, scales = _output_size(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
            "tensor as input"
        )
    _check_mode(input, mode, antialias)
    if mode == "lanczos" and align_corners:
        raise ValueError("Lanczos mode does not support align_corners=True")
    _check_sizes(input, out)
    if mode in ("nearest", "nearest-exact"):
        x = input
        for i, (n, o) in enumerate(zip(input._shape[2:], out)):
            if n != o:
                idx = nearest_index(n, o, scales[i], mode == "nearest-exact")
                x = x.index_select(2 + i, tensor(idx, device=input._device))
        return x
    if not input.dtype.is_floating_point:
        kernel = _INT_REFUSING_KERNEL.get(mode, f"upsample_{mode}")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{pt_name(input.dtype)}'")
    ft = np.float64 if input.dtype is D.float64 else np.float32
    x = input
    for i, (n, o) in enumerate(zip(input._shape[2:], out)):
        if mode == "area":
            m = area_weights(n, o, ft)
        elif antialias:
            m = aa_weights(n, o, bool(align_corners), scales[i], ft, mode)
        elif mode == "bicubic":
            m = cubic_weights(n, o, bool(align_corners), scales[i], ft)
        else:
            m = linear_weights(n, o, bool(align_corners), scales[i], ft)
        x = _along(x, 2 + i, m)
    return x


def _check_factor(input: Tensor, r: int, op: str, what: str) -> None:
    if input.ndim < 3:
        raise RuntimeError(
            f"{op} expects input to have at least 3 dimensions, but got input with {input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"{op} expects a positive {what}, but got {r}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C·r², H, W) → (*, C, H·r, W·r): sub-pixel convolution's rearrangement."""
    r = int(upscale_factor)
    _check_factor(input, r, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = input._shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
            f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H·r, W·r) → (*, C·r², H, W): the inverse of ``pixel_shuffle``."""
    r = int(downscale_factor)
    _check_factor(input, r, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = input._shape
    for name, k, v in (("height", -2, h), ("width", -1, w)):
        if v % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but input.size({k})={v} "
                f"is not divisible by {r}"
            )
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)
