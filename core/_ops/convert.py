"""Copies, casts, device moves and in-place writes (with the version counter)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from ember.backends import DType
from ember.backends.dtypes import bool_

from .._creation import _check_dtype, tensor
from .._device import resolve
from .._dispatch import call, call_out, from_host, has_kernel, kernel_writes_out, to_host
from .._dtype import pt_name as _pt
from .._public import op, public
from .._tensor import Tensor, _is_contiguous, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from . import complex as _complex
from ._common import broadcast_shape, sum_to
from ._composite import NoRecord
from .inplace import check_view_of_leaf, is_detached, rebase_view
from .pointwise_binary import _HALF, OPMATH_SCALAR, _operands, _scalar_like
from .scaled import FUSED, add_scaled_data

PUBLIC = public(
    __name__,
    {
        "clone": op(method=True),
        "conj": op(method=True),
        "contiguous": op(method=True, function=False),
        "copy_": op(method=True, function=False),
        "cpu": op(method=True, function=False),
        "detach_": op(method=True, function=False),
        "imag": op(),
        "is_nonzero": op(method=True),
        "real": op(),
        "requires_grad_": op(method=True, function=False),
        "to": op(method=True, function=False),
        "type_as": op(method=True, function=False),
    },
)
__all__ = [*PUBLIC, "inplace"]


def _clone_rule(n: Any, g: Tensor) -> tuple:
    return (g,)


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A contiguous copy that keeps the graph (``CloneBackward0``)."""
    if has_kernel(input._be, "clone"):
        data = call(input._be, "clone", input._data)
    else:
        data = input._be.backend.empty(input._shape, input.dtype, input._device.index or 0)
        call(input._be, "assign", data, input._data)
    out = wrap(data, input._be, input._device, input.dtype, input._shape)
    if _grad.enabled and input.requires_grad:
        record("CloneBackward0", _clone_rule, out, (input,), (), None)
    return out


def contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    """``input`` itself if already contiguous, else a contiguous copy."""
    return input if input.is_contiguous() else clone(input)


def _to_rule(n: Any, g: Tensor) -> tuple:
    dtype, device = n.ctx
    return (g.to(device=device, dtype=dtype),)


def _parse_to(args: tuple, kwargs: dict) -> tuple[Any, DType | None, bool]:
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, DType):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a._device, a.dtype
        elif isinstance(a, bool):
            continue
        elif a is not None:
            device = a
    return device, dtype, copy


