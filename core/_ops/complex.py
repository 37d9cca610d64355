"""Complex numbers: parts, construction, angle and conjugation, backend-neutral.

``real``, ``imag``, ``view_as_real`` and ``view_as_complex`` are views sharing storage with
their base (``views_dtype``, the ``bitcast`` kernel); ``complex`` is a composite op. Gradients
follow PyTorch's convention (the conjugate Wirtinger derivative): for a real loss ``L`` of
``z``, ``z.grad = dL/dRe z + 1j dL/dIm z``.

``conj()`` cannot be a lazy view here: ember's ops read native arrays, with no single place
to apply a conjugate bit. So it returns the conjugate materialised, flagged ``is_conj()``,
whose version counter (``views_dtype.ConjVersion``, shared with its views) writes the
conjugate back into the source on every in-place write: ``y = x.conj(); y[0] = v`` sets
``x[0] = conj(v)`` as in PyTorch. A later write to ``x`` is not seen by ``y`` (in PyTorch it is).
"""

from __future__ import annotations

import math
from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._creation import ones, zeros_like
from .._dispatch import call
from .._dtype import pt_name
from .._public import op, public
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import Node, edge, record
from ._common import broadcast_shape, sum_to
from ._composite import NoRecord, run_composite
from .inplace import rebase_view
from .pointwise_special import atan2
from .pointwise_unary import abs as _abs
from .pointwise_unary import cos, isnan, sin
from .select import where
from .views import make_view, select
from .views_dtype import ConjVersion, is_conj_copy, view_as_complex_, view_as_real_

PUBLIC = public(
    __name__,
    {
        "adjoint": op(method=True),
        "angle": op(method=True),
        "complex": op(),
        "conj_physical": op(method=True),
        "is_conj": op(method=True),
        "is_neg": op(method=True),
        "isreal": op(method=True),
        "polar": op(),
        "resolve_conj": op(method=True),
        "resolve_neg": op(method=True),
        "view_as_complex": op(),
        "view_as_real": op(),
    },
)
__all__ = [*PUBLIC, "conj", "imag", "real"]


def _real_grad(g: Tensor) -> Tensor:
    # A real output's gradient is real (PyTorch casts it so); drop a stray imaginary part.
    return real(g) if g.dtype.is_complex else g


def real(input: Tensor) -> Tensor:
    """The real part: a view for complex tensors (``SelectBackward0``), else the tensor itself."""
    if not input.dtype.is_complex:
        return input
    return select(view_as_real_(input, check_conj=False), -1, 0)


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor, a view sharing its storage."""
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(view_as_real_(input, check_conj=False), -1, 1)


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
            f"Expected both inputs to be Half, Float or Double tensors but got {pt_name(real.dtype)} and {pt_name(imag.dtype)}"
        )
    shape = broadcast_shape(real._shape, imag._shape)
    re = real if real._shape == shape else real.expand(shape).contiguous()
    im = imag if imag._shape == shape else imag.expand(shape).contiguous()
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


@autocast_op("polar")
def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """``abs * (cos(angle) + 1j * sin(angle))``."""
    ints = isinstance(abs, Tensor) and isinstance(angle, Tensor) and abs.dtype.category < 2
    if ints or (isinstance(angle, Tensor) and angle.dtype.category < 2):
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{pt_name(abs.dtype)} and {pt_name(angle.dtype)}"
        )
    floats = (
        isinstance(abs, Tensor)
        and isinstance(angle, Tensor)
        and abs.dtype.category == angle.dtype.category == 2
    )
    if floats and abs.dtype is not angle.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {pt_name(abs.dtype)} but got scalar type "
            f"{pt_name(angle.dtype)} for second argument"
        )
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


def _conj_values(input: Tensor) -> Tensor:
    """The conjugate of a complex tensor as a new tensor of its dtype (not recorded)."""
    with NoRecord():
        return complex(real(input), -imag(input)).to(input.dtype)


def _conj_rule(n: Any, g: Tensor) -> tuple:
    return (conj_physical(g),)


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate as a new tensor, never flagged (the input itself for real dtypes)."""
    if not input.dtype.is_complex:
        return input
    out = _conj_values(input)
    if _grad.enabled and input.requires_grad:
        record("ConjPhysicalBackward0", _conj_rule, out, (input,), (), None)
    return out


