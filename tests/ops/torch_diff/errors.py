"""Differential cases (see compare.py): bad input must raise PyTorch's exception type."""

import pickle
import sys
from pathlib import Path

mod = sys.argv[1]
if mod == "torch":
    import torch
else:
    import ember as torch

res = {}


def run(name, fn):
    try:
        fn()
        res[name] = ("P", "no error")
    except Exception as e:  # noqa: BLE001  an exception is a recorded outcome
        kind = (
            "RuntimeError"
            if isinstance(e, RuntimeError) and not isinstance(e, NotImplementedError)
            else type(e).__name__
        )
        res[name] = ("E", kind, "")


x = torch.arange(12.0).reshape(3, 4)
i = torch.tensor([0, 1])
cases = {
    "flip_dup": lambda: torch.flip(x, [0, 0]),
    "flip_dim": lambda: torch.flip(x, [2]),
    "roll_mismatch": lambda: torch.roll(x, (1, 2), (0,)),
    "rot90_dims": lambda: torch.rot90(x, 1, (0,)),
    "repeat_few": lambda: x.repeat(2),
    "repeat_neg": lambda: x.repeat(-1, 1),
    "rint_neg": lambda: torch.repeat_interleave(x, -1),
    "rint_len": lambda: torch.repeat_interleave(x, torch.tensor([1, 2]), 0),
    "tsplit_0d": lambda: torch.tensor_split(torch.tensor(1.0), 2),
    "tsplit_zero": lambda: torch.tensor_split(x, 0),
    "diagonal_same": lambda: torch.diagonal(x, 0, 1, 1),
    "diagonal_1d": lambda: torch.diagonal(torch.ones(3)),
    "diag_3d": lambda: torch.diag(torch.ones(2, 2, 2)),
    "tril_1d": lambda: torch.tril(torch.ones(3)),
    "unfold_big": lambda: x.unfold(1, 5, 1),
    "unfold_step": lambda: x.unfold(1, 2, 0),
    "meshgrid_2d": lambda: torch.meshgrid(x, x, indexing="ij"),
    "meshgrid_idx": lambda: torch.meshgrid(i, i, indexing="xx"),
    "take_oob": lambda: torch.take(x, torch.tensor([12])),
    "take_float": lambda: torch.take(x, torch.tensor([1.0])),
    "tad_ndim": lambda: torch.take_along_dim(x, i, 1),
    "iadd_oob": lambda: torch.index_add(x, 0, torch.tensor([3]), torch.ones(1, 4)),
    "iadd_2d": lambda: torch.index_add(x, 0, torch.tensor([[0]]), torch.ones(1, 4)),
    "iadd_float_idx": lambda: torch.index_add(x, 0, torch.tensor([0.0]), torch.ones(1, 4)),
    "icopy_dtype": lambda: torch.index_copy(x, 0, torch.tensor([0]), torch.ones(1, 4, dtype=torch.float64)),
    "ifill_vec": lambda: torch.index_fill(x, 0, i, torch.tensor([1.0, 2.0])),
    "msel_mask": lambda: torch.masked_select(x, torch.ones(3, 4)),
    "mscat_short": lambda: torch.masked_scatter(x, x > 0, torch.ones(3)),
    "sred_bad": lambda: torch.scatter_reduce(x, 0, i.reshape(1, 2), x[:1, :2], "max"),
    "sred_idx_dtype": lambda: torch.scatter_reduce(
        x, 0, torch.tensor([[0, 1]], dtype=torch.int32), x[:1, :2], "sum"
    ),
    "sred_oob": lambda: torch.scatter_reduce(x, 0, torch.tensor([[5, 1]]), x[:1, :2], "amax"),
    "atan2_scalar": lambda: torch.atan2(x, 1),
    "hypot_int": lambda: torch.hypot(i, i),
    "shift_float": lambda: x << 1,
    "isclose_dtype": lambda: torch.isclose(x, x.double()),
    "isclose_rtol": lambda: torch.isclose(x, x, rtol=-1.0),
    "frac_int": lambda: torch.frac(i),
    "polygamma_neg": lambda: torch.polygamma(-1, x),
    "lerp_dtype": lambda: torch.lerp(x, x.double(), 0.5),
    "addcdiv_int": lambda: torch.addcdiv(i, i, i),
    "quantile_q": lambda: torch.quantile(x, 1.5),
    "quantile_int": lambda: torch.quantile(i, 0.5),
    "quantile_interp": lambda: torch.quantile(x, 0.5, interpolation="bad"),
    "kth_oob": lambda: torch.kthvalue(x, 5, 1),
    "median_empty_dim": lambda: torch.median(torch.zeros(0, 3), 0),
    "mode_empty": lambda: torch.mode(torch.zeros(0, 3), 0),
    "nanmean_int": lambda: torch.nanmean(i),
    "bincount_neg": lambda: torch.bincount(torch.tensor([-1])),
    "bincount_2d": lambda: torch.bincount(torch.tensor([[1]])),
    "bincount_float": lambda: torch.bincount(torch.tensor([1.0])),
    "histc_int": lambda: torch.histc(i),
    "histc_bins": lambda: torch.histc(x, 0),
    "histc_range": lambda: torch.histc(x, 3, 5, 1),
    "ss_side": lambda: torch.searchsorted(i, i, side="up"),
    "ss_shape": lambda: torch.searchsorted(x, torch.ones(2, 1)),
    "bucket_2d": lambda: torch.bucketize(i, x),
    "cdist_cols": lambda: torch.cdist(x, torch.ones(2, 3)),
    "cdist_1d": lambda: torch.cdist(torch.ones(3), torch.ones(3)),
    "diff_0d": lambda: torch.diff(torch.tensor(1.0)),
    "diff_neg": lambda: torch.diff(x, -1),
    "trace_3d": lambda: torch.trace(torch.ones(2, 2, 2)),
    "vdot_2d": lambda: torch.vdot(x, x),
    "inner_mismatch": lambda: torch.inner(x, torch.ones(3)),
    "outer_2d": lambda: torch.outer(x, x),
    "addmm_1d": lambda: torch.addmm(x, torch.ones(3), x),
    "tensordot_mismatch": lambda: torch.tensordot(x, x, ([0], [0, 1])),
    "tensordot_size": lambda: torch.tensordot(x, x, ([1], [0])),
    "einsum_ops": lambda: torch.einsum("ij,jk->ik", x),
    "einsum_dims": lambda: torch.einsum("ijk->i", x),
    "einsum_out": lambda: torch.einsum("ij->k", x),
    "cross_size": lambda: torch.cross(x, x, dim=1),
    "det_int": lambda: torch.linalg.det(torch.eye(2, dtype=torch.int64)),
    "det_1d": lambda: torch.linalg.det(torch.ones(3)),
    "inv_rect": lambda: torch.linalg.inv(x),
    "inv_sing": lambda: torch.linalg.inv(torch.zeros(2, 2)),
    "solve_shape": lambda: torch.linalg.solve(torch.eye(3), torch.ones(2, 1)),
    "solve_dtype": lambda: torch.linalg.solve(torch.eye(2), torch.ones(2, dtype=torch.float64)),
    "chol_fail": lambda: torch.linalg.cholesky(-torch.eye(2)),
    "qr_mode": lambda: torch.linalg.qr(x, mode="full"),
    "eigh_uplo": lambda: torch.linalg.eigh(torch.eye(2), UPLO="X"),
    "mnorm_ord": lambda: torch.linalg.matrix_norm(x, 3),
    "mnorm_1d": lambda: torch.linalg.matrix_norm(torch.ones(3)),
    "vnorm_int": lambda: torch.linalg.vector_norm(i),
    "mpow_rect": lambda: torch.linalg.matrix_power(x, 2),
    "multi_dot_one": lambda: torch.linalg.multi_dot([x]),
    "hprod_shape": lambda: torch.linalg.householder_product(x, torch.ones(2)),
    "lstsq_driver": lambda: torch.linalg.lstsq(x, x, driver="bad"),
    "tinv_shape": lambda: torch.linalg.tensorinv(torch.ones(2, 3), 1),
    "complex_dtype": lambda: torch.complex(torch.ones(1), torch.ones(1, dtype=torch.float64)),
    "complex_int": lambda: torch.complex(i, i),
    "vr_real": lambda: torch.view_as_real(x),
    "vc_shape": lambda: torch.view_as_complex(torch.ones(3)),
    "imag_real": lambda: x.imag,
    "mgl_small": lambda: torch.special.multigammaln(torch.tensor([0.5]), 3),
    "gcd_float": lambda: torch.gcd(x, x),
    "heaviside_dtype": lambda: torch.heaviside(x, torch.tensor([1.0], dtype=torch.float64)),
    "hsplit_uneven": lambda: torch.hsplit(x, 3),
    "vsplit_1d": lambda: torch.vsplit(torch.ones(3), 1),
    "comb_2d": lambda: torch.combinations(x),
    "block_diag_3d": lambda: torch.block_diag(torch.ones(1, 1, 1)),
    "cov_3d": lambda: torch.cov(torch.ones(2, 2, 2)),
    "renorm_p": lambda: torch.renorm(x, -1, 0, 1.0),
    "unravel_float": lambda: torch.unravel_index(torch.tensor([1.0]), (3, 4)),
    "unravel_oob": lambda: torch.unravel_index(torch.tensor([12]), (3, 4)),
    "pdist_3d": lambda: torch.pdist(torch.ones(2, 2, 2)),
    "put_oob": lambda: torch.put(x, torch.tensor([12]), torch.tensor([1.0])),
    "gradient_small": lambda: torch.gradient(torch.ones(1, 3)),
    "gradient_order": lambda: torch.gradient(x, edge_order=3),
    "is_nonzero_many": lambda: torch.is_nonzero(x),
    "lu_rank": lambda: torch.linalg.lu_factor(torch.ones(3)),
}
for k, f in cases.items():
    run(k, f)
Path(sys.argv[2]).write_bytes(pickle.dumps(res))
