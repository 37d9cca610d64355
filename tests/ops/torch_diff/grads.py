"""Differential cases (see compare.py): run as ``python THIS.py torch|ember OUT.pkl``."""

import pickle
import sys
from pathlib import Path

import numpy as np

mod = sys.argv[1]
if mod == "torch":
    import torch
else:
    import ember as torch
rng = np.random.default_rng(0)
X = rng.normal(size=(3, 4))
Y = rng.normal(size=(3, 4))
M = rng.normal(size=(3, 3))
P = rng.uniform(0.2, 0.8, size=(3, 4))
res = {}


def run(name, fn, *arrs):
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrs]
    try:
        out = fn(*ts)
        out = out if not isinstance(out, (tuple, list)) else out[0]
        w = torch.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)
        (out * w).sum().backward()
        res[name] = [t.grad.numpy().copy() if t.grad is not None else None for t in ts]
    except Exception as e:  # noqa: BLE001  an exception is a recorded outcome
        res[name] = ("E", type(e).__name__, str(e)[:100])


cases = {
    "flip": (lambda a: torch.flip(a, [0]), X),
    "roll": (lambda a: torch.roll(a, 1, 1), X),
    "rot90": (lambda a: torch.rot90(a), X),
    "repeat": (lambda a: a.repeat(2, 1), X),
    "rint": (lambda a: a.repeat_interleave(2, 0), X),
    "tile": (lambda a: torch.tile(a, (2, 2)), X),
    "diagonal": (lambda a: torch.diagonal(a, 1), X),
    "diag_embed": (lambda a: torch.diag_embed(a), X),
    "tril": (lambda a: torch.tril(a), X),
    "unfold": (lambda a: a.unfold(1, 2, 1), X),
    "take": (lambda a: torch.take(a, torch.tensor([0, 0, 5])), X),
    "tad": (lambda a: torch.take_along_dim(a, torch.tensor([[0], [1], [3]]), 1), X),
    "iadd": (lambda a, b: torch.index_add(a, 1, torch.tensor([0, 0, 2, 1]), b), X, Y),
    "icopy": (lambda a, b: torch.index_copy(a, 0, torch.tensor([2, 0]), b[:2]), X, Y),
    "msel": (lambda a: torch.masked_select(a, a > 0), X),
    "mscat": (lambda a, b: torch.masked_scatter(a, a > 0, b), X, Y),
    "sred_sum": (
        lambda a, b: torch.scatter_reduce(
            a, 1, torch.tensor([[0, 0, 1, 1]] * 3), b, "sum", include_self=False
        ),
        X,
        Y,
    ),
    "sred_mean": (lambda a, b: torch.scatter_reduce(a, 1, torch.tensor([[0, 0, 1, 1]] * 3), b, "mean"), X, Y),
    "sred_amax": (lambda a, b: torch.scatter_reduce(a, 1, torch.tensor([[0, 0, 1, 1]] * 3), b, "amax"), X, Y),
    "sred_prod": (lambda a, b: torch.scatter_reduce(a, 1, torch.tensor([[0, 0, 1, 1]] * 3), b, "prod"), X, Y),
    "atan2": (torch.atan2, X, Y),
    "hypot": (torch.hypot, X, Y),
    "fmod": (lambda a, b: torch.fmod(a, b + 3), X, Y),
    "fmax": (torch.fmax, X, Y),
    "copysign": (torch.copysign, X, Y),
    "logaddexp": (torch.logaddexp, X, Y),
    "logaddexp2": (torch.logaddexp2, X, Y),
    "xlogy": (lambda a, b: torch.xlogy(a, b.abs()), X, Y),
    "lerp": (lambda a, b: torch.lerp(a, b, 0.3), X, Y),
    "lerp_t": (lambda a, b, c: torch.lerp(a, b, c), X, Y, P),
    "addcmul": (lambda a, b: torch.addcmul(a, a, b, value=2), X, Y),
    "addcdiv": (lambda a, b: torch.addcdiv(a, a, b.abs() + 1), X, Y),
    "sinh": (torch.sinh, X),
    "cosh": (torch.cosh, X),
    "asinh": (torch.asinh, X),
    "acosh": (lambda a: torch.acosh(a.abs() + 1.5), X),
    "atanh": (torch.atanh, P),
    "asin": (torch.asin, P),
    "acos": (torch.acos, P),
    "atan": (torch.atan, X),
    "erfc": (torch.erfc, X),
    "erfinv": (torch.erfinv, P),
    "lgamma": (lambda a: torch.lgamma(a.abs() + 0.5), X),
    "digamma": (lambda a: torch.digamma(a.abs() + 0.5), X),
    "frac": (torch.frac, X),
    "float_power": (lambda a, b: torch.float_power(a.abs(), b), X, Y),
    "sgn": (torch.sgn, X),
    "nan_to_num": (torch.nan_to_num, X),
    "lse": (lambda a: torch.logsumexp(a, 1), X),
    "nansum": (torch.nansum, X),
    "nanmean": (lambda a: torch.nanmean(a, 0), X),
    "median": (torch.median, X),
    "median_d": (lambda a: torch.median(a, 1).values, X),
    "nanmedian": (lambda a: torch.nanmedian(a, 0).values, X),
    "quantile": (lambda a: torch.quantile(a, torch.tensor([0.3, 0.7], dtype=torch.float64), 1), X),
    "kth": (lambda a: torch.kthvalue(a, 2, 1).values, X),
    "mode": (lambda a: torch.mode(a.round(), 1).values, X),
    "cumprod": (lambda a: torch.cumprod(a, 1), X),
    "cummax": (lambda a: torch.cummax(a, 1).values, X),
    "cummin": (lambda a: torch.cummin(a, 0).values, X),
    "lcse": (lambda a: torch.logcumsumexp(a, 1), X),
    "aminmax": (lambda a: torch.aminmax(a, dim=0).max, X),
    "norm": (lambda a: torch.norm(a, 3, 1), X),
    "dist": (lambda a, b: torch.dist(a, b, 1.5), X, Y),
    "cdist": (lambda a, b: torch.cdist(a, b), X, Y),
    "diff": (lambda a: torch.diff(a, 2), X),
    "trace": (torch.trace, X),
    "vdot": (lambda a, b: torch.vdot(a[0], b[0]), X, Y),
    "inner": (torch.inner, X, Y),
    "outer": (lambda a, b: torch.outer(a[0], b[1]), X, Y),
    "addmm": (lambda a, b, c: torch.addmm(a[:, :3], b, c[:, :3], beta=0.5, alpha=2), X, Y, Y.T.copy()),
    "kron": (torch.kron, X, Y),
    "tensordot": (lambda a, b: torch.tensordot(a, b, ([0], [0])), X, Y),
    "einsum": (lambda a, b: torch.einsum("ij,kj->ik", a, b), X, Y),
    "cross": (lambda a, b: torch.cross(a[:, :3], b[:, :3], dim=1), X, Y),
    "det": (torch.linalg.det, M),
    "slogdet": (lambda a: torch.linalg.slogdet(a).logabsdet, M),
    "inv": (torch.linalg.inv, M),
    "solve": (torch.linalg.solve, M, X),
    "chol": (lambda a: torch.linalg.cholesky(a @ a.mT + torch.eye(3, dtype=torch.float64)), M),
    "eigh": (lambda a: torch.linalg.eigh(a + a.mT).eigenvalues, M),
    "eigh_v": (lambda a: torch.linalg.eigh(a + a.mT).eigenvectors.abs(), M),
    "svdvals": (torch.linalg.svdvals, X),
    "svd_u": (lambda a: torch.linalg.svd(a, full_matrices=False).U.abs(), X),
    "svd_vh": (lambda a: torch.linalg.svd(a, full_matrices=False).Vh.abs(), X),
    "pinv": (torch.linalg.pinv, X),
    "mexp": (torch.linalg.matrix_exp, M),
    "mnorm_nuc": (lambda a: torch.linalg.matrix_norm(a, "nuc"), X),
    "mnorm_2": (lambda a: torch.linalg.matrix_norm(a, 2), X),
    "vnorm": (lambda a: torch.linalg.vector_norm(a, 0.5, 1), X),
    "mpow": (lambda a: torch.linalg.matrix_power(a, -2), M),
    "cond": (torch.linalg.cond, M),
    "lstsq": (lambda a, b: torch.linalg.lstsq(a, b).solution, M, X),
    "eig": (lambda a: torch.linalg.eigvals(a).abs(), M),
    "qr": (lambda a: torch.linalg.qr(a).R, X.T.copy()),
    "qr_q": (lambda a: torch.linalg.qr(a).Q, X.T.copy()),
    "sp_erfcx": (torch.special.erfcx, X),
    "sp_ndtri": (torch.special.ndtri, P),
    "sp_logndtr": (torch.special.log_ndtr, X),
    "sp_i0": (torch.special.i0, X),
    "sp_i0e": (torch.special.i0e, X),
    "sp_i1": (torch.special.i1, X),
    "sp_i1e": (torch.special.i1e, X),
    "sp_sinc": (torch.special.sinc, X),
    "sp_entr": (torch.special.entr, P),
    "sp_logit": (torch.special.logit, P),
    "sp_ndtr": (torch.special.ndtr, X),
    "sp_xlog1py": (lambda a, b: torch.special.xlog1py(a, b.abs()), X, Y),
    "sp_mgl": (lambda a: torch.special.multigammaln(a.abs() + 2, 3), X),
    "sp_pg": (lambda a: torch.special.polygamma(2, a.abs() + 1), X),
    "sp_zeta": (lambda a: torch.special.zeta(torch.tensor(3.0, dtype=torch.float64), a.abs() + 1), X),
}
for k, (f, *a) in cases.items():
    run(k, f, *a)
Path(sys.argv[2]).write_bytes(pickle.dumps(res))
