"""From ember tensors (or NumPy arrays, Python numbers) to the NumPy arrays the summaries take."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor

__all__ = ["convert_to_HWC", "figure_to_image", "make_grid", "make_np"]


def make_np(x: Any) -> np.ndarray:
    """An array on the host; a bfloat16 tensor goes through float16, as PyTorch's writer does."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        from ... import bfloat16, float16

        t = x.detach()
        if t.dtype == bfloat16:
            t = t.to(float16)
        return t.cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or ember tensor are expected.")


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """NCHW images (1 or 3 channels) tiled row by row, ``ncols`` wide, into one CHW image."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    cols = min(n, ncols)
    rows = -(-n // cols)
    canvas = np.zeros((3, h * rows, w * cols), dtype=images.dtype)
    for i in range(n):
        r, c = divmod(i, cols)
        canvas[:, r * h : (r + 1) * h, c * w : (c + 1) * w] = images[i]
    return canvas


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:
    """An image in ``input_format`` (NCHW, CHW, HWC, HW, in any order of the letters) as HWC, 3+ channels."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {input_format}"
        )
    if tensor.ndim != len(input_format):
        raise AssertionError(
            "size of input tensor and input format are different. "
            f"tensor shape: {tensor.shape}, input_format: {input_format}"
        )
    fmt = input_format.upper()
    if len(fmt) == 4:
        return make_grid(tensor.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = tensor.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    if len(fmt) == 2:
        return np.stack([tensor.transpose([fmt.find(c) for c in "HW"])] * 3, 2)
    raise AssertionError(f"Unsupported input format: {input_format}")


def figure_to_image(figures: Any, close: bool = True) -> np.ndarray:
    """A matplotlib figure (CHW) or a list of them (NCHW), rendered to RGB by the Agg backend."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure: Any) -> np.ndarray:
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        w, h = figure.canvas.get_width_height()
        rgb = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
        if close:
            plt.close(figure)
        return np.moveaxis(rgb, 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)
