"""Products, ``ember.linalg``, complex views and ``ember.fft``.

Decompositions with a sign or phase freedom are checked through a function that does not
depend on it (``abs`` of eigen/singular vectors), as PyTorch's OpInfos do.
"""

from __future__ import annotations

from typing import Any

import ember
import ember.linalg as LA
from ember import fft

from .table_spec import SPD, E, Entry, P, U

_M = U(3, 3)
_MAT = U(3, 3, lo=-0.3, hi=0.3)  # well conditioned after adding the identity in _wc


def _wc(a: ember.Tensor) -> ember.Tensor:
    return a + 2 * ember.eye(3, dtype=ember.float64)


def _tri(a: ember.Tensor) -> ember.Tensor:
    return ember.tril(a) + 2 * ember.eye(a.shape[-1], dtype=ember.float64)


def _cx(a: ember.Tensor, b: ember.Tensor) -> ember.Tensor:
    return ember.complex(a, b)


def _r(z: Any) -> ember.Tensor:
    return ember.view_as_real(z)


def _ffts() -> list[Entry]:
    out: list[Entry] = []
    for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "hfft", "hfft2", "hfftn"):
        out.append(E(f"fft.{n}", U(2, 4), U(2, 4), fn=lambda a, b, n=n: _real(getattr(fft, n)(_cx(a, b)))))
    for n in ("rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"):
        out.append(E(f"fft.{n}", U(2, 4), fn=lambda a, n=n: _r(getattr(fft, n)(a))))
    for n in ("irfft", "irfft2", "irfftn"):
        out.append(E(f"fft.{n}", U(2, 3), U(2, 3), fn=lambda a, b, n=n: getattr(fft, n)(_cx(a, b))))
    out += [E("fft.fftshift", U(2, 4)), E("fft.ifftshift", U(2, 4))]
    return out


def _real(z: ember.Tensor) -> ember.Tensor:
    return _r(z) if z.dtype.is_complex else z