def to(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Move to a device and/or cast: ``x.to("opencl")``, ``x.to(ember.float64)``."""
    device, dtype, copy = _parse_to(args, dict(kwargs))
    dev, lb = (input._device, input._be) if device is None else resolve(device)
    dt = dtype or input.dtype
    if dev is input._device and dt is input.dtype:
        return clone(input) if copy else input
    if dt not in lb.backend.dtypes:
        _check_dtype(lb, dt)
    data = input._data
    if dev is not input._device:
        data = _transfer(input, dev, lb)
        if dt is not input.dtype:
            data = call(lb, "cast", data, dt)
    elif dt is not input.dtype:
        data = call(lb, "cast", data, dt)
    out = wrap(data, lb, dev, dt, input._shape)
    if _grad.enabled and input.requires_grad:
        record("ToCopyBackward0", _to_rule, out, (input,), (), (input.dtype, input._device))
    return out


def _transfer(input: Tensor, dev: Any, lb: Any) -> Any:
    """Through the host: the source's to_numpy, the target's from_numpy, never aliasing."""
    host = np.array(to_host(input._be, input._data), copy=True, order="C")
    return from_host(lb, host, dev.index or 0)


def cpu(input: Tensor) -> Tensor:
    return to(input, "cpu")


def type_as(input: Tensor, other: Tensor) -> Tensor:
    return to(input, other.dtype)


_INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
    "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
    "more details."
)


def check_not_inference(t: Tensor) -> None:
    """Inference tensors are read-only outside ``inference_mode``."""
    m = t._meta
    if m is not None and m.get("inference") and not _grad.inference:
        raise RuntimeError(_INFERENCE_INPLACE)


def check_inplace(t: Tensor) -> None:
    check_not_inference(t)
    # x.detach().requires_grad_() is a leaf of its own (a view without its base's history)
    if _grad.enabled and t.requires_grad and t.grad_fn is None and (t._base is None or is_detached(t)):
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if t._base is not None:
        check_view_of_leaf(t)


def _write(t: Tensor, src: Tensor) -> None:
    """Write ``src`` (same device) into ``t``'s memory, casting and broadcasting."""
    check_not_inference(t)
    if src.dtype is not t.dtype:
        src = to(src.detach(), t.dtype)
    data = src._data
    if src._shape != t._shape:
        shape = broadcast_shape(t._shape, src._shape)
        if shape != t._shape:
            raise RuntimeError(
                f"output with shape {list(t._shape)} doesn't match the broadcast shape {list(shape)}"
            )
        data = call(t._be, "expand", data, t._shape)
    assign(t, data)
    t._vc[0] += 1


_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def assign(t: Tensor, data: Any) -> None:
    """Run the ``assign`` kernel into ``t``; an expanded (self-overlapping) view refuses."""
    try:
        call(t._be, "assign", t._data, data)
    except ValueError as e:  # NumPy's read-only destination: an expanded view
        raise RuntimeError(_OVERLAP) from e


def _copy_rule(n: Any, g: Tensor) -> tuple:
    src_shape, src_dtype, src_dev = n.ctx

    return (g * 0, sum_to(g, src_shape).to(device=src_dev, dtype=src_dtype))


def copy_(input: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src``'s values into ``input`` in place (any device, dtype cast, broadcast)."""
    check_inplace(input)
    if not isinstance(src, Tensor):
        src = tensor(src, dtype=input.dtype, device=input._device)
    moved = src if src._device is input._device else to(src.detach(), input._device)
    _write(input, moved.detach())
    if _grad.enabled and (src.requires_grad or input.requires_grad):
        _rebase(input, "CopyBackwards", _copy_rule, (input, src), (src._shape, src.dtype, src._device))
        if input._base is not None:
            rebase_view(input)  # the base's graph goes through the copy, as for any in-place op
    return input


def _rebase(t: Tensor, node: str, rule: Callable[..., Any], inputs: tuple, ctx: Any) -> None:
    """After an in-place op, make ``t``'s history the new node (inputs hold the old one)."""
    prev_fn, prev_req = t.grad_fn, t.requires_grad
    alias = wrap(t._data, t._be, t._device, t.dtype, t._shape)
    alias.grad_fn, alias._requires_grad = prev_fn, prev_req
    if prev_req and prev_fn is None:
        alias._meta = t._meta  # a leaf view keeps its accumulator
    ins = tuple(alias if x is t else x for x in inputs)
    record(node, rule, t, ins, (), ctx)


def check_partial_overlap(t: Tensor, other: Any) -> None:
    """PyTorch refuses an in-place op whose input covers part of the written memory
    (``x[1:] += x[:-1]``); the same elements, or layouts it cannot judge, pass."""
    if not isinstance(other, Tensor) or other is t or other._be is not t._be:
        return
    if t._base is None and other._base is None:
        return  # two distinct tensors that are not views (from_numpy of one array twice: not judged)
    be = t._be.backend
    if be.storage_id(other._data) != be.storage_id(t._data):
        return
    (sa, oa), (sb, ob) = be.layout(t._data), be.layout(other._data)  # elements
    if not (_is_contiguous(t._shape, sa) and _is_contiguous(other._shape, sb)):
        return
    na, nb = t.numel(), other.numel()
    if (oa, na) != (ob, nb) and oa < ob + nb and ob < oa + na:
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer "
            "to a single memory location. Please clone() the tensor before performing the operation."
        )


def inplace(op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The ``op_`` form of an out-of-place op: compute, then write into ``self``."""

    refuse_complex = getattr(op, "__name__", "") == "abs"

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if refuse_complex and self.dtype.is_complex:  # |z| is real: PyTorch will not write it back
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        check_inplace(self)
        for a in args:
            if isinstance(a, Tensor):
                check_partial_overlap(self, a)
        recording = _grad.enabled and (
            self.requires_grad or any(getattr(a, "requires_grad", False) for a in args)
        )
        if not recording:
            with NoRecord():
                out = op(self, *args, **kwargs)
            if out.dtype is not self.dtype and out.dtype.category > self.dtype.category:
                raise RuntimeError(
                    f"result type {_pt(out.dtype)} can't be cast to the desired output type {_pt(self.dtype)}"
                )
            _write(self, out)
            return self
        before = clone(self)  # the graph must keep the old value, which we overwrite
        out = op(before, *args, **kwargs)
        if out.dtype is not self.dtype and out.dtype.category > self.dtype.category:
            raise RuntimeError(
                f"result type {_pt(out.dtype)} can't be cast to the desired output type {_pt(self.dtype)}"
            )
        _write(self, out.detach())
        self.grad_fn, self._requires_grad = out.grad_fn, True
        if self._base is not None:
            rebase_view(self)
        return self

    method.__name__ = op.__name__ + "_"
    return method


def inplace_binary(kernel: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``add_``/``sub_``/``mul_``/``div_`` and ``+=`` ... : when no graph is recorded and the
    result keeps ``self``'s dtype and shape, a kernel marked ``writes_out`` writes straight into
    ``self`` (no new array, no copy); every other case is ``inplace(op)``."""

    general = inplace(op)
    scaled = kernel in ("add", "sub")  # add_(other, alpha=a): other * a, then one write into self

    def method(self: Tensor, other: Any, *args: Any, **kwargs: Any) -> Tensor:
        if args or kwargs:
            if scaled and not args and len(kwargs) == 1 and "alpha" in kwargs:
                return _scaled_inplace(kernel, general, self, other, kwargs["alpha"])
            return general(self, other, *args, **kwargs)
        dt = self.dtype
        if dt in _HALF and kernel in OPMATH_SCALAR and _scalar_like(other):
            return general(self, other)  # the scalar in float32, rounded once: the op's own path
        if isinstance(other, Tensor):
            if other.dtype is bool_ or (_grad.enabled and (self._requires_grad or other._requires_grad)):
                return general(self, other)
            check_not_inference(self)
            check_partial_overlap(self, other)
            if other.dtype is dt and other._shape == self._shape and other._device is self._device:
                be, xa, xb = self._be, self._data, other._data  # nothing to promote or broadcast
            else:
                be, _, dt, shape, xa, xb = _operands(self, other, kernel)
                if dt is not self.dtype or shape != self._shape:
                    return general(self, other)
        else:
            tb = type(other)
            if tb is bool or (_grad.enabled and self._requires_grad):
                return general(self, other)
            check_not_inference(self)
            if tb is float and dt.category == 2:
                be, xa, xb = self._be, self._data, other  # as _operands passes it
            else:
                be, _, dt, shape, xa, xb = _operands(self, other, kernel)
                if dt is not self.dtype or shape != self._shape:
                    return general(self, other)
        if dt is bool_ or (kernel == "div" and dt.category < 2) or not kernel_writes_out(be, kernel):
            return general(self, other)
        try:
            call_out(be, kernel, xa, xb, out=self._data)
        except ValueError as e:  # the contract's answer for a read-only (expanded) out
            raise RuntimeError(_OVERLAP) from e
        self._vc[0] += 1
        return self

    method.__name__ = op.__name__ + "_"
    return method


def _scaled_inplace(
    kernel: str, general: Callable[..., Tensor], self: Tensor, other: Any, alpha: Any
) -> Tensor:
    """``self.add_(other, alpha=a)`` (or ``sub_``) as one ``add_scaled`` call writing into ``self``
    (rounded once, as PyTorch), when nothing is recorded and ``other`` is a float32/float64 tensor
    of ``self``'s dtype, shape and device: the optimizer's ``p.data.add_(p.grad, alpha=-lr)``.
    Else ``general``."""
    ta = type(alpha)
    if (
        (ta is not float and ta is not int)
        or not isinstance(other, Tensor)
        or self.dtype not in FUSED  # halves: add's float32 path
        or other.dtype is not self.dtype
        or other._shape != self._shape
        or other._device is not self._device
        or (_grad.enabled and (self._requires_grad or other._requires_grad))
    ):
        return general(self, other, alpha=alpha)
    be = self._be
    check_inplace(self)
    check_partial_overlap(self, other)
    s = float(alpha) if kernel == "add" else -float(alpha)  # x - a*y is x + (-a)*y exactly
    if kernel_writes_out(be, "add_scaled"):  # one pass, rounded once, as PyTorch
        try:
            call_out(be, "add_scaled", self._data, other._data, s, out=self._data)
        except ValueError as e:  # the contract's answer for a read-only (expanded) out
            raise RuntimeError(_OVERLAP) from e
    else:
        assign(self, add_scaled_data(be, self._data, other._data, s, self.dtype))
    self._vc[0] += 1
    return self


def requires_grad_(input: Tensor, requires_grad: bool = True) -> Tensor:
    """Set ``requires_grad`` on a leaf; only floating and complex tensors may require grad."""
    if requires_grad and input.dtype.category < 2:
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if requires_grad and input.is_inference() and not _grad.inference:
        raise RuntimeError(
            "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
        )
    if not requires_grad and input.grad_fn is not None:
        raise RuntimeError(
            "you can only change requires_grad flags of leaf variables. If you want to use a computed "
            "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
        )
    input._requires_grad = bool(requires_grad)
    return input


def detach_(input: Tensor) -> Tensor:
    input.grad_fn = None
    input._requires_grad = False
    return input


def conj(input: Tensor) -> Tensor:
    """Complex conjugate flagged ``is_conj()`` (the tensor itself for real dtypes); writes
    through it reach ``input`` conjugated, as through PyTorch's lazy conjugate view."""
    return _complex.conj(input)


def _part(input: Tensor, which: str) -> Tensor:
    # Backend-neutral and differentiable: the ``real``/``imag`` composites in complex.py.

    return getattr(_complex, which)(input)


def real(input: Tensor) -> Tensor:
    """The real part (a copy for complex tensors; the tensor itself for real ones)."""
    return _part(input, "real") if input.dtype.is_complex else input


def imag(input: Tensor) -> Tensor:
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part(input, "imag")


def is_nonzero(input: Tensor) -> bool:
    """The truth value of a one-element tensor."""
    if input.numel() != 1:
        raise RuntimeError(
            "Boolean value of Tensor with no values is ambiguous"
            if input.numel() == 0
            else "Boolean value of Tensor with more than one value is ambiguous"
        )
    return bool(input.item())
