"""Factorisations and solves, each a composite op (backend kernel, else the CPU one) with a
derivative rule in ember ops where PyTorch has one."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ember.backends import dtypes as D

from .._autocast_hook import autocast_op
from .._dtype import pt_name
from .._ops._composite import NoRecord, run_composite
from .._public import op, public
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import record, relabel

PUBLIC = public(
    __name__,
    {
        "det": op(),
        "householder_product": op("orgqr", function=False),
        "inv": op("inverse", function=False),
        "matrix_exp": op(),
        "slogdet": op(),
    },
)
__all__ = [
    *PUBLIC,
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv_ex",
    "qr",
    "solve",
    "svd",
    "svdvals",
]

_slogdet_t = namedtuple("slogdet", ["sign", "logabsdet"])
_eigh_t = namedtuple("eigh", ["eigenvalues", "eigenvectors"])
_eig_t = namedtuple("eig", ["eigenvalues", "eigenvectors"])
_svd_t = namedtuple("svd", ["U", "S", "Vh"])
_qr_t = namedtuple("qr", ["Q", "R"])
_inv_ex_t = namedtuple("inv_ex", ["inverse", "info"])
_chol_ex_t = namedtuple("cholesky_ex", ["L", "info"])


class LinAlgError(RuntimeError):
    """A matrix is singular or not positive-definite (``torch.linalg.LinAlgError``)."""


def check_matrix(name: str, A: Tensor, square: bool = True, half: bool = False) -> None:
    """PyTorch's argument checks; ``half``: float16/bfloat16 are accepted (elementwise norms)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.dtype.category < 2 or (not half and A.dtype in (D.float16, D.bfloat16)):
        raise RuntimeError(
            f"linalg.{name}: Expected a floating point or complex tensor as input. Got {pt_name(A.dtype)}"
        )
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if square and A._shape[-1] != A._shape[-2]:
        raise RuntimeError(
            f"linalg.{name}: A must be batches of square matrices, but they are {A._shape[-2]} by {A._shape[-1]} matrices"
        )


def _run(name: str, tensors: tuple, params: tuple, dtypes: Any) -> Any:
    try:
        with NoRecord():
            return run_composite("linalg_" + name, tensors, params, dtypes)
    except RuntimeError as e:
        raise LinAlgError(f"linalg.{name}: {e}") from None


def _mH(x: Tensor) -> Tensor:
    t = x.mT
    return t.conj_physical() if x.dtype.is_complex else t


def _eye_like(x: Tensor, n: int) -> Tensor:
    from .._creation import eye

    return eye(n, dtype=x.dtype, device=x._device)


# -- determinants and inverses ---------------------------------------------------------------
def _det_rule(n: Any, g: Tensor) -> tuple:
    A, out = n.ctx
    scale = (g * out.conj_physical()) if out.dtype.is_complex else g * out
    return (scale.unsqueeze(-1).unsqueeze(-1) * _mH(inv(A)),)


@autocast_op("linalg.det")
def det(A: Tensor) -> Tensor:
    """Determinants of square matrices (batched)."""
    check_matrix("det", A)
    out = _run("det", (A,), (), A.dtype)
    if _grad.enabled and A.requires_grad:
        record("LinalgDetBackward0", _det_rule, out, (A,), (), (A, out))
    return out


def _slogdet_rule(n: Any, g: Tensor) -> tuple:
    (A,) = n.ctx
    return (g.unsqueeze(-1).unsqueeze(-1).to(A.dtype) * _mH(inv(A)),)


@autocast_op("linalg.slogdet")
def slogdet(A: Tensor) -> Any:
    """``(sign, log|det|)`` of square matrices."""
    check_matrix("slogdet", A)
    sign, logabs = _run("slogdet", (A,), (), (A.dtype, D.to_real(A.dtype)))
    if _grad.enabled and A.requires_grad:
        record("LinalgSlogdetBackward0", _slogdet_rule, logabs, (A,), (), (A,))
    return _slogdet_t(sign, logabs)


def _inv_rule(n: Any, g: Tensor) -> tuple:
    (out,) = n.ctx
    h = _mH(out)
    return (-(h @ g @ h),)


_INV_SINGULAR = "The diagonal element {k} is zero, the inversion could not be completed because the input matrix is singular."


def _singular(A: Tensor, name: str, message: str) -> None:
    """On a kernel's refusal: raise PyTorch's message naming the first zero pivot of ``A``'s LU
    (the failure path only; nothing is raised when rounding, not a zero pivot, made it fail)."""
    from ._ex import lu_info, raise_ex

    raise_ex(lu_info(A.detach()), name, message, LinAlgError)


