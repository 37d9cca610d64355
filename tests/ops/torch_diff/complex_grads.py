"""Differential cases (see compare.py): complex gradients, ``python THIS.py torch|ember OUT.pkl``."""

import pickle
import sys
from pathlib import Path

import numpy as np

mod = sys.argv[1]
if mod == "torch":
    import torch
else:
    import ember as torch
rng = np.random.default_rng(3)
Z = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
res = {}


def run(name, fn):
    z = torch.tensor(Z, dtype=torch.complex128, requires_grad=True)
    try:
        out = fn(z)
        w = torch.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=torch.float64)
        (out * w).sum().backward()
        res[name] = z.grad.detach().numpy().copy()
    except Exception as e:  # noqa: BLE001  an exception is a recorded outcome
        res[name] = ("E", type(e).__name__, str(e)[:80])


H = lambda z: z + z.mH


def _uvh(r):
    return r.U @ r.Vh


def _us(r):
    return r.U * r.S.unsqueeze(-2).to(r.U.dtype)


cases = {
    "det_abs": lambda z: torch.linalg.det(z).abs(),
    "inv_real": lambda z: torch.linalg.inv(z).real,
    "solve": lambda z: torch.linalg.solve(z, z[:, :1] * 1 + 1).imag,
    "eigvalsh": lambda z: torch.linalg.eigvalsh(H(z)),
    "eigh_vec": lambda z: torch.linalg.eigh(H(z)).eigenvectors.abs(),
    "svdvals": lambda z: torch.linalg.svdvals(z),
    "chol": lambda z: torch.linalg.cholesky(z @ z.mH + torch.eye(3, dtype=torch.complex128)).abs(),
    "mexp": lambda z: torch.linalg.matrix_exp(z).real,
    "slog": lambda z: torch.linalg.slogdet(z).logabsdet,
    "vnorm": lambda z: torch.linalg.vector_norm(z, 3),
    "mnorm": lambda z: torch.linalg.matrix_norm(z),
    "nuc": lambda z: torch.linalg.matrix_norm(z, "nuc"),
    "pinv": lambda z: torch.linalg.pinv(z).abs(),
    "angle": lambda z: torch.angle(z),
    "abs": lambda z: z.abs(),
    "real": lambda z: torch.view_as_real(z),
    "sgn": lambda z: torch.sgn(z).real,
    "lse": lambda z: torch.logsumexp(z, 1).real,
    "cumprod": lambda z: torch.cumprod(z, 1).imag,
    "eigvals": lambda z: torch.linalg.eigvals(z).abs(),
    "svd_U": lambda z: torch.linalg.svd(z).U.abs(),
    "svd_UVh": lambda z: _uvh(torch.linalg.svd(z)).real,
    "svd_UVh_i": lambda z: _uvh(torch.linalg.svd(z)).imag,
    "svd_Vh": lambda z: torch.linalg.svd(z).Vh.abs(),
    "svd_US": lambda z: _us(torch.linalg.svd(z)).abs(),
    "qr": lambda z: torch.linalg.qr(z).R.abs(),
    "einsum": lambda z: torch.einsum("ij,jk->ik", z, z.conj()).real,
    "vdot": lambda z: torch.vdot(z[0], z[1]).real,
}
for k, f in cases.items():
    run(k, f)
Path(sys.argv[2]).write_bytes(pickle.dumps(res))