ENTRIES: list[Entry] = [
    E("mm", U(2, 3), U(3, 2)),
    E("matmul", U(2, 3), U(3, 2)),
    E("matmul", U(2, 2, 3), U(3), case="batched_vector"),
    E("bmm", U(2, 2, 3), U(2, 3, 2)),
    E("mv", U(2, 3), U(3)),
    E("dot", U(3), U(3)),
    E("vdot", U(3), U(3)),
    E("inner", U(2, 3), U(3)),
    E("outer", U(2), U(3)),
    E("ger", U(2), U(3)),
    E("addmm", U(2, 2), U(2, 3), U(3, 2), beta=0.5, alpha=2.0),
    E("addmv", U(2), U(2, 3), U(3)),
    E("addr", U(2, 3), U(2), U(3)),
    E("addbmm", U(2, 2), U(2, 2, 3), U(2, 3, 2)),
    E("baddbmm", U(2, 2, 2), U(2, 2, 3), U(2, 3, 2)),
    E("chain_matmul", U(2, 3), U(3, 2), U(2, 2)),
    E("einsum", U(2, 3), U(3, 2), fn=lambda a, b: ember.einsum("ij,jk->ik", a, b)),
    E("tensordot", U(2, 3), U(3, 2), 1),
    E("cross", U(2, 3), U(2, 3), 1),
    E("linalg.cross", U(2, 3), U(2, 3)),
    E("linalg.vecdot", U(2, 3), U(2, 3)),
    E("linalg.multi_dot", U(2, 3), U(3, 2), fn=lambda a, b: LA.multi_dot([a, b])),
    E("linalg.diagonal", _M),
    E("linalg.vander", U(3)),
    E("linalg.vector_norm", U(2, 3)),
    E("linalg.matrix_norm", _M),
    E("linalg.matrix_norm", _M, case="nuc", ord="nuc"),
    E("linalg.norm", _M),
    E("linalg.cond", _MAT, fn=lambda a: LA.cond(_wc(a))),
    E("det", _MAT, fn=lambda a: ember.det(_wc(a))),
    E("logdet", _MAT, fn=lambda a: ember.logdet(_wc(a))),
    E("slogdet", _MAT, fn=lambda a: ember.slogdet(_wc(a))[1]),
    E("linalg.slogdet", _MAT, fn=lambda a: LA.slogdet(_wc(a))[1]),
    E("inverse", _MAT, fn=lambda a: ember.inverse(_wc(a))),
    E("linalg.inv_ex", _MAT, fn=lambda a: LA.inv_ex(_wc(a))[0]),
    E("pinverse", U(3, 2)),
    E("linalg.pinv", U(3, 2)),
    E("matrix_exp", _MAT),
    E("matrix_power", _M, 3),
    E(
        "linalg.tensorinv",
        U(4, 2, 2, lo=-0.3, hi=0.3),
        fn=lambda a: LA.tensorinv(a + ember.eye(4, dtype=ember.float64).reshape(4, 2, 2), ind=1),
    ),
    E(
        "linalg.tensorsolve",
        U(2, 2, 4, lo=-0.3, hi=0.3),
        U(2, 2),
        fn=lambda a, b: LA.tensorsolve(a + ember.eye(4, dtype=ember.float64).reshape(2, 2, 4), b),
    ),
    E("linalg.solve", _MAT, U(3, 2), fn=lambda a, b: LA.solve(_wc(a), b)),
    E("linalg.solve_ex", _MAT, U(3, 2), fn=lambda a, b: LA.solve_ex(_wc(a), b)[0]),
    E("linalg.solve_triangular", _M, U(3, 2), fn=lambda a, b: LA.solve_triangular(_tri(a), b, upper=False)),
    E("triangular_solve", U(3, 2), _M, fn=lambda b, a: ember.triangular_solve(b, _tri(a), upper=False)[0]),
    E("linalg.lstsq", U(4, 2), U(4, 1), fn=lambda a, b: LA.lstsq(a, b)[0]),
    E("linalg.cholesky", SPD(3, 3), fn=lambda a: LA.cholesky((a + a.mT) / 2)),
    E("linalg.cholesky_ex", SPD(3, 3), fn=lambda a: LA.cholesky_ex((a + a.mT) / 2)[0]),
    E("cholesky", SPD(3, 3), fn=lambda a: ember.cholesky((a + a.mT) / 2)),
    E("cholesky_inverse", _M, fn=lambda a: ember.cholesky_inverse(_tri(a))),
    E("cholesky_solve", U(3, 2), _M, fn=lambda b, a: ember.cholesky_solve(b, _tri(a))),
    E("linalg.eigh", SPD(3, 3), fn=lambda a: _eigh(LA.eigh((a + a.mT) / 2))),
    E("linalg.eigvalsh", SPD(3, 3), fn=lambda a: LA.eigvalsh((a + a.mT) / 2)),
    E("linalg.eig", SPD(3, 3), fn=lambda a: _eig(LA.eig((a + a.mT) / 2))),
    E("linalg.eigvals", SPD(3, 3), fn=lambda a: LA.eigvals((a + a.mT) / 2).real),
    E("linalg.svd", U(3, 2), fn=lambda a: _svd(LA.svd(a, full_matrices=False))),
    E("linalg.svdvals", U(3, 2)),
    E("svd", U(3, 2), fn=lambda a: _svd(ember.svd(a))),
    E("linalg.qr", U(3, 2), fn=lambda a: tuple(LA.qr(a))),
    E("qr", U(3, 2), fn=lambda a: tuple(ember.qr(a))),
    E("linalg.householder_product", U(3, 2), U(2)),
    E("orgqr", U(3, 2), U(2)),
    E("linalg.lu", _MAT, fn=lambda a: tuple(LA.lu(_wc(a)))[1:]),
    E("lu", _MAT, fn=lambda a: ember.lu(_wc(a))[0]),
    E("linalg.lu_factor", _MAT, fn=lambda a: LA.lu_factor(_wc(a))[0]),
    E("linalg.lu_factor_ex", _MAT, fn=lambda a: LA.lu_factor_ex(_wc(a))[0]),
    E("linalg.lu_solve", _MAT, U(3, 2), fn=lambda a, b: LA.lu_solve(*LA.lu_factor(_wc(a)), b)),
    E("lu_solve", U(3, 2), _MAT, fn=lambda b, a: ember.lu_solve(b, *ember.lu(_wc(a)))),
    E("lu_unpack", _MAT, fn=lambda a: ember.lu_unpack(*ember.lu(_wc(a)))[1:]),
    E("real", U(2, 3), U(2, 3), fn=lambda a, b: ember.real(_cx(a, b))),
    E("imag", U(2, 3), U(2, 3), fn=lambda a, b: ember.imag(_cx(a, b))),
    E("angle", U(2, 3), U(2, 3), fn=lambda a, b: ember.angle(_cx(a, b))),
    E("complex", U(2, 3), U(2, 3), fn=lambda a, b: _r(ember.complex(a, b))),
    E("polar", P(2, 3), U(2, 3), fn=lambda a, b: _r(ember.polar(a, b))),
    E("view_as_complex", U(2, 3, 2), fn=lambda a: _r(ember.view_as_complex(a) * 2)),
    E("view_as_real", U(2, 3), U(2, 3), fn=lambda a, b: ember.view_as_real(_cx(a, b))),
    E("abs", U(2, 3), U(2, 3), case="complex", fn=lambda a, b: ember.abs(_cx(a, b))),
    E("sgn", U(2, 3), U(2, 3), case="complex", fn=lambda a, b: _r(ember.sgn(_cx(a, b)))),
    E("mul", U(2, 3), U(2, 3), case="complex", fn=lambda a, b: _r(_cx(a, b) * _cx(b, a).conj())),
    E("exp", U(2, 3), U(2, 3), case="complex", fn=lambda a, b: _r(ember.exp(_cx(a, b)))),
    *_ffts(),
]


def _eigh(out: Any) -> tuple[ember.Tensor, ember.Tensor]:
    return out[0], out[1].abs()


def _eig(out: Any) -> tuple[ember.Tensor, ember.Tensor]:
    return out[0].real, out[1].real.abs()


def _svd(out: Any) -> tuple[ember.Tensor, ember.Tensor, ember.Tensor]:
    return out[0].abs(), out[1], out[2].abs()
