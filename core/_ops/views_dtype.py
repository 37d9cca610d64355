"""Views that read a tensor's bytes as another dtype: ``view(dtype)``, ``view_as_real``,
``view_as_complex``, through the contract's ``bitcast`` view kernel.

The results alias their base and share its version counter, so writes through them reach
it, as in PyTorch. ``view(dtype)`` is not differentiable (PyTorch's ``view.dtype``);
``view_as_real``/``view_as_complex`` are, each the other's backward.
"""

from __future__ import annotations

from typing import Any

from ember.backends import DType
from ember.backends import dtypes as D

from .._dispatch import call
from .._dtype import pt_name
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from .views import make_view

__all__ = ["ConjVersion", "bitcast_view", "is_conj_copy", "view_as_complex_", "view_as_real_", "view_dtype"]


class ConjVersion(list):
    """The version counter of a ``conj()`` result and its views (``complex.conj``)."""

    __slots__ = ("dst", "src")
    dst: Tensor
    src: Tensor


def is_conj_copy(t: Tensor) -> bool:
    """Whether ``t`` is (a complex view of) a ``conj()`` result: PyTorch's ``is_conj()``."""
    return isinstance(t._vc, ConjVersion) and t.dtype.is_complex


def _wrap_view(input: Tensor, data: Any, shape: tuple[int, ...], dtype: DType) -> Tensor:
    v = make_view(input, data, shape, None, None, None)
    v.dtype = dtype
    return v


def bitcast_view(input: Tensor, dtype: DType) -> Tensor:
    """``input``'s bytes as ``dtype``, with PyTorch's checks and messages (not differentiable)."""
    old, new = input.dtype.itemsize, dtype.itemsize
    if old == new:
        return _wrap_view(input, call(input._be, "bitcast", input._data, dtype), input._shape, dtype)
    what = f"to view {pt_name(input.dtype)} as {pt_name(dtype)} (different element sizes)"
    if not input._shape:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    strides, offset = input._be.backend.layout(input._data)
    if old > new:
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        shape = input._shape[:-1] + (input._shape[-1] * (old // new),)
    else:
        r = new // old
        if input._shape[-1] % r:
            raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got {input._shape[-1]}")
        if offset % r:
            raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, but got {offset}")
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        for i, s in enumerate(strides[:-1]):
            if s % r:
                raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {s}")
        shape = input._shape[:-1] + (input._shape[-1] // r,)
    return _wrap_view(input, call(input._be, "bitcast", input._data, dtype), shape, dtype)


def view_dtype(input: Tensor, dtype: DType) -> Tensor:
    """``Tensor.view(dtype)``."""
    if is_conj_copy(input):
        raise RuntimeError(
            "ember.Tensor.view is not supported for conjugate view tensors when converting to a different dtype."
        )
    return bitcast_view(input, dtype)


def _view_as_real_rule(n: Any, g: Tensor) -> tuple:
    return (view_as_complex_(g.contiguous()),)


def view_as_real_(input: Tensor, check_conj: bool = True) -> Tensor:
    """A ``(..., 2)`` real view of a complex tensor, of any layout (``ViewAsRealBackward0``)."""
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if check_conj and is_conj_copy(input):
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
            "tensor so you can view it as real, use self.resolve_conj(); however, be warned that "
            "the resulting tensor will NOT alias the original."
        )
    strides, offset = input._be.backend.layout(input._data)
    shape = input._shape + (1,)
    # A trailing size-1 dim of stride 1 makes any layout bitcastable to half the itemsize.
    pair = call(input._be, "as_strided", input._data, shape, strides + (1,), offset)
    real = D.to_real(input.dtype)
    out = _wrap_view(input, call(input._be, "bitcast", pair, real), input._shape + (2,), real)
    if _grad.enabled and input.requires_grad:
        record("ViewAsRealBackward0", _view_as_real_rule, out, (input,), (), None)
    return out


def _view_as_complex_rule(n: Any, g: Tensor) -> tuple:
    return (view_as_real_(g.contiguous(), check_conj=False),)


_COMPLEX_OF = {D.float32: D.complex64, D.float64: D.complex128}


def view_as_complex_(input: Tensor) -> Tensor:
    """A complex view of a float32/float64 ``(..., 2)`` tensor (``ViewAsComplexBackward0``)."""
    if not input._shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides, offset = input._be.backend.layout(input._data)
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    dt = _COMPLEX_OF[input.dtype]
    data = call(input._be, "bitcast", input._data, dt)  # shape (..., 1)
    data = call(input._be, "reshape", data, input._shape[:-1])
    out = _wrap_view(input, data, input._shape[:-1], dt)
    if _grad.enabled and input.requires_grad:
        record("ViewAsComplexBackward0", _view_as_complex_rule, out, (input,), (), None)
    return out
