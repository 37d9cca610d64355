"""LAPACK-style ``info`` for the ``linalg.*_ex`` functions, in ember ops (every backend).

The backend kernels report only "some matrix failed"; PyTorch reports, per matrix, 0 or the
1-based index of the failing leading minor (Cholesky) or zero pivot (LU). These helpers
compute that on the failure path only, and the errors ``check_errors=True`` raises.
"""

from __future__ import annotations

from typing import Any

from ember.backends import dtypes as D

from .._ops.join import cat
from .._ops.select import where
from .._tensor import Tensor

__all__ = ["cholesky_partial", "first_failure", "healthy", "lu_info", "mask_failed", "raise_ex", "settle"]


def cholesky_partial(A: Tensor) -> tuple[Tensor, Tensor]:
    """``(W, info)``: right-looking Cholesky of ``A``'s lower triangle, frozen per matrix at its
    first non-positive (or NaN) pivot ``k`` (``info = k``, 1-based; 0 when it completes).

    ``W`` holds the factor's finished columns and, for a failed matrix, the Schur complement
    left at the failure (its pivot in place), as LAPACK leaves a partial factor.
    """
    from .._creation import zeros
    from .._ops.diagonal import tril

    n = A._shape[-1]
    W = tril(A)
    info = zeros(A._shape[:-2], dtype=D.int32, device=A._device)
    for j in range(n):
        d = W[..., j, j]
        d = d.real if d.is_complex() else d
        info = where((info == 0) & ~(d > 0), j + 1, info).to(D.int32)
        live = info == 0
        s = where(live, d, 1.0).sqrt().to(A.dtype)
        c = W[..., j + 1 :, j] / s.unsqueeze(-1)
        trail = W[..., j + 1 :, j + 1 :] - c.unsqueeze(-1) * c.conj_physical().unsqueeze(-2)
        col = cat([s.unsqueeze(-1), c], -1).unsqueeze(-1)
        right = cat([W[..., j : j + 1, j + 1 :], trail], -2)
        new = cat([W[..., :j, :], cat([W[..., j:, :j], col, right], -1)], -2)
        W = where(live.unsqueeze(-1).unsqueeze(-1), new, W)
    return tril(W), info


def lu_info(A: Tensor) -> Tensor:
    """Per matrix, 0 or the 1-based index of the first exactly-zero pivot of partial-pivoting LU
    (LAPACK ``getrf``'s ``info``)."""
    from ._lu import lu_factor_ex

    return lu_factor_ex(A).info


def healthy(A: Tensor, info: Tensor) -> Tensor:
    """``A`` with each failed matrix replaced by the identity, so one batched kernel call runs."""
    from .._creation import eye

    ok = (info == 0).unsqueeze(-1).unsqueeze(-1)
    return where(ok, A, eye(A._shape[-1], dtype=A.dtype, device=A._device))


def first_failure(info: Tensor) -> tuple[int, int] | None:
    """``(flat batch index, info value)`` of the first failed matrix, or None."""
    flat = info.reshape(-1)
    bad = (flat != 0).nonzero()
    if bad._shape[0] == 0:
        return None
    i = int(bad[0, 0].item())
    return i, int(flat[i].item())


def raise_ex(info: Tensor, name: str, message: str, error: Any) -> None:
    """Raise ``error`` with PyTorch's ``name: (Batch element i): message`` when a matrix failed;
    ``message`` may use ``{k}``, the failed matrix's info."""
    found = first_failure(info)
    if found is None:
        return
    i, k = found
    batch = f"(Batch element {i}): " if info.ndim > 0 else ""
    raise error(f"{name}: {batch}{message.format(k=k)}")


def settle(A: Tensor, info: Tensor, fn: Any) -> tuple[Any, Tensor]:
    """``(fn(healthy(A, info)), info)``; a matrix the kernel still calls singular although its LU
    had no exactly-zero pivot (rounding) gets ``info = n``, so no call raises."""
    from ._decomp import LinAlgError, inv

    try:
        return fn(healthy(A, info)), info
    except LinAlgError:
        pass
    n = A._shape[-1]
    flat = info.reshape(-1).clone()
    mats = A.reshape((-1, n, n))
    for i in range(mats._shape[0]):
        if int(flat[i].item()) == 0:
            try:
                inv(mats[i].detach())
            except LinAlgError:
                flat[i] = n
    info = flat.reshape(info._shape)
    return fn(healthy(A, info)), info


def mask_failed(out: Tensor, info: Tensor, fill: Any, trailing: int = 2) -> Tensor:
    """``out`` with every failed matrix's result set to ``fill``; ``info`` has the batch shape,
    ``out`` that batch (or one broadcast with it) and ``trailing`` more dimensions."""
    ok = info == 0
    for _ in range(trailing):
        ok = ok.unsqueeze(-1)
    return where(ok, out, fill)