@autocast_op("inverse")
def inv(A: Tensor) -> Tensor:
    """Inverses of square matrices; raises ``LinAlgError`` for singular ones."""
    check_matrix("inv", A)
    try:
        out = _run("inv", (A,), (), A.dtype)
    except LinAlgError:
        _singular(A, "linalg.inv", _INV_SINGULAR)
        raise
    if _grad.enabled and A.requires_grad:
        record("LinalgInvExBackward0", _inv_rule, out, (A,), (), (out,))
    return out


@autocast_op("linalg.inv_ex")
def inv_ex(A: Tensor, *, check_errors: bool = False) -> Any:
    """``(inverse, info)``: info is 0 where the inverse exists, else the 1-based index of the
    first zero pivot of ``A``'s LU (as LAPACK's ``getrf``); failed inverses are NaN."""
    from .._creation import zeros
    from ._ex import lu_info, mask_failed, raise_ex, settle

    try:
        out, info = inv(A), zeros(A._shape[:-2], dtype=D.int32, device=A._device)
    except LinAlgError:
        out, info = settle(A, lu_info(A.detach()), inv)
        out = mask_failed(out, info, float("nan"))
    if check_errors:
        raise_ex(info, "linalg.inv_ex", _INV_SINGULAR, LinAlgError)
    return _inv_ex_t(out, info)


def _solve_rule(n: Any, g: Tensor) -> tuple:
    A, X = n.ctx
    gB = solve(_mH(A), g)
    return (-(gB @ _mH(X)), gB)


@autocast_op("linalg.solve")
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``X`` with ``A X = B`` (``X A = B`` when ``left=False``); B may be a vector (batch).

    Batched and broadcast; raises ``LinAlgError`` for singular ``A``. Differentiable in both.
    Example: ``ember.linalg.solve(ember.eye(2) * 2, ember.ones(2))`` is ``[0.5, 0.5]``.
    """
    if not left:
        return _mH(solve(_mH(A), _mH(B)))
    check_matrix("solve", A)
    if B.dtype is not A.dtype:
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found A of type {A.dtype.name} and B of type {B.dtype.name} instead"
        )
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B._shape == A._shape[:-1])
    b = B.unsqueeze(-1) if vector else B
    if b._shape[-2] != A._shape[-1]:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation AX = B ({A._shape[-2]}x{A._shape[-1]} and {b._shape[-2]}x{b._shape[-1]})"
        )
    from .._ops._common import broadcast_shape

    batch = broadcast_shape(A._shape[:-2], b._shape[:-2])
    Ae, be = A.expand(batch + A._shape[-2:]), b.expand(batch + b._shape[-2:])
    try:
        out = _run("solve", (Ae.contiguous(), be.contiguous()), (), A.dtype)
    except LinAlgError:
        _singular(Ae, "ember.linalg.solve", "The solver failed because the input matrix is singular.")
        raise
    if _grad.enabled and (A.requires_grad or B.requires_grad):
        from .._ops._common import sum_to

        def rule(n: Any, g: Tensor) -> tuple:
            gA, gB = _solve_rule(n, g)
            return (sum_to(gA, A._shape), sum_to(gB, b._shape))

        record("LinalgSolveExBackward0", rule, out, (A, b), (), (A, out))
    return out.squeeze(-1) if vector else out


# -- Cholesky, QR, eigen and singular value decompositions -----------------------------------
def _phi(x: Tensor) -> Tensor:
    """The lower triangle with a halved diagonal."""
    from .._ops.diagonal import diag_embed, diagonal, tril

    return tril(x, -1) + diag_embed(diagonal(x, 0, -2, -1) * 0.5)


def _cholesky_rule(n: Any, g: Tensor) -> tuple:
    L, upper = n.ctx
    if upper:
        L, g = _mH(L), _mH(g)
    Linv = inv(L)
    S = _mH(Linv) @ _phi(_mH(L) @ g) @ Linv
    return ((S + _mH(S)) * 0.5,)


_NOT_PD = (
    "The factorization could not be completed because the input is not positive-definite "
    "(the leading minor of order {k} is not positive-definite)."
)


@autocast_op("linalg.cholesky")
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` with ``A = L L^H`` (``U`` with ``A = U^H U`` if ``upper``)."""
    check_matrix("cholesky", A)
    try:
        out = _run("cholesky", (A,), (bool(upper),), A.dtype)
    except LinAlgError:
        from ._ex import cholesky_partial, raise_ex

        raise_ex(cholesky_partial(A.detach())[1], "linalg.cholesky", _NOT_PD, LinAlgError)
        raise
    if _grad.enabled and A.requires_grad:
        record("LinalgCholeskyExBackward0", _cholesky_rule, out, (A,), (), (out, bool(upper)))
    return out


