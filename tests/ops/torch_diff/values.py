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


def run(name, fn):
    try:
        out = fn()
        if isinstance(out, (tuple, list)):
            out = [o for o in out]

        def cv(o):
            if hasattr(o, "detach"):
                return (
                    "T",
                    str(o.dtype).replace("torch.", "").replace("ember.", ""),
                    np.array(o.detach().cpu().numpy()),
                )
            return ("P", repr(o))

        res[name] = [cv(o) for o in out] if isinstance(out, list) else cv(out)
    except Exception as e:  # noqa: BLE001  an exception is a recorded outcome
        res[name] = (
            "E",
            type(e).__name__ if not issubclass(type(e), RuntimeError) else "RuntimeError",
            str(e)[:80],
        )


f32 = lambda *a: torch.tensor(np.array(a, dtype=np.float32)) if len(a) > 1 else torch.tensor(np.float32(a[0]))
A = torch.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10)
I = torch.tensor(np.arange(12).reshape(3, 4) - 5)
B = torch.tensor(np.array([True, False, True]))
E = torch.zeros(0, 3)
S = torch.tensor(2.5)
V = torch.tensor([-3.0, -0.5, 0.0, 0.7, 2.0, float("nan"), float("inf")])
W = torch.tensor([1.5, -2.0, 0.0, 3.0, -0.0, 1.0, 2.0])
# shape ops
for n, f in {
    "flip": lambda: torch.flip(A, [0, 2]),
    "flip_int": lambda: I.flip(0),
    "flip0d": lambda: torch.flip(S, []),
    "roll": lambda: torch.roll(A, 3),
    "roll2": lambda: torch.roll(I, (1, -2), (0, 1)),
    "roll_empty": lambda: torch.roll(E, 1, 0),
    "rot90": lambda: torch.rot90(I, -3),
    "rot90_3d": lambda: torch.rot90(A, 2, [2, 0]),
    "repeat": lambda: I.repeat(2, 1, 3),
    "repeat0": lambda: S.repeat(3),
    "tile": lambda: torch.tile(I, (2,)),
    "rint": lambda: torch.repeat_interleave(I, 2),
    "rint_t": lambda: torch.repeat_interleave(I, torch.tensor([1, 0, 2]), dim=0),
    "rint_only": lambda: torch.repeat_interleave(torch.tensor([1, 0, 3])),
    "rint_0d": lambda: torch.repeat_interleave(S, 2),
    "tsplit": lambda: torch.tensor_split(A, 3, 2),
    "tsplit_idx": lambda: torch.tensor_split(I, (1, -1), 1),
    "tsplit_t": lambda: torch.tensor_split(I, torch.tensor(2)),
    "dstack": lambda: torch.dstack([I, I]),
    "cstack": lambda: torch.column_stack([torch.tensor([1, 2]), torch.tensor([[3, 4], [5, 6]])]),
    "diagonal": lambda: torch.diagonal(A, 1, 2, 1),
    "diag1": lambda: torch.diag(torch.tensor([1, 2]), 2),
    "diag2": lambda: torch.diag(I, -1),
    "diag_embed": lambda: torch.diag_embed(I, -1, 0, 2),
    "tril": lambda: torch.tril(A, -1),
    "triu_b": lambda: torch.triu(torch.ones(3, 3, dtype=torch.bool)),
    "unfold": lambda: A.unfold(1, 2, 1),
    "unfold0d": lambda: S.unfold(0, 1, 1),
    "unfold_empty": lambda: torch.arange(3).unfold(0, 3, 5),
    "mesh": lambda: torch.meshgrid(torch.tensor([1, 2]), torch.tensor([3, 4, 5]), indexing="xy"),
    "take": lambda: torch.take(I, torch.tensor([[0, -1]])),
    "tad": lambda: torch.take_along_dim(I, torch.tensor([[0], [1], [2]]), 1),
    "tad_none": lambda: torch.take_along_dim(I, torch.tensor([3, 1])),
    "iadd": lambda: torch.index_add(I, 1, torch.tensor([0, 0]), torch.ones(3, 2, dtype=torch.int64), alpha=3),
    "icopy": lambda: torch.index_copy(I, 0, torch.tensor([2, 0]), torch.zeros(2, 4, dtype=torch.int64)),
    "ifill": lambda: torch.index_fill(I, 1, torch.tensor([1]), -7),
    "ifill_t": lambda: I.index_fill(0, torch.tensor([0]), torch.tensor(9)),
    "msel": lambda: torch.masked_select(I, I > 2),
    "msel_b": lambda: torch.masked_select(torch.tensor([1, 2, 3]), torch.tensor([[True], [False]])),
    "mscat": lambda: torch.masked_scatter(I, I > 3, torch.arange(100, 112)),
    "argwhere": lambda: torch.argwhere(I > 4),
    "sred_amax": lambda: torch.scatter_reduce(
        I,
        1,
        torch.tensor([[0, 0], [1, 1], [3, 3]]),
        torch.tensor([[9, -9], [1, 2], [7, 8]]),
        "amax",
        include_self=False,
    ),
    "sred_mean_int": lambda: torch.scatter_reduce(
        I, 1, torch.tensor([[0, 0], [1, 1], [3, 3]]), torch.tensor([[9, -9], [1, 2], [7, 8]]), "mean"
    ),
    "sred_prod": lambda: torch.scatter_reduce(
        A[0], 0, torch.tensor([[0, 1, 0, 1]]), A[1, :1] * 0 + 2, "prod"
    ),
    "smul": lambda: I.scatter(0, torch.tensor([[0, 1]]), 2, reduce="multiply"),
    "smul_t": lambda: I.scatter(1, torch.tensor([[0, 0]]), torch.tensor([[3, 5]]), reduce="multiply"),
}.items():
    run(n, f)
