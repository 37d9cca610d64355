"""gradcheck (float64) for every differentiable op of the extended surface not checked in
its own module's tests."""

from __future__ import annotations

import ember
import pytest
from _opsref import dbl, grad_ok, gradgrad_ok

E3 = 3 * ember.eye(3, dtype=ember.float64)
IDX = ember.tensor([[0, 2, 1, 0]] * 3)

ONE = {
    "fliplr": lambda a: ember.fliplr(a),
    "flipud": lambda a: ember.flipud(a),
    "tile": lambda a: ember.tile(a, (2, 1)),
    "broadcast_to": lambda a: ember.broadcast_to(a[:1], (2, 4)),
    "tensor_split": lambda a: ember.tensor_split(a, [1], 0)[1],
    "dstack": lambda a: ember.dstack([a, a * 2]),
    "column_stack": lambda a: ember.column_stack([a[0], a[1]]),
    "diag": lambda a: ember.diag(a, 1),
    "triu": lambda a: ember.triu(a, -1),
    "meshgrid": lambda a: ember.meshgrid(a[0], a[1, :2], indexing="xy")[0],
    "take_along_dim": lambda a: ember.take_along_dim(a, IDX, 1),
    "index_fill": lambda a: ember.index_fill(a, 0, ember.tensor([1]), 0.5),
    "masked_scatter": lambda a: ember.masked_scatter(a, a > 0, a.flip(0)),
    "scatter_mul": lambda a: a.scatter(1, IDX[:, :2], a[:, 2:] + 1, reduce="multiply"),
    "nansum": lambda a: ember.nansum(a, 1),
    "nanmean": lambda a: ember.nanmean(a, 0),
    "nanmedian": lambda a: ember.nanmedian(a, 1).values,
    "kthvalue": lambda a: ember.kthvalue(a, 2, 1).values,
    "nanquantile": lambda a: ember.nanquantile(a, 0.3, 1),
    "cummin": lambda a: ember.cummin(a, 0).values,
    "aminmax": lambda a: ember.aminmax(a, dim=0).min,
    "dist": lambda a: ember.dist(a[0], a[1], 3),
    "diff": lambda a: ember.diff(a, 2, 1),
    "trace": lambda a: ember.trace(a),
    "vdot": lambda a: ember.vdot(a[0], a[1]),
    "inner": lambda a: ember.inner(a, a),
    "outer": lambda a: ember.outer(a[0], a[1]),
    "kron": lambda a: ember.kron(a[:2, :2], a[1:, 2:]),
    "tensordot": lambda a: ember.tensordot(a, a, ([0], [0])),
    "cross": lambda a: ember.cross(a[:, :3], a[:, 1:], dim=1),
    "addmv": lambda a: ember.addmv(a[:, 0], a, a[0], beta=0.5, alpha=2),
    "addr": lambda a: ember.addr(a, a[:, 0], a[0]),
    "baddbmm": lambda a: ember.baddbmm(a[:2, :2].unsqueeze(0), a[:2].unsqueeze(0), a[:2].mT.unsqueeze(0)),
    "float_power": lambda a: ember.float_power(a.abs() + 0.5, 1.7),
    "fmax": lambda a: ember.fmax(a, a.flip(0)),
    "logaddexp2": lambda a: ember.logaddexp2(a, a.flip(1)),
    "addcmul": lambda a: ember.addcmul(a, a, a.flip(0), value=0.5),
    "addcdiv": lambda a: ember.addcdiv(a, a, a.abs() + 1),
    "sinh": ember.sinh,
    "cosh": ember.cosh,
    "asinh": ember.asinh,
    "acosh": lambda a: ember.acosh(a.abs() + 1.5),
    "atanh": lambda a: ember.atanh(a * 0.5),
    "asin": lambda a: ember.asin(a * 0.5),
    "acos": lambda a: ember.acos(a * 0.5),
    "erfc": ember.erfc,
    "lgamma": lambda a: ember.lgamma(a.abs() + 0.5),
    "digamma": lambda a: ember.digamma(a.abs() + 0.5),
    "frac": lambda a: ember.frac(a * 3),
    "nan_to_num": ember.nan_to_num,
    "sgn": ember.sgn,
    "angle": lambda a: ember.angle(ember.complex(a, a.flip(0))),
    "polar": lambda a: ember.view_as_real(ember.polar(a.abs() + 1, a)),
    "view_as_complex": lambda a: ember.view_as_complex(a[:, :2]).abs(),
    "conj_physical": lambda a: ember.conj_physical(ember.complex(a, a)).imag,
    "heaviside": lambda a: ember.heaviside(a, a.flip(0)),
    "deg2rad": ember.deg2rad,
    "ldexp": lambda a: ember.ldexp(a, ember.tensor([1, 2, 3, 4])),
    "clamp_min": lambda a: ember.clamp_min(a, 0.1),
    "corrcoef": ember.corrcoef,
    "cumulative_trapezoid": lambda a: ember.cumulative_trapezoid(a, dim=0),
    "select_scatter": lambda a: ember.select_scatter(a, a[0] * 2, 0, 1),
    "vander": lambda a: ember.vander(a[0], 3),
    "atleast_3d": lambda a: ember.atleast_3d(a),
    "gradient": lambda a: ember.gradient(a, spacing=0.5)[1],
    "xlog1py": lambda a: ember.special.xlog1py(a, a.abs()),
    "polygamma": lambda a: ember.polygamma(2, a.abs() + 1),
    "ndtr": ember.special.ndtr,
    "expit": ember.special.expit,
    "linalg_cond": lambda a: ember.linalg.cond(a[:, :3] + E3),
    "matrix_power": lambda a: ember.linalg.matrix_power(a[:, :3] + E3, -2),
    "multi_dot": lambda a: ember.linalg.multi_dot([a, a.mT, a]),
    "tensorinv": lambda a: ember.linalg.tensorinv((a[:, :3] + E3).reshape(3, 3), 1),
    "tensorsolve": lambda a: ember.linalg.tensorsolve(a[:, :3] + E3, a[:, 3]),
    "cholesky_solve": lambda a: ember.cholesky_solve(
        a[:, :2], ember.linalg.cholesky(a[:, :3] @ a[:, :3].mT + E3)
    ),
    "cholesky_inverse": lambda a: ember.cholesky_inverse(ember.linalg.cholesky(a[:, :3] @ a[:, :3].mT + E3)),
    "pinverse": lambda a: ember.pinverse(a),
    "old_svd_S": lambda a: ember.svd(a).S,
}


