"""``linalg.ldl_factor_ex`` / ``ldl_factor``: Bunch-Kaufman LDL^T (LDL^H) as LAPACK's ``sytrf``
(``hetrf``) computes it for the lower triangle, in ember ops so every backend runs it.

Pivot choices follow LAPACK's unblocked ``sytf2`` exactly (same ``alpha``, the same 1x1 / 2x2
tests, interchanges only inside the trailing block), so ``pivots`` and ``info`` match PyTorch.
The factorization is sequential in its pivot decisions: a Python loop per matrix, on the
failure-free path too; PyTorch does not differentiate it either.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from ember.backends import dtypes as D

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["ldl_factor", "ldl_factor_ex"]

_ldl_ex_t = namedtuple("ldl_factor_ex", ["LD", "pivots", "info"])
_ldl_t = namedtuple("ldl_factor", ["LD", "pivots"])
_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _size(x: Tensor) -> Tensor:
    """LAPACK's pivot magnitude: ``|x|`` for reals, ``|re| + |im|`` for complex (``cabs1``)."""
    return x.real.abs() + x.imag.abs() if x.is_complex() else x.abs()


def _diag_size(x: Tensor, hermitian: bool) -> Tensor:
    """A diagonal entry's magnitude; ``hetrf`` takes the real part's only."""
    return x.real.abs() if hermitian else _size(x)


def _factor_one(A: Tensor, hermitian: bool) -> tuple[Tensor, list[int], int]:
    from .._creation import zeros
    from .._ops.diagonal import diag_embed, diagonal, tril

    n = A._shape[-1]
    conj = hermitian and A.is_complex()
    strict = tril(A, -1)
    if conj:  # hetrf reads only the real part of the diagonal
        T = strict + strict.mT.conj_physical() + diag_embed(diagonal(A).real.to(A.dtype))
    else:
        T = tril(A) + strict.mT
    LD = zeros((n, n), dtype=A.dtype, device=A._device)
    piv, info, k = [0] * n, 0, 0
    while k < n:
        absakk = float(_diag_size(T[0, 0], conj).item())
        imax, colmax = 0, 0.0
        if k < n - 1:
            mags = _size(T[1:, 0])
            imax = int(mags.argmax().item()) + 1
            colmax = float(mags[imax - 1].item())
        if max(absakk, colmax) == 0.0 or math.isnan(absakk):
            info = info or k + 1
            LD[k:, k] = T[:, 0]
            piv[k] = k + 1
            T, k = T[1:, 1:], k + 1
            continue
        kp, kstep = 0, 1
        if absakk < _ALPHA * colmax:
            row = _size(T[imax]).clone()
            row[imax] = 0.0
            rowmax = float(row.max().item())
            if absakk >= _ALPHA * colmax * (colmax / rowmax):
                kp = 0
            elif float(_diag_size(T[imax, imax], conj).item()) >= _ALPHA * rowmax:
                kp = imax
            else:
                kp, kstep = imax, 2
        kk = kstep - 1
        if kp != kk:
            order = list(range(T._shape[0]))
            order[kk], order[kp] = kp, kk
            T = T[order][:, order]
        T = _eliminate(T, LD, k, kstep, conj)
        if kstep == 1:
            piv[k] = k + kp + 1
        else:
            piv[k] = piv[k + 1] = -(k + kp + 1)
        k += kstep
    return LD, piv, info


def _eliminate(T: Tensor, LD: Tensor, k: int, kstep: int, conj: bool) -> Tensor:
    """Write block column ``k`` of ``LD`` and return the next trailing block (Schur complement)."""
    if kstep == 1:
        d = T[0, 0].real.to(T.dtype) if conj else T[0, 0]
        x = T[1:, 0]
        LD[k, k] = d
        if x._shape[0] == 0:
            return T[1:, 1:]
        L = x / d
        LD[k + 1 :, k] = L
        xt = x.conj_physical() if conj else x
        return T[1:, 1:] - L.unsqueeze(-1) * xt.unsqueeze(0)
    from ._decomp import inv

    Dk = T[:2, :2]
    LD[k, k], LD[k + 1, k], LD[k + 1, k + 1] = Dk[0, 0], Dk[1, 0], Dk[1, 1]
    X = T[2:, :2]
    if X._shape[0] == 0:
        return T[2:, 2:]
    W = X @ inv(Dk)
    LD[k + 2 :, k : k + 2] = W
    Xt = X.mT.conj_physical() if conj else X.mT
    return T[2:, 2:] - W @ Xt


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False) -> Any:
    """``(LD, pivots, info)`` of ``A = P L D L^T P^T`` (``L^H`` if ``hermitian``), LAPACK's
    compact form: ``L`` below the diagonal, ``D``'s 1x1 and 2x2 blocks on and under it, 1-based
    ``pivots`` (a 2x2 block's both negative); ``info`` is the first exactly-zero ``D[i, i]``."""
    from .._creation import tensor
    from .._ops.join import stack
    from ._decomp import check_matrix

    if isinstance(A, Tensor) and A.dtype in (D.float16, D.bfloat16):
        name = "Half" if A.dtype is D.float16 else "BFloat16"
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for '{name}'")
    try:
        check_matrix("ldl_factor_ex", A)
    except RuntimeError as e:
        raise RuntimeError(f"ember.{e}") from None
    batch, n = A._shape[:-2], A._shape[-1]
    with no_grad():
        mats = A.detach().reshape((math.prod(batch), n, n))
        parts = [_factor_one(mats[i], hermitian) for i in range(mats._shape[0])]
    if parts:
        LD = stack([p[0] for p in parts]).reshape(A._shape)
    else:
        LD = A.detach().clone()
    flat_piv = [v for p in parts for v in p[1]]
    pivots = tensor(flat_piv, dtype=D.int32, device=A._device).reshape(batch + (n,))
    info = tensor([p[2] for p in parts], dtype=D.int32, device=A._device).reshape(batch)
    if check_errors:
        _raise(info, "ember.linalg.ldl_factor_ex")
    return _ldl_ex_t(LD, pivots, info)


def _raise(info: Tensor, name: str) -> None:
    """PyTorch 2.13 reports a singular ``D`` as an unknown LAPACK code, with no batch element."""
    from ._ex import first_failure

    found = first_failure(info)
    if found is not None:
        raise RuntimeError(f"{name}: Unknown error code: {found[1]}.")


def ldl_factor(A: Tensor, *, hermitian: bool = False) -> Any:
    """``(LD, pivots)``; raises where ``D`` has an exactly-zero diagonal entry."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    _raise(info, "ember.linalg.ldl_factor")
    return _ldl_t(LD, pivots)
