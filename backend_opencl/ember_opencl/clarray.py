"""CLArray: the OpenCL backend's native array, a strided view of one ``cl.Buffer``.

Strides and offset are in elements, like ``torch.as_strided``, so views (reshape, permute,
expand, slice, as_strided) are new CLArray objects sharing the buffer and writes through
one are seen by the others. ``nelem`` is the storage length in elements.
"""

from __future__ import annotations

from typing import Any

from ember.backends import DType

from . import runtime

__all__ = ["CLArray", "contiguous_strides", "empty", "numel"]


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class CLArray:
    """A view (shape, strides, offset, dtype) of a device buffer of ``nelem`` elements."""

    __slots__ = ("buf", "dev", "dtype", "nelem", "offset", "shape", "strides")

    def __init__(
        self,
        buf: Any,
        nelem: int,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        dtype: DType,
        dev: runtime.Device,
    ) -> None:
        self.buf = buf
        self.nelem = nelem
        self.shape = shape
        self.strides = strides
        self.offset = offset
        self.dtype = dtype
        self.dev = dev

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return numel(self.shape)

    def view(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> CLArray:
        return CLArray(self.buf, self.nelem, shape, strides, offset, self.dtype, self.dev)

    def is_contiguous(self) -> bool:
        if self.size <= 1:
            return True
        return all(
            st == c for s, st, c in zip(self.shape, self.strides, contiguous_strides(self.shape)) if s != 1
        )

    def __repr__(self) -> str:
        return (
            f"CLArray(shape={self.shape}, strides={self.strides}, offset={self.offset}, "
            f"dtype={self.dtype.name}, device=opencl:{self.dev.index})"
        )


def empty(dev: runtime.Device, shape: tuple[int, ...], dtype: DType) -> CLArray:
    n = numel(shape)
    buf = dev.alloc(n * dtype.itemsize)
    return CLArray(buf, n, tuple(shape), contiguous_strides(tuple(shape)), 0, dtype, dev)