# math
for n in [
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "asin",
    "acos",
    "atan",
    "erfc",
    "erfinv",
    "lgamma",
    "digamma",
    "frac",
    "nan_to_num",
    "isneginf",
    "isposinf",
    "signbit",
    "sgn",
]:
    run(n, lambda n=n: getattr(torch, n)(V))
    run(n + "_int", lambda n=n: getattr(torch, n)(torch.tensor([1, -2, 0])))
    run(n + "_0d", lambda n=n: getattr(torch, n)(S))
for n in [
    "atan2",
    "hypot",
    "fmod",
    "float_power",
    "fmax",
    "fmin",
    "copysign",
    "logaddexp",
    "logaddexp2",
    "xlogy",
    "remainder",
]:
    run(n, lambda n=n: getattr(torch, n)(V, W))
    run(n + "_int", lambda n=n: getattr(torch, n)(torch.tensor([7, -7, 3]), torch.tensor([2, 3, -2])))
    run(n + "_sc", lambda n=n: getattr(torch, n)(V, 2))
run("lerp", lambda: torch.lerp(V, W, 0.3))
run("lerp_t", lambda: torch.lerp(V, W, W))
run("addcmul", lambda: torch.addcmul(V, W, W, value=2))
run("addcdiv", lambda: torch.addcdiv(V, W, W + 1, value=0.5))
run("shl", lambda: torch.tensor([1, -3, 5], dtype=torch.int8) << torch.tensor([1, 2, 7], dtype=torch.int8))
run("shr", lambda: torch.tensor([-128, 64, 5], dtype=torch.int8) >> 2)
run("shl_u8", lambda: torch.tensor([200], dtype=torch.uint8) << 1)
run("shr_big", lambda: torch.tensor([-5, 5]) >> 70)
run("isclose", lambda: torch.isclose(V, V + 1e-6))
run("isclose_int", lambda: torch.isclose(I, I + 1))
run("allclose", lambda: torch.allclose(V, V))
run("equal", lambda: torch.equal(I, I))
run("n2n", lambda: torch.nan_to_num(V, nan=1.0, posinf=2.0))
run("n2n_f64", lambda: torch.nan_to_num(V.double()))
run("sgn_c", lambda: torch.sgn(torch.tensor([3 + 4j, 0j])))
# reductions
for n, f in {
    "lse": lambda: torch.logsumexp(A, 1),
    "lse_int": lambda: torch.logsumexp(I, 0),
    "lse_empty": lambda: torch.logsumexp(E, 0),
    "lse_0d": lambda: torch.logsumexp(S, 0),
    "nansum": lambda: torch.nansum(V),
    "nanmean": lambda: torch.nanmean(V),
    "nansum_int": lambda: torch.nansum(I, 1),
    "median": lambda: torch.median(V),
    "median_int": lambda: torch.median(I),
    "median_dim": lambda: torch.median(I, 0),
    "median_empty": lambda: torch.median(E),
    "median_0d": lambda: torch.median(S, 0),
    "nanmedian": lambda: torch.nanmedian(V),
    "nanmedian_d": lambda: torch.nanmedian(torch.stack([V, W]), 1),
    "mode": lambda: torch.mode(torch.tensor([[1, 2, 2, 1], [3, 3, 1, 1]])),
    "mode_f": lambda: torch.mode(W),
    "quantile": lambda: torch.quantile(A, torch.tensor([0.25, 0.75]), 1, keepdim=True),
    "quantile_nan": lambda: torch.quantile(V, 0.5),
    "nanquantile": lambda: torch.nanquantile(V, torch.tensor([0.1, 0.9])),
    "quantile_f64": lambda: torch.quantile(A.double(), 0.5, dim=0, interpolation="nearest"),
    "kth": lambda: torch.kthvalue(I, 2, 0, True),
    "cumprod": lambda: torch.cumprod(I, 1),
    "cumprod_b": lambda: torch.cumprod(B, 0),
    "cummax": lambda: torch.cummax(I, 0),
    "cummin": lambda: torch.cummin(W, 0),
    "lcse": lambda: torch.logcumsumexp(A, 2),
    "unique": lambda: torch.unique(torch.tensor([3, 1, 2, 1]), return_inverse=True, return_counts=True),
    "unique_f": lambda: torch.unique(torch.tensor([2.0, float("nan"), 1.0, 2.0])),
    "unique_dim": lambda: torch.unique(
        torch.tensor([[1, 2], [1, 2], [0, 1]]), dim=0, return_inverse=True, return_counts=True
    ),
    "uc": lambda: torch.unique_consecutive(
        torch.tensor([1, 1, 2, 2, 3, 1]), return_inverse=True, return_counts=True
    ),
    "bincount": lambda: torch.bincount(torch.tensor([1, 1, 4]), minlength=7),
    "histc": lambda: torch.histc(A, 5),
    "histc_r": lambda: torch.histc(A, 4, -5, 5),
    "cnz": lambda: torch.count_nonzero(I, (0, 1)),
    "aminmax": lambda: torch.aminmax(I),
    "aminmax_d": lambda: torch.aminmax(A, dim=1, keepdim=True),
    "norm": lambda: torch.norm(A),
    "norm_p": lambda: torch.norm(A, 3, 1),
    "norm_inf": lambda: torch.norm(A, float("inf")),
    "norm_nuc": lambda: torch.norm(A[0], "nuc"),
    "dist": lambda: torch.dist(A[0], A[1], 1),
    "cdist": lambda: torch.cdist(A, A + 1),
    "diff": lambda: torch.diff(I, 1, 0),
    "diff2": lambda: torch.diff(A, 2),
    "trace": lambda: torch.trace(I),
    "ss": lambda: torch.searchsorted(torch.tensor([1, 2, 2, 3]), torch.tensor([2, 2.5])),
    "bucket": lambda: torch.bucketize(torch.tensor([[0.5, 2.0]]), torch.tensor([1.0, 2.0]), right=True),
    # products
    "vdot": lambda: torch.vdot(torch.tensor([1 + 1j, 2j]), torch.tensor([3 + 0j, 1 - 1j])),
    "inner": lambda: torch.inner(A, A[0]),
    "outer": lambda: torch.outer(torch.tensor([1, 2]), torch.tensor([3, 4, 5])),
    "addmm": lambda: torch.addmm(A[0, 0], A[0], A[1].T, beta=2, alpha=0.5),
    "addmv": lambda: torch.addmv(A[0, :, 0], A[0], A[1, 0]),
    "baddbmm": lambda: torch.baddbmm(A[:, :, :3], A, A.transpose(1, 2)[:, :, :3] + 0),
    "tensordot": lambda: torch.tensordot(A, A, ([0, 1], [0, 1])),
    "kron": lambda: torch.kron(I[:2, :2], torch.tensor([[1, 10]])),
    "einsum": lambda: torch.einsum("bij,bkj->bik", A, A),
    "einsum_e": lambda: torch.einsum("...j,j->...", A, A[0, 0]),
    "cross": lambda: torch.cross(A[:, :, :3], A[:, :, 1:], dim=2),
    "cross_nodim": lambda: torch.cross(I[:3], I[:3] * 2),
    "linalg_cross": lambda: torch.linalg.cross(A[0, :, :3], A[1, :, :3]),
}.items():
    run(n, f)
