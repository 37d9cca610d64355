"""Products built on ``matmul``, ``mul`` and views: vdot, inner, outer, the ``add*`` family,
tensordot, kron, cross and einsum. All are compositions, so gradients come for free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._autocast_hook import autocast_op
from .._public import op, public
from .._tensor import Tensor
from ._common import broadcast_shape, norm_dim, numel
from .diagonal import diagonal
from .join import stack
from .matmul import dot, matmul
from .shape import broadcast_tensors

PUBLIC = public(
    __name__,
    {
        "addbmm": op(method=True, inplace=True),
        "addmm": op(method=True, inplace=True),
        "addmv": op(method=True, inplace=True),
        "addr": op(method=True, inplace=True),
        "baddbmm": op(method=True, inplace=True),
        "chain_matmul": op(),
        "cross": op(method=True),
        "einsum": op(),
        "inner": op(method=True),
        "kron": op(method=True),
        "outer": op("ger", method=True),
        "tensordot": op(),
        "vdot": op(method=True),
    },
)
__all__ = [*PUBLIC]


@autocast_op("vdot")
def vdot(input: Tensor, other: Tensor) -> Tensor:
    """``sum(conj(input) * other)`` of two 1-D tensors."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    return matmul(input.conj_physical(), other)


@autocast_op("inner")
def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum of products over the last dimension of both (a product with a 0-d operand)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input._shape[-1] != other._shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input._shape)} and {list(other._shape)}"
        )
    return tensordot(input, other, ([input.ndim - 1], [other.ndim - 1]))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """``input[i] * vec2[j]`` of two 1-D tensors."""
    if input.ndim != 1 or vec2.ndim != 1:
        bad, which = (input, "self") if input.ndim != 1 else (vec2, "vec2")
        raise RuntimeError(f"outer: Expected 1-D argument {which}, but got {bad.ndim}-D")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


ger = outer


def _scaled(input: Tensor, prod: Tensor, beta: Any, alpha: Any) -> Tensor:
    p = prod if alpha == 1 else prod * alpha
    if beta == 0:  # input is ignored (even NaN), only its shape broadcasts
        shape = broadcast_shape(input._shape, p._shape)
        return p if p._shape == shape else p.expand(shape).contiguous()
    return (input if beta == 1 else input * beta) + p