@autocast_op("linalg.cholesky_ex")
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> Any:
    """``(L, info)``: info is 0 where ``A`` is positive-definite, else the order of its first
    leading minor that is not (LAPACK's ``potrf``); a failed ``L`` is the partial factor."""
    from .._creation import zeros
    from .._ops.diagonal import diagonal
    from .._ops.select import where
    from ._ex import cholesky_partial, healthy, raise_ex

    try:
        L, info = cholesky(A, upper=upper), zeros(A._shape[:-2], dtype=D.int32, device=A._device)
        if bool(diagonal(L, 0, -2, -1).isnan().any().item()):
            raise LinAlgError("NaN pivot")  # LAPACK stops at a NaN pivot; a kernel may run through it
    except LinAlgError:
        L, info = cholesky_partial(A)
        if bool((info == 0).any().item()):
            try:
                L = where((info == 0).unsqueeze(-1).unsqueeze(-1), cholesky(healthy(A, info)), L)
            except LinAlgError:
                pass  # rounding: the kernel refuses what the partial factor finished; keep that
        L = _mH(L) if upper else L
    if check_errors:
        raise_ex(info, "linalg.cholesky_ex", _NOT_PD, LinAlgError)
    return _chol_ex_t(L, info)


@autocast_op("linalg.qr")
def qr(A: Tensor, mode: str = "reduced") -> Any:
    """``(Q, R)`` with ``A = Q R`` (modes ``reduced``, ``complete``, ``r``). Not differentiable yet."""
    check_matrix("qr", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    q, r = _run("qr", (A,), (mode,), (A.dtype, A.dtype))
    if _grad.enabled and A.requires_grad:
        m, n = A._shape[-2:]
        if mode == "r" or (mode == "complete" and m > n) or m < n:
            raise NotImplementedError(
                f"linalg.qr: the derivative is implemented for mode='reduced' (or square 'complete') with "
                f"m >= n only; got mode='{mode}' for a {m} by {n} input"
            )
        q, r = _record_pair("LinalgQrBackward0", _qr_rule, (q, r), A, None)
    return _qr_t(q, r)


def _copyltu(M: Tensor) -> Tensor:
    """The Hermitian matrix with ``M``'s lower triangle (diagonal real)."""
    from .._ops.diagonal import tril

    low = tril(M, -1)
    from .._ops.diagonal import diag_embed, diagonal

    d = diagonal(M, 0, -2, -1)
    d = d.real if d.dtype.is_complex else d
    return low + _mH(low) + diag_embed(d.to(M.dtype))


def _qr_rule(n: Any, g: tuple) -> tuple:
    Q, R = n.ctx[:2]
    gQ, gR = g
    M = R @ _mH(gR) - _mH(gQ) @ Q
    b = gQ + Q @ _copyltu(M)
    return (_mH(solve(R, _mH(b))),)


def _eigh_rule(n: Any, g: Tensor) -> tuple:
    w, V = n.ctx[:2]
    gw, gV = g
    inner = _mH(V) @ gV if gV is not None else None
    E = w.unsqueeze(-2) - w.unsqueeze(-1)  # E[i, j] = w_j - w_i
    from .._ops.select import where

    mid = 0 * (V[..., :1, :1]) if inner is None else where(E == 0, 0.0, inner / where(E == 0, 1.0, E))
    if gw is not None:
        from .._ops.diagonal import diag_embed

        mid = mid + diag_embed(gw.to(V.dtype))
    return (V @ mid @ _mH(V),)


def _record_pair(name: str, rule: Any, outs: tuple, A: Tensor, extra: Any) -> tuple:
    """Give two outputs one shared node: each output's grad feeds ``rule(n, (g0, g1))``."""
    from .._ops.join import cat

    a, b = outs
    sa, sb = a.numel(), b.numel()
    with NoRecord():
        packed = cat([a.reshape(-1).to(b.dtype) if a.dtype is not b.dtype else a.reshape(-1), b.reshape(-1)])

    def packed_rule(n: Any, g: Tensor) -> tuple:
        ga = g[:sa].reshape(a._shape)
        gb = g[sa:].reshape(b._shape)
        if a.dtype is not b.dtype:
            ga = ga.real if ga.dtype.is_complex and not a.dtype.is_complex else ga.to(a.dtype)
        return rule(n, (ga, gb))

    # The rule reads the graph-connected outputs (filled in below) so higher orders work.
    slots: list = [None, None, *(extra or ())]
    record(name, packed_rule, packed, (A,), (), slots)
    outs = packed[:sa].reshape(a._shape).to(a.dtype), packed[sa : sa + sb].reshape(b._shape)
    slots[:2] = outs
    return outs


@autocast_op("linalg.eigh")
def eigh(A: Tensor, UPLO: str = "L") -> Any:
    """Ascending eigenvalues and orthonormal eigenvectors of Hermitian matrices (uses one triangle)."""
    check_matrix("eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, V = _run("eigh", (A,), (UPLO == "U",), (D.to_real(A.dtype), A.dtype))
    if _grad.enabled and A.requires_grad:
        w, V = _record_pair("LinalgEighBackward0", _eigh_rule, (w, V), A, None)
    return _eigh_t(w, V)


@autocast_op("linalg.eigvalsh")
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """Eigenvalues of Hermitian matrices, ascending."""
    return eigh(A, UPLO).eigenvalues


@autocast_op("linalg.eig")
def eig(A: Tensor) -> Any:
    """Complex eigenvalues and eigenvectors of general square matrices. Not differentiable yet."""
    check_matrix("eig", A)
    ct = D.complex128 if A.dtype in (D.float64, D.complex128) else D.complex64
    w, V = _run("eig", (A,), (), (ct, ct))
    if _grad.enabled and A.requires_grad:
        w, V = _record_pair("LinalgEigBackward0", _eig_rule, (w, V), A, (not A.dtype.is_complex,))
    return _eig_t(w, V)


def _eig_rule(n: Any, g: tuple) -> tuple:
    """PyTorch's formula: gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re(V^H gV))) / E*) V^H."""
    from .._ops.diagonal import diag_embed, diagonal
    from .._ops.select import where

    L, V, real_input = n.ctx
    gL, gV = g
    VhgV = _mH(V) @ gV
    diag_re = diagonal(VhgV, 0, -2, -1).real
    Lc = L.conj_physical()
    E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
    off = VhgV - _mH(V) @ (V * diag_re.unsqueeze(-2).to(V.dtype))
    eye = diag_embed(diagonal(E, 0, -2, -1) * 0 + 1) != 0
    ret = where(eye, 0.0, off / where(eye, 1.0, E)) + diag_embed(gL)
    gA = solve(_mH(V), ret @ _mH(V))
    return (gA.real if real_input else gA,)


@autocast_op("linalg.eigvals")
def eigvals(A: Tensor) -> Tensor:
    """Complex eigenvalues of general square matrices."""
    return eig(A).eigenvalues


def _svd_rule(n: Any, g: tuple) -> tuple:
    U, S, Vh = n.ctx
    gU, gS, gVh = g
    from .._ops.diagonal import diag_embed, diagonal
    from .._ops.select import where

    V = _mH(Vh)
    s2 = S * S
    E = s2.unsqueeze(-2) - s2.unsqueeze(-1)  # s_j^2 - s_i^2
    F = where(E == 0, 0.0, 1 / where(E == 0, 1.0, E)).to(U.dtype)
    Sd = diag_embed(S).to(U.dtype)
    inner = diag_embed(gS).to(U.dtype) if gS is not None else 0 * Sd
    m, k, nn = U._shape[-2], S._shape[-1], V._shape[-2]
    extra = 0
    if gU is not None:
        UhgU = _mH(U) @ gU
        J = F * (UhgU - _mH(UhgU))
        inner = inner + J @ Sd
        if U.dtype.is_complex:  # the phase of each singular pair: PyTorch's extra diagonal term
            im = diagonal(UhgU, 0, -2, -1).imag
            inner = inner + diag_embed((im / S).to(U.dtype)) * 1j
        if m > k:
            extra = extra + (_eye_like(U, m) - U @ _mH(U)) @ gU @ diag_embed(1 / S).to(U.dtype) @ Vh
    if gVh is not None:
        gV = _mH(gVh)
        K = F * (_mH(V) @ gV - _mH(gV) @ V)
        inner = inner + Sd @ K
        if nn > k:
            extra = extra + U @ diag_embed(1 / S).to(U.dtype) @ _mH(gV) @ (_eye_like(U, nn) - V @ Vh)
    return (U @ inner @ Vh + extra,)


@autocast_op("linalg.svd")
def svd(A: Tensor, full_matrices: bool = True) -> Any:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``; gradients need distinct singular values.

    ``full_matrices=False`` gives the reduced factors. Example:
    ``U, S, Vh = ember.linalg.svd(A, full_matrices=False)``.
    """
    check_matrix("svd", A, square=False)
    U, S, Vh = _run("svd", (A,), (bool(full_matrices),), (A.dtype, D.to_real(A.dtype), A.dtype))
    if _grad.enabled and A.requires_grad:
        if full_matrices and A._shape[-1] != A._shape[-2]:
            raise NotImplementedError(
                "linalg.svd: the derivative with full_matrices=True is not implemented for non-square "
                "inputs; use full_matrices=False"
            )
        U, S, Vh = _record_svd(A, U, S, Vh)
    return _svd_t(U, S, Vh)


def _record_svd(A: Tensor, U: Tensor, S: Tensor, Vh: Tensor) -> tuple:
    from .._ops.join import cat

    su, ss = U.numel(), S.numel()
    with NoRecord():
        packed = cat([U.reshape(-1), S.reshape(-1).to(U.dtype), Vh.reshape(-1)])

    def rule(n: Any, g: Tensor) -> tuple:
        gU = g[:su].reshape(U._shape)
        gS = g[su : su + ss].reshape(S._shape)
        gS = gS.real if gS.dtype.is_complex else gS
        gVh = g[su + ss :].reshape(Vh._shape)
        return _svd_rule(n, (gU, gS, gVh))

    slots: list = [None, None, None]  # graph-connected outputs, for higher orders
    record("LinalgSvdBackward0", rule, packed, (A,), (), slots)
    outU = packed[:su].reshape(U._shape)
    outS = packed[su : su + ss].reshape(S._shape)
    outS = outS.real if outS.dtype.is_complex else outS
    slots[:] = [outU, outS, packed[su + ss :].reshape(Vh._shape)]
    return tuple(slots)


@autocast_op("linalg.svdvals")
def svdvals(A: Tensor) -> Tensor:
    """Singular values, descending."""
    return svd(A, full_matrices=False).S


def _matrix_exp_rule(n: Any, g: Tensor) -> tuple:
    (A,) = n.ctx
    from .._ops.join import cat

    k = A._shape[-1]
    z = A * 0
    top = cat([_mH(A), g], -1)
    bottom = cat([z, _mH(A)], -1)
    big = matrix_exp(cat([top, bottom], -2))
    return (big[..., :k, k:],)


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential."""
    check_matrix("matrix_exp", A)
    out = _run("matrix_exp", (A,), (), A.dtype)
    if _grad.enabled and A.requires_grad:
        record("LinalgMatrixExpBackward0", _matrix_exp_rule, out, (A,), (), (A,))
    return out


@autocast_op("orgqr")
def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of the product of Householder reflectors ``I - tau v v^H``."""
    check_matrix("householder_product", A, square=False)
    if A._shape[-1] > A._shape[-2]:
        raise RuntimeError(
            "ember.linalg.householder_product: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if tau.dtype is not A.dtype:
        raise RuntimeError(
            f"ember.linalg.householder_product: tau dtype {tau.dtype.name} does not match input dtype {A.dtype.name}"
        )
    if tau._shape[-1] > A._shape[-1]:
        raise RuntimeError(
            "ember.linalg.householder_product: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if _grad.enabled and (A.requires_grad or tau.requires_grad):
        return relabel(_reflector_product(A, tau), "LinalgHouseholderProductBackward0")
    return _run("householder_product", (A, tau), (), A.dtype)


def _reflector_product(A: Tensor, tau: Tensor) -> Tensor:
    """``H_1 ... H_k`` applied to the first n columns of I, ``H_i = I - tau_i v_i v_i^H`` (v_i:
    column i of A below the diagonal, 1 on it), in ember ops: autograd differentiates it to
    any order, as PyTorch's householder_product_backward does analytically."""
    m, n = A._shape[-2], A._shape[-1]
    eye_mn = _eye_like(A, m)[:, :n]
    V = A.tril(-1) + eye_mn
    Q = eye_mn.expand(A._shape)
    for i in reversed(range(tau._shape[-1])):
        v = V[..., :, i : i + 1]
        t = tau[..., i : i + 1].unsqueeze(-1)
        Q = Q - (t * v) @ (_mH(v) @ Q)
    return Q if tau._shape[-1] else Q.contiguous()