M = torch.tensor(np.array([[4.0, 1, 2], [1, 5, 3], [2, 3, 6]]))
R = torch.tensor(np.array([[1.0, 2], [3, 4], [5, 7]]))
for n, f in {
    "det": lambda: torch.linalg.det(M),
    "slogdet": lambda: torch.linalg.slogdet(-M),
    "inv": lambda: torch.linalg.inv(M),
    "solve": lambda: torch.linalg.solve(M, R),
    "solve_v": lambda: torch.linalg.solve(M, R[:, 0]),
    "lstsq": lambda: torch.linalg.lstsq(R, M[:, :1]).solution,
    "chol": lambda: torch.linalg.cholesky(M),
    "cholU": lambda: torch.linalg.cholesky(M, upper=True),
    "eigvalsh": lambda: torch.linalg.eigvalsh(M),
    "svdvals": lambda: torch.linalg.svdvals(R),
    "pinv": lambda: torch.linalg.pinv(R),
    "rank": lambda: torch.linalg.matrix_rank(R),
    "mpow": lambda: torch.linalg.matrix_power(M, -2),
    "mexp": lambda: torch.linalg.matrix_exp(M / 10),
    "cond": lambda: torch.linalg.cond(M),
    "cond_fro": lambda: torch.linalg.cond(M, "fro"),
    "mnorm": lambda: torch.linalg.matrix_norm(R, -2),
    "vnorm": lambda: torch.linalg.vector_norm(R, 0.5),
    "norm2": lambda: torch.linalg.norm(R),
    "norm_ord": lambda: torch.linalg.norm(R, 1),
    "vander": lambda: torch.linalg.vander(torch.tensor([1, 2, 3])),
    "inv_sing": lambda: torch.linalg.inv(torch.zeros(2, 2)),
    "det_int": lambda: torch.linalg.det(torch.eye(2, dtype=torch.int64)),
    "inv_rect": lambda: torch.linalg.inv(R),
    "chol_fail": lambda: torch.linalg.cholesky(-M),
    "tinv": lambda: torch.linalg.tensorinv(torch.eye(6).reshape(6, 2, 3), 1),
    "hprod": lambda: torch.linalg.householder_product(R, torch.tensor([1.0, 0.5])),
    "multi_dot": lambda: torch.linalg.multi_dot([R.T, M, R]),
    "eig_f": lambda: torch.linalg.eigvals(M),
    "sp_erfcx": lambda: torch.special.erfcx(V),
    "sp_ndtri": lambda: torch.special.ndtri(torch.tensor([0.1, 0.5])),
    "sp_logndtr": lambda: torch.special.log_ndtr(V),
    "sp_i0": lambda: torch.special.i0(V),
    "sp_i1e": lambda: torch.special.i1e(V),
    "sp_sinc": lambda: torch.special.sinc(V),
    "sp_entr": lambda: torch.special.entr(V),
    "sp_logit": lambda: torch.special.logit(torch.tensor([0.0, 0.3, 1.0]), 1e-3),
    "sp_xlog1py": lambda: torch.special.xlog1py(V, W),
    "sp_zeta": lambda: torch.special.zeta(torch.tensor([2.0, 3.0]), 1.0),
    "sp_mgl": lambda: torch.special.multigammaln(torch.tensor([2.0, 3.5]), 2),
    "sp_j0": lambda: torch.special.bessel_j0(V),
    "sp_j1": lambda: torch.special.bessel_j1(V),
    "sp_pg": lambda: torch.special.polygamma(2, torch.tensor([0.5, 3.0])),
    "sp_int": lambda: torch.special.i0(torch.tensor([1, 2])),
    "sp_round": lambda: torch.special.round(V),
    "c_real": lambda: torch.tensor([1 + 2j]).real,
    "c_vr": lambda: torch.view_as_real(torch.tensor([1 + 2j, 3j])),
    "c_polar": lambda: torch.polar(torch.tensor([2.0]), torch.tensor([0.5])),
    "c_angle_int": lambda: torch.angle(torch.tensor([-1, 2])),
    "c_complex64": lambda: torch.complex(torch.tensor([1.0]), torch.tensor([2.0])),
}.items():
    run(n, f)
Path(sys.argv[2]).write_bytes(pickle.dumps(res))