@autocast_op("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``."""
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor")
    return _scaled(input, matmul(mat1, mat2), beta, alpha)


@autocast_op("addmv")
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    return _scaled(input, matmul(mat, vec), beta, alpha)


@autocast_op("addr")
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _scaled(input, outer(vec1, vec2), beta, alpha)


@autocast_op("baddbmm")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    return _scaled(input, matmul(batch1, batch2), beta, alpha)


@autocast_op("addbmm")
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    return _scaled(input, matmul(batch1, batch2).sum(0), beta, alpha)


@autocast_op("chain_matmul")
def chain_matmul(*matrices: Tensor) -> Tensor:
    """``matrices[0] @ matrices[1] @ ...``."""
    out = matrices[0]
    for m in matrices[1:]:
        out = matmul(out, m)
    return out


@autocast_op("tensordot")
def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Contract ``dims`` (a count, or two lists of dims) of ``a`` with those of ``b``.

    Example: ``ember.tensordot(a, b, ([1, 0], [0, 1]))``.
    """
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    da = [norm_dim(d, a.ndim) for d in da]
    db = [norm_dim(d, b.ndim) for d in db]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for x, y in zip(da, db):
        if a._shape[x] != b._shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a._shape[x]} in dim {x} "
                f"and second has size {b._shape[y]} in dim {y}"
            )
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = numel(tuple(a._shape[d] for d in da))
    na = numel(tuple(a._shape[d] for d in fa))
    nb = numel(tuple(b._shape[d] for d in fb))
    am = a.permute(fa + da).reshape(na, k)
    bm = b.permute(db + fb).reshape(k, nb)
    # One output element is a dot product (as in PyTorch, where autocast then keeps float32).
    out = dot(am.reshape(k), bm.reshape(k)) if na == 1 and nb == 1 else matmul(am, bm)
    return out.reshape(tuple(a._shape[d] for d in fa) + tuple(b._shape[d] for d in fb))


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product (block matrix of ``input[i] * other``)."""
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + input._shape
    sb = (1,) * (n - other.ndim) + other._shape
    a = input.reshape(tuple(v for s in sa for v in (s, 1)))
    b = other.reshape(tuple(v for s in sb for v in (1, s)))
    return (a * b).reshape(tuple(x * y for x, y in zip(sa, sb)))


@autocast_op("cross")
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The 3-vector cross product along ``dim`` (the first size-3 dim when None)."""

    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    a, b = input, other
    if dim is not None:  # the named dim is checked before broadcasting, as PyTorch does
        d = norm_dim(dim, a.ndim)
        if a._shape[d] != 3 or b._shape[d] != 3:
            raise RuntimeError(
                f"linalg.cross: inputs dimension {dim} must have length 3. Got {a._shape[d]} and {b._shape[d]}"
            )
    if a._shape != b._shape:
        a, b = broadcast_tensors(a, b)
    if dim is None:
        sizes = [i for i, s in enumerate(a._shape) if s == 3]
        if not sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes[0]
    d = norm_dim(dim, a.ndim)
    if a._shape[d] != 3 or b._shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {a._shape[d]} and {b._shape[d]}"
        )
    a0, a1, a2 = (a.select(d, i) for i in range(3))
    b0, b1, b2 = (b.select(d, i) for i in range(3))
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


# -- einsum ----------------------------------------------------------------------------------
def _parse_einsum(equation: str, operands: Sequence[Tensor]) -> tuple[list[list[str]], list[str]]:
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(operands):
        raise RuntimeError(
            "einsum(): more operands were provided than specified in the equation"
            if len(specs) < len(operands)
            else "einsum(): fewer operands were provided than specified in the equation"
        )
    ell_n = 0
    for spec, operand in zip(specs, operands):
        if "..." in spec:
            ell_n = max(ell_n, operand.ndim - (len(spec) - 3))
    ell = [f"...{i}" for i in range(ell_n)]
    labels = []
    for spec, operand in zip(specs, operands):
        labels.append(_expand(spec, ell, operand.ndim))
        if len(labels[-1]) != operand.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(labels[-1])}) does not match the "
                f"number of dimensions ({operand.ndim}) for operand {len(labels) - 1}"
                + (" and no ellipsis was given" if "..." not in spec else "")
            )
    if arrow:
        out = _expand(rhs, ell, None)
    else:
        counts: dict[str, int] = {}
        for lab in labels:
            for c in lab:
                counts[c] = counts.get(c, 0) + 1
        used_ell = [e for e in ell if e in counts]
        out = used_ell + sorted(c for c, n in counts.items() if n == 1 and not c.startswith("..."))
    return labels, out


def _expand(spec: str, ell: list[str], ndim: int | None) -> list[str]:
    if "..." not in spec:
        for c in spec:
            if not c.isalpha():
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {spec.index(c)} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
        return list(spec)
    head, _, tail = spec.partition("...")
    k = len(ell) if ndim is None else ndim - len(head) - len(tail)
    return list(head) + ell[len(ell) - k :] + list(tail)


def _diag_repeats(t: Tensor, labels: list[str]) -> tuple[Tensor, list[str]]:
    while len(set(labels)) != len(labels):
        for i, c in enumerate(labels):
            j = labels.index(c, i + 1) if labels.count(c) > 1 else -1
            if j >= 0:
                t = diagonal(t, 0, i, j)
                labels = [x for k, x in enumerate(labels) if k not in (i, j)] + [c]
                break
    return t, labels


def _sum_out(t: Tensor, labels: list[str], keep: set[str]) -> tuple[Tensor, list[str]]:
    drop = [i for i, c in enumerate(labels) if c not in keep]
    if drop:
        t = t.sum(drop)
        labels = [c for c in labels if c in keep]
    return t, labels


def _contract(a: Tensor, la: list[str], b: Tensor, lb: list[str], keep: set[str]) -> tuple[Tensor, list[str]]:
    batch = [c for c in la if c in lb and c in keep]
    contr = [c for c in la if c in lb and c not in keep]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    pa = a.permute([la.index(c) for c in batch + left + contr])
    pb = b.permute([lb.index(c) for c in batch + contr + right])
    nb = len(batch)
    sl = pa._shape[nb : nb + len(left)]
    sr = pb._shape[nb + len(contr) :]
    ka = numel(pa._shape[nb + len(left) :])
    kb = numel(pb._shape[nb : nb + len(contr)])
    if ka != kb:  # a contracted label broadcasts (size 1 on one side): sum it there first
        pa = pa.sum(list(range(nb + len(left), pa.ndim)), keepdim=False)
        pb = pb.sum(list(range(nb, nb + len(contr))), keepdim=False)
        ka = kb = 1
        pa, pb = pa.unsqueeze(-1), pb.unsqueeze(nb)
    ma = pa.reshape(pa._shape[:nb] + (numel(sl), ka))
    mb = pb.reshape(pb._shape[:nb] + (kb, numel(sr)))
    out = matmul(ma, mb)
    return out.reshape(out._shape[:nb] + sl + sr), batch + left + right


def _check_einsum_sizes(ops: Sequence[Tensor], labels: list[list[str]]) -> None:
    """PyTorch's checks: a label repeated in one operand has one size; across operands its
    sizes broadcast (equal, or 1)."""
    seen: dict[str, int] = {}
    for i, (t, lab) in enumerate(zip(ops, labels)):
        mine: dict[str, int] = {}
        for c, size in zip(lab, t._shape):
            if c in mine and mine[c] != size:
                raise RuntimeError(
                    f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't match, "
                    f"{size} != {mine[c]}"
                )
            mine[c] = size
        for c, size in mine.items():
            prev = seen.get(c)
            if prev is not None and size != prev and size != 1 and prev != 1:
                if c.startswith("..."):
                    raise RuntimeError(
                        f"einsum(): dimension {c[3:]} covered by ellipsis in operand {i}has size {size} which "
                        f"does not broadcast with previously seen ellipsis with size {prev} for the respective dimension"
                    )
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {size} for operand {i} which does not broadcast with "
                    f"previously seen size {prev}"
                )
            if prev is None or prev == 1:
                seen[c] = size


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation over labelled dimensions; ellipsis and repeated labels allowed.

    Args: ``equation`` like ``"bij,bjk->bik"`` (implicit output when ``->`` is absent) and the
    operands (or one list of them). Example: ``ember.einsum("ii->i", x)`` is the diagonal.
    """
    ops = (
        list(operands[0]) if len(operands) == 1 and isinstance(operands[0], (list, tuple)) else list(operands)
    )
    labels, out = _parse_einsum(equation, ops)
    _check_einsum_sizes(ops, labels)
    for c in out:
        if not any(c in lab for lab in labels):
            raise RuntimeError(
                f"einsum(): output subscript {c} does not appear in the equation for any input operand"
            )
    items = [_diag_repeats(t, lab) for t, lab in zip(ops, labels)]
    t, lab = items[0]
    for i in range(1, len(items)):
        keep = set(out).union(*(set(x[1]) for x in items[i:]))
        t, lab = _sum_out(t, lab, keep)
        u, lu = _sum_out(items[i][0], items[i][1], keep | set(lab))
        t, lab = _contract(t, lab, u, lu, set(out).union(*(set(x[1]) for x in items[i + 1 :])))
    t, lab = _sum_out(t, lab, set(out))
    return t.permute([lab.index(c) for c in out]) if lab else t
