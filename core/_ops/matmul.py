"""Matrix products: ``matmul`` in every rank (NumPy's rules), ``mm``, ``bmm``, ``dot``, ``mv``."""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._dispatch import call
from .._dtype import c_name, pt_name
from .._public import op, public
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record
from ._args import check_tensor, tensor_args
from ._common import broadcast_shape, numel, same_device, sum_to
from ._composite import NoRecord

PUBLIC = public(
    __name__,
    {
        "bmm": op(method=True),
        "dot": op(method=True),
        "matmul": op(method=True),
        "mm": op(method=True),
        "mv": op(method=True),
    },
)
__all__ = [*PUBLIC]


def _dtype_check(a: Tensor, b: Tensor, what: str) -> None:
    if a.dtype is not b.dtype:
        na, nb = (c_name(x.dtype) for x in (a, b))
        raise RuntimeError(f"expected {what} to have the same dtype, but got: {na} != {nb}")


def _core(a: Tensor, b: Tensor) -> Tensor:
    """(..., n, k) @ (..., k, m) with batch dims broadcast; both at least 2-D."""
    batch = broadcast_shape(a._shape[:-2], b._shape[:-2])
    sa, sb = batch + a._shape[-2:], batch + b._shape[-2:]
    be = a._be
    xa = a._data if a._shape == sa else call(be, "expand", a._data, sa)
    xb = b._data if b._shape == sb else call(be, "expand", b._data, sb)
    shape = batch + (a._shape[-2], b._shape[-1])
    return wrap(call(be, "matmul", xa, xb), a._be, a._device, a.dtype, shape)


@autocast_op("matmul")
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch dims."""
    a, b = input, other
    same_device(a, b, "matmul")
    _dtype_check(a, b, "m1 and m2")
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    if a.dtype is D.bool_:
        kernel = "dot" if a.ndim == 1 and b.ndim == 1 else "addmm_impl_cpu_"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b
    if a2._shape[-1] != b2._shape[-2]:
        _shape_error(a, b, a2, b2)
    if a.ndim > 2 and b.ndim == 2:
        # As PyTorch: the batch folds into the rows of one mm (one BLAS call, and an mm gradient)
        # instead of a product broadcast over the batch.
        flat = a.reshape(numel(a._shape[:-1]), a._shape[-1])
        return matmul(flat, b).view(*a._shape[:-1], b._shape[-1])
    with NoRecord():
        out = _core(a2.detach(), b2.detach())
        if a.ndim == 1:
            out = out.squeeze(-2)
        if b.ndim == 1:
            out = out.squeeze(-1)
        out = out.detach() if out._base is not None else out
    if _grad.enabled and (a._requires_grad or b._requires_grad):
        record(_NODES.get((a.ndim, b.ndim), "MatmulBackward0"), _nd_rule, out, (a, b), (), (a, b))
    return out


# PyTorch names the node after the kernel matmul dispatches to.
_NODES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0"}


def _nd_rule(n: Any, g: Tensor) -> tuple:
    a, b = n.ctx
    need = n.needs_input_grad
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b
    g2 = g
    if b.ndim == 1:  # first, so that a 0-d grad (vector @ vector) becomes (1, 1)
        g2 = g2.unsqueeze(-1)
    if a.ndim == 1:
        g2 = g2.unsqueeze(-2)
    ga = gb = None
    if need[0]:
        ga = sum_to(matmul(g2, b2.mT.conj_physical()), a2._shape)
        ga = ga.squeeze(0) if a.ndim == 1 else ga
    if need[1] and b.ndim == 2 and a.ndim == 2 and not b.is_contiguous() and b.mT.is_contiguous():
        # ``x @ w.t()`` (nn.Linear): give w's gradient w's own layout, as PyTorch's
        # mm_mat2_backward does, so AccumulateGrad copies it instead of transposing it.
        gb = matmul(g2.mT, a2.conj_physical()).mT
    elif need[1]:
        gb = sum_to(matmul(a2.mT.conj_physical(), g2), b2._shape)
        gb = gb.squeeze(-1) if b.ndim == 1 else gb
    return ga, gb


def _shape_error(a: Tensor, b: Tensor, a2: Tensor, b2: Tensor) -> None:
    """PyTorch's message for the kernel matmul dispatches to (dot, mv, mm or bmm)."""
    if a.ndim == b.ndim == 1:
        _dot_error(a, b)
    if b.ndim == 1:
        rows = a.numel() // a._shape[-1]
        raise RuntimeError(
            f"size mismatch, got input ({rows}), mat ({rows}x{a._shape[-1]}), vec ({b._shape[0]})"
        )
    if b.ndim <= 2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_fmt(a2)} and {_fmt(b2)})")
    batch = numel(broadcast_shape(a2._shape[:-2], b2._shape[:-2]))
    raise RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {a2._shape[-1]}] "
        f"but got: [{batch}, {b2._shape[-2]}]."
    )


def _dot_error(a: Tensor, b: Tensor) -> None:
    raise RuntimeError(
        f"inconsistent tensor size, expected tensor [{a._shape[0]}] and src [{b._shape[0]}] to have the "
        f"same number of elements, but got {a._shape[0]} and {b._shape[0]} elements respectively"
    )


def _fmt(t: Tensor) -> str:
    return "x".join(str(s) for s in (t._shape if t.ndim == 2 else (t.numel() // t._shape[-1], t._shape[-1])))


@autocast_op("mm")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two 2-D matrices."""
    try:
        ranks = input.ndim, mat2.ndim
    except AttributeError:
        check_tensor("mm", "input", input, 1)
        check_tensor("mm", "mat2", mat2, 2)
        raise
    if ranks[0] != 2:
        raise RuntimeError("self must be a matrix")
    if ranks[1] != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2)


@autocast_op("bmm")
@tensor_args("bmm", "input", "mat2")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched product of two 3-D tensors with equal batch sizes."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if input._shape[0] != mat2._shape[0] or input._shape[2] != mat2._shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{input._shape[0]}, {input._shape[2]}] "
            f"but got: [{mat2._shape[0]}, {mat2._shape[1]}]."
        )
    return matmul(input, mat2)


@autocast_op("dot")
@tensor_args("dot", "input", "tensor")
def dot(input: Tensor, other: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of equal length."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input._shape != other._shape:
        _dot_error(input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {pt_name(input.dtype)} and "
            f"{pt_name(other.dtype)}"
        )
    return matmul(input, other)


@autocast_op("mv")
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    return matmul(input, vec)