@pytest.mark.parametrize("name", list(ONE))
def test_gradcheck(name):
    grad_ok(ONE[name], dbl(3, 4, seed=len(name)))


TWO = {
    "atan2": lambda a: ember.atan2(a, a.flip(1) + 2),
    "hypot": lambda a: ember.hypot(a, a.flip(0) + 1),
    "logsumexp": lambda a: ember.logsumexp(a, 1),
    "cumprod": lambda a: ember.cumprod(a, 1),
    "diagonal": lambda a: ember.diagonal(a, 1) ** 3,
    "unfold": lambda a: a.unfold(1, 2, 1) ** 3,
    "diag_embed": lambda a: ember.diag_embed(a) ** 3,
    "scatter_amax": lambda a: ember.scatter_reduce(a, 1, IDX, a * a, "amax"),
    "cummax": lambda a: ember.cummax(a * a, 1).values,
    "erfinv": lambda a: ember.erfinv(a * 0.5),
    "i0": ember.special.i0,
    "i1e": ember.special.i1e,
    "lgamma": lambda a: ember.lgamma(a.abs() + 0.5),
    "asinh": ember.asinh,
    "cdist": lambda a: ember.cdist(a, a.flip(0) + 1),
    "quantile": lambda a: ember.quantile(a * a, 0.3, 1),
    "einsum": lambda a: ember.einsum("ij,kj->ik", a, a * a),
    "det": lambda a: ember.linalg.det(a[:, :3] + E3),
    "solve": lambda a: ember.linalg.solve(a[:, :3] + E3, a[:, 3]),
    "cholesky": lambda a: ember.linalg.cholesky(a[:, :3] @ a[:, :3].mT + E3),
    "svdvals": lambda a: ember.linalg.svdvals(a),
    "angle": lambda a: ember.angle(ember.complex(a + 2, a * a)),
}


@pytest.mark.parametrize("name", list(TWO))
def test_second_order(name):
    gradgrad_ok(TWO[name], dbl(3, 4, seed=len(name)))
