"""Complex numbers: parts, construction, angle and conjugation, backend-neutral.

``real``, ``imag`` and ``complex`` are composite ops (a backend kernel, else the CPU one);
everything else composes them. Gradients follow PyTorch's convention (the conjugate
Wirtinger derivative): for a real loss ``L`` of ``z``, ``z.grad = dL/dRe z + 1j dL/dIm z``.
Unlike PyTorch, ``real``/``imag``/``view_as_real`` return copies, not views.
"""

from __future__ import annotations

import math
from typing import Any

from ember.backends import dtypes as D

from .._creation import ones, zeros_like
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from ._common import broadcast_shape, sum_to
from ._composite import NoRecord, run_composite
from .join import stack
from .pointwise_special import atan2
from .pointwise_unary import abs as _abs
from .pointwise_unary import cos, isnan, sin
from .select import where

__all__ = [
    "adjoint",
    "angle",
    "complex",
    "conj_physical",
    "imag",
    "is_conj",
    "is_neg",
    "isreal",
    "polar",
    "real",
    "resolve_conj",
    "resolve_neg",
    "view_as_complex",
    "view_as_real",
]


def _to_complex(g: Tensor, dtype: Any) -> Tensor:
    """A real gradient as the complex dtype ``dtype`` (imaginary part 0)."""

    return complex(g, zeros_like(g))


def _real_grad(g: Tensor) -> Tensor:
    # A real output's gradient is real (PyTorch casts it so); drop a stray imaginary part.
    return real(g) if g.dtype.is_complex else g


def _real_rule(n: Any, g: Tensor) -> tuple:
    (dtype,) = n.ctx
    return (_to_complex(_real_grad(g), dtype),)


def _imag_rule(n: Any, g: Tensor) -> tuple:
    g = _real_grad(g)
    return (complex(zeros_like(g), g),)


def _part(name: str, input: Tensor) -> Tensor:
    with NoRecord():
        out = run_composite(name, (input,), (), D.to_real(input.dtype))
    if _grad.enabled and input.requires_grad:
        rule = _real_rule if name == "real" else _imag_rule
        record(
            "RealBackward0" if name == "real" else "ImagBackward0", rule, out, (input,), (), (input.dtype,)
        )
    return out


def real(input: Tensor) -> Tensor:
    """The real part (a copy for complex tensors; the tensor itself for real ones)."""
    return _part("real", input) if input.dtype.is_complex else input


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor (a copy)."""
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part("imag", input)


def _complex_rule(n: Any, g: Tensor) -> tuple:
    if not g.dtype.is_complex:
        return (g, zeros_like(g))
    return (real(g), imag(g))


def complex(real: Tensor, imag: Tensor) -> Tensor:
    """``real + 1j * imag`` from two float tensors of one dtype (float32 -> complex64)."""

    if not isinstance(real, Tensor) or not isinstance(imag, Tensor):
        raise TypeError("complex(): argument 'real' and 'imag' must be Tensors")
    if real.dtype is not imag.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {real.dtype.name} but got scalar type {imag.dtype.name} for second argument"
        )
    if real.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got {real.dtype.name} and {imag.dtype.name}"
        )
    shape = broadcast_shape(real._shape, imag._shape)
    re = real if real._shape == shape else real.expand(shape).contiguous()  # type: ignore[attr-defined]
    im = imag if imag._shape == shape else imag.expand(shape).contiguous()  # type: ignore[attr-defined]
    dt = D.complex128 if real.dtype is D.float64 else D.complex64
    if real.dtype is D.float16:
        re, im = re.to(D.float32), im.to(D.float32)
    with NoRecord():
        out = run_composite("complex", (re, im), (), dt)
    if _grad.enabled and (real.requires_grad or imag.requires_grad):

        def rule(n: Any, g: Tensor) -> tuple:
            gr, gi = _complex_rule(n, g)
            return (sum_to(gr, real._shape), sum_to(gi, imag._shape))

        record("ComplexBackward0", rule, out, (real, imag), (), None)
    return out


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """``abs * (cos(angle) + 1j * sin(angle))``."""

    return complex(abs * cos(angle), abs * sin(angle))


def _angle_rule(n: Any, g: Tensor) -> tuple:
    (z,) = n.ctx

    a2 = _abs(z) ** 2
    safe = where(a2 == 0, 1.0, a2)
    return (where(a2 == 0, 0.0, 1.0).to(z.dtype) * (g / safe).to(z.dtype) * z * 1j,)


def angle(input: Tensor) -> Tensor:
    """The argument of complex numbers; for real ones ``pi`` where negative, else 0 (NaN kept)."""

    if input.dtype.is_complex:
        with NoRecord():
            out = atan2(imag(input), real(input))
        if _grad.enabled and input.requires_grad:
            record("AngleBackward0", _angle_rule, out, (input,), (), (input,))
        return out

    x = input.to(D.float32) if input.dtype.category < 2 else input
    out = where(x < 0, math.pi, 0.0).to(x.dtype)
    return where(isnan(x), x, out)


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate as a new tensor (the input itself for real dtypes)."""
    if not input.dtype.is_complex:
        return input
    return complex(real(input), -imag(input)).to(input.dtype)


def view_as_real(input: Tensor) -> Tensor:
    """A ``(..., 2)`` real tensor of real and imaginary parts (a copy in ember, not a view)."""

    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return stack([real(input), imag(input)], -1)


def view_as_complex(input: Tensor) -> Tensor:
    """A complex tensor from a real ``(..., 2)`` one (a copy in ember, not a view)."""
    if input.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(
            f"view_as_complex is only supported for floating point tensors, but got a tensor of scalar type: {input.dtype.name}"
        )
    if not input._shape or input._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return complex(input.select(-1, 0), input.select(-1, 1))  # type: ignore[attr-defined]


def isreal(input: Tensor) -> Tensor:
    """True where the imaginary part is zero (everywhere for real dtypes)."""
    if input.dtype.is_complex:
        return input.imag == 0  # type: ignore[attr-defined]

    return ones(input._shape, dtype=D.bool_, device=input._device)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions."""

    return conj_physical(input.transpose(-2, -1))  # type: ignore[attr-defined]


def is_conj(input: Tensor) -> bool:
    """Always False: ember's conjugates are materialised, never lazy."""
    return False


def is_neg(input: Tensor) -> bool:
    """Always False: ember has no lazy negation bit."""
    return False


def resolve_conj(input: Tensor) -> Tensor:
    """``input`` itself (nothing lazy to resolve)."""
    return input


resolve_neg = resolve_conj
