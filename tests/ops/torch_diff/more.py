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
res = {}


def cv(o):
    if hasattr(o, "detach"):
        return ("T", str(o.dtype).split(".")[-1], np.array(o.detach().numpy()))
    return ("P", repr(o))


def run(name, fn):
    try:
        out = fn()
        res[name] = [cv(o) for o in out] if isinstance(out, (tuple, list)) else cv(out)
    except Exception as e:  # noqa: BLE001  an exception is a recorded outcome
        res[name] = ("E", "RuntimeError" if isinstance(e, RuntimeError) else type(e).__name__, str(e)[:60])


rng = np.random.default_rng(1)
X = torch.tensor(rng.normal(size=(3, 4)))
M = torch.tensor(rng.normal(size=(3, 3)))
SPD = M @ M.mT + torch.eye(3, dtype=torch.float64)
I = torch.tensor([[12, -18, 0], [7, 0, 5]])
cases = {
    "atleast": lambda: (
        torch.atleast_1d(torch.tensor(1.0)),
        torch.atleast_2d(torch.tensor([1, 2])),
        torch.atleast_3d(X),
    ),
    "atleast_multi": lambda: torch.atleast_3d(torch.tensor(1.0), torch.tensor([1.0, 2])),
    "block_diag": lambda: torch.block_diag(torch.tensor(1), torch.tensor([[2.0, 3]]), torch.tensor([4, 5])),
    "cart": lambda: torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4]), torch.tensor([5])),
    "comb": lambda: torch.combinations(torch.tensor([1, 2, 3, 4]), 3),
    "comb_rep": lambda: torch.combinations(torch.tensor([1.0, 2]), with_replacement=True),
    "comb0": lambda: torch.combinations(torch.tensor([1, 2]), 0),
    "comb_big": lambda: torch.combinations(torch.tensor([1, 2]), 3),
    "corrcoef": lambda: torch.corrcoef(X),
    "cov": lambda: torch.cov(X),
    "cov_w": lambda: torch.cov(
        X, fweights=torch.tensor([1, 2, 1, 3]), aweights=torch.tensor([0.5, 1.0, 2.0, 1.0])
    ),
    "cov_1d": lambda: torch.cov(X[0]),
    "cov_c0": lambda: torch.cov(X, correction=0),
    "ctrap": lambda: torch.cumulative_trapezoid(X),
    "ctrap_x": lambda: torch.cumulative_trapezoid(X, torch.tensor([0.0, 1.0, 3.0, 4.0])),
    "trap": lambda: torch.trapezoid(X, dx=0.5, dim=0),
    "trapz": lambda: torch.trapz(X, torch.tensor([0.0, 1.0, 3.0, 4.0])),
    "dscat": lambda: torch.diagonal_scatter(X, torch.ones(3, dtype=torch.float64), 1),
    "dscat_neg": lambda: torch.diagonal_scatter(X, torch.ones(2, dtype=torch.float64), -1),
    "sscat": lambda: torch.select_scatter(X, torch.zeros(3, dtype=torch.float64), 1, -1),
    "slscat": lambda: torch.slice_scatter(X, torch.zeros(3, 2, dtype=torch.float64), 1, 0, None, 2),
    "hsplit": lambda: torch.hsplit(X, 2),
    "hsplit_bad": lambda: torch.hsplit(X, 3),
    "vsplit": lambda: torch.vsplit(X, [1]),
    "dsplit_bad": lambda: torch.dsplit(X, 2),
    "hist": lambda: torch.histogram(X, 4),
    "hist_r": lambda: torch.histogram(X, 3, range=(-1.0, 1.0), density=True),
    "hist_e": lambda: torch.histogram(X, torch.tensor([-2.0, 0.0, 0.5, 3.0], dtype=torch.float64)),
    "hist_w": lambda: torch.histogram(X, 2, weight=X.abs()),
    "isin": lambda: torch.isin(I, torch.tensor([0, 5, 12])),
    "isin_inv": lambda: torch.isin(I, torch.tensor([0, 5]), invert=True),
    "isin_sc": lambda: torch.isin(I, 5),
    "isreal": lambda: torch.isreal(torch.tensor([1 + 0j, 1j])),
    "isreal_f": lambda: torch.isreal(X),
    "narrow_copy": lambda: torch.narrow_copy(X, 1, 1, 2),
    "ravel": lambda: torch.ravel(X.T),
    "renorm": lambda: torch.renorm(X, 2, 0, 1.0),
    "renorm1": lambda: torch.renorm(X, 1, 1, 0.5),
    "row_stack": lambda: torch.row_stack([X[0], X[1]]),
    "tril_i": lambda: torch.tril_indices(3, 4, 1),
    "triu_i": lambda: torch.triu_indices(4, 3, -1),
    "vander": lambda: torch.vander(torch.tensor([1, 2, 3])),
    "vander_inc": lambda: torch.vander(torch.tensor([1.0, 2]), 4, True),
    "clamp_min": lambda: torch.clamp_min(X, 0.1),
    "clamp_max": lambda: X.clamp_max(torch.tensor(0.2, dtype=torch.float64)),
    "deg2rad": lambda: torch.deg2rad(torch.tensor([180, 90])),
    "rad2deg": lambda: torch.rad2deg(X),
    "frexp": lambda: torch.frexp(torch.tensor([8.0, -0.3, 0.0, 1.0, 0.75, float("inf"), 1e-40])),
    "ldexp": lambda: torch.ldexp(torch.tensor([1.0, 3.0]), torch.tensor([2, -1])),
    "gcd": lambda: torch.gcd(I, torch.tensor([8, 12, 0])),
    "lcm": lambda: torch.lcm(I, torch.tensor([8, 12, 0])),
    "heav": lambda: torch.heaviside(torch.tensor([-1.0, 0, 2]), torch.tensor([0.5])),
    "nextafter": lambda: torch.nextafter(torch.tensor([1.0, 0.0]), torch.tensor([2.0, -1.0])),
    "sinc": lambda: torch.sinc(X),
    "logit": lambda: torch.logit(torch.tensor([0.2, 0.9])),
    "i0": lambda: torch.i0(X),
    "det": lambda: torch.det(M),
    "logdet": lambda: torch.logdet(M),
    "logdet_spd": lambda: torch.logdet(SPD),
    "slogdet": lambda: torch.slogdet(M),
    "inverse": lambda: torch.inverse(M),
    "pinverse": lambda: torch.pinverse(X),
    "mpow": lambda: torch.matrix_power(M, 3),
    "mexp": lambda: torch.matrix_exp(M),
    "chol": lambda: torch.cholesky(SPD),
    "cholU": lambda: torch.cholesky(SPD, upper=True),
    "svd": lambda: torch.svd(X)[1],
    "svd_V": lambda: torch.svd(X)[2].abs(),
    "qr": lambda: torch.qr(X.T)[1].abs(),
    "chol_solve": lambda: torch.cholesky_solve(X[:, :2], torch.linalg.cholesky(SPD)),
    "chol_solveU": lambda: torch.cholesky_solve(X[:, :2], torch.linalg.cholesky(SPD, upper=True), upper=True),
    "chol_inv": lambda: torch.cholesky_inverse(torch.linalg.cholesky(SPD)),
    "tri_solve": lambda: torch.triangular_solve(X[:, :2], M),
    "tri_solve_t": lambda: torch.triangular_solve(
        X[:, :2], M, upper=False, transpose=True, unitriangular=True
    ),
    "solve_tri": lambda: torch.linalg.solve_triangular(M, X, upper=True),
    "solve_tri_r": lambda: torch.linalg.solve_triangular(M, X.T, upper=False, left=False),
    "solve_ex": lambda: torch.linalg.solve_ex(M, X),
    "mdet": lambda: M.det(),
    "mslog": lambda: M.slogdet(),
    "minv": lambda: M.inverse(),
    "mchol": lambda: SPD.cholesky(),
    "swapdims": lambda: torch.swapdims(X, 0, 1),
    "moveaxis": lambda: torch.moveaxis(X, 0, 1),
}
for k, f in cases.items():
    run(k, f)
Path(sys.argv[2]).write_bytes(pickle.dumps(res))