def _alias_rule(n: Any, g: Tensor) -> tuple:
    return (g,)


_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def _write_back(vc: _WriteBack) -> None:
    """After a write to a ``conj()`` result ``vc.src``: its conjugate into its source ``vc.dst``."""
    y, x = vc.src, vc.dst
    values = _conj_values(y)
    try:
        call(x._be, "assign", x._data, values._data)
    except ValueError as e:  # the contract's answer for an expanded destination
        raise RuntimeError(_OVERLAP) from e
    x._vc[0] += 1
    if vc.node is not None:
        vc.node.freeze()  # the write before this one: its graph of ``y`` is final now
        vc.node = None
    if _grad.enabled and y.requires_grad:
        # ``x`` is now conj(y) entirely: its old graph is replaced.
        node = x.grad_fn = CopySlices(_conj_rule, (), None)
        node.src, node._out_id = y, id(x)
        x._requires_grad = True
        vc.node = node
        if x._base is not None:
            rebase_view(x)


class CopySlices(Node):
    """The write-back's node. The in-place op that triggered it records ``y``'s own new node
    only after the version bump that runs the write-back, so this node's edge to ``y`` is
    read late: at backward, or when the next write through ``y`` freezes it."""

    __slots__ = ("frozen", "src")
    frozen: tuple | None
    src: Tensor

    @property
    def next_functions(self) -> tuple:
        return self.frozen if self.frozen is not None else (edge(self.src),)

    @next_functions.setter
    def next_functions(self, nexts: tuple) -> None:
        self.frozen = None

    def freeze(self) -> None:
        self.frozen = (edge(self.src),)


class _WriteBack(ConjVersion):
    __slots__ = ("node",)
    node: CopySlices | None

    def __setitem__(self, i: Any, v: Any) -> None:
        list.__setitem__(self, i, v)
        _write_back(self)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate, flagged ``is_conj()`` (the input itself for real dtypes).

    Materialised (see the module docstring); writes through it reach ``input``. The conjugate
    of a ``conj()`` result is a view of its source again, unflagged.
    """
    if not input.dtype.is_complex:
        return input
    vc = input._vc
    if type(vc) is _WriteBack and vc.src is input:
        x = vc.dst
        return make_view(x, x._data, x._shape, "AliasBackward0", _alias_rule, None)
    out = _conj_values(input)
    wb = _WriteBack([0])
    wb.src, wb.dst, wb.node = out, input, None
    out._vc = wb
    if input.requires_grad and input.grad_fn is None:
        out._base = input  # in-place writes through it then raise PyTorch's view-of-leaf error
    if _grad.enabled and input.requires_grad:
        record("ConjBackward0", _conj_rule, out, (input,), (), None)
    return out


def view_as_real(input: Tensor) -> Tensor:
    """A ``(..., 2)`` real view of a complex tensor's real and imaginary parts."""
    return view_as_real_(input)


@autocast_op("view_as_complex")
def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a float32/float64 ``(..., 2)`` tensor. float16 (PyTorch: complex32,
    which ember lacks) gives a complex64 copy instead."""
    if input.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a tensor "
            f"of scalar type: {pt_name(input.dtype)}"
        )
    if input.dtype is D.float16:
        if not input._shape or input._shape[-1] != 2:
            return view_as_complex_(input)  # PyTorch's shape errors
        return complex(input.select(-1, 0), input.select(-1, 1))
    return view_as_complex_(input)


def isreal(input: Tensor) -> Tensor:
    """True where the imaginary part is zero (everywhere for real dtypes)."""
    if input.dtype.is_complex:
        return input.imag == 0

    return ones(input._shape, dtype=D.bool_, device=input._device)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions."""

    return conj_physical(input.transpose(-2, -1))


def is_conj(input: Tensor) -> bool:
    """True for a complex ``conj()`` result and its complex views (see the module docstring)."""
    return is_conj_copy(input)


def is_neg(input: Tensor) -> bool:
    """Always False: ember has no lazy negation bit."""
    return False


def resolve_conj(input: Tensor) -> Tensor:
    """An unflagged copy of a ``conj()`` result (``CloneBackward0``); other tensors themselves."""
    return input.clone() if is_conj_copy(input) else input


def resolve_neg(input: Tensor) -> Tensor:
    """``input`` itself (ember has no lazy negation)."""
    return input
