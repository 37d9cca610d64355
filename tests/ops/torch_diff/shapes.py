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


base = np.arange(20, dtype=np.float32).reshape(4, 5) * 0.37 - 3
inputs = {
    "nc": lambda: torch.tensor(base.T.copy()).T,  # (4,5) non-contiguous
    "slice": lambda: torch.tensor(np.arange(40, dtype=np.float32).reshape(4, 10) * 0.37 - 3)[:, ::2],
    "empty0": lambda: torch.zeros(0, 5),
    "empty1": lambda: torch.zeros(4, 0),
    "one": lambda: torch.ones(1, 1) * 0.3,
}
ops = {
    "flip": lambda x: torch.flip(x, [0, 1]),
    "roll": lambda x: torch.roll(x, 2, 1),
    "rot90": lambda x: torch.rot90(x),
    "repeat": lambda x: x.repeat(2, 2),
    "rint": lambda x: x.repeat_interleave(2, 1),
    "tile": lambda x: torch.tile(x, (2,)),
    "tsplit": lambda x: torch.tensor_split(x, 3, 1),
    "diag": lambda x: torch.diagonal(x, 1),
    "diag_embed": lambda x: torch.diag_embed(x),
    "tril": lambda x: torch.tril(x, 1),
    "unfold": lambda x: x.unfold(0, 1, 2),
    "take": lambda x: torch.take(x, torch.tensor([], dtype=torch.int64)),
    "msel": lambda x: torch.masked_select(x, x > 0),
    "argwhere": lambda x: torch.argwhere(x > 0),
    "cumprod": lambda x: torch.cumprod(x, 1),
    "cummax": lambda x: torch.cummax(x, 0),
    "lcse": lambda x: torch.logcumsumexp(x, 1),
    "lse": lambda x: torch.logsumexp(x, 1),
    "lse0": lambda x: torch.logsumexp(x, 0),
    "nansum": lambda x: torch.nansum(x, 0),
    "nanmean": lambda x: torch.nanmean(x, 1),
    "median": lambda x: torch.median(x),
    "median_d": lambda x: torch.median(x, 0),
    "kth": lambda x: torch.kthvalue(x, 1, 0),
    "mode": lambda x: torch.mode(x, 0),
    "quantile": lambda x: torch.quantile(x, 0.4, 1),
    "unique": lambda x: torch.unique(x, return_counts=True),
    "bincount": lambda x: torch.bincount(x.abs().long().reshape(-1)),
    "histc": lambda x: torch.histc(x, 3),
    "cnz": lambda x: torch.count_nonzero(x, 1),
    "aminmax": lambda x: torch.aminmax(x, dim=1),
    "norm": lambda x: torch.norm(x),
    "norm_d": lambda x: torch.norm(x, 1, 1),
    "cdist": lambda x: torch.cdist(x, x),
    "diff": lambda x: torch.diff(x),
    "ss": lambda x: torch.searchsorted(torch.tensor([0.0, 1.0]), x),
    "einsum": lambda x: torch.einsum("ij,kj->ik", x, x),
    "tensordot": lambda x: torch.tensordot(x, x, ([1], [1])),
    "kron": lambda x: torch.kron(x, x[:1]),
    "outer": lambda x: torch.outer(x.reshape(-1), x[0]),
    "addmm": lambda x: torch.addmm(torch.zeros(1), x, x.T),
    "inner": lambda x: torch.inner(x, x),
    "atan2": lambda x: torch.atan2(x, x.flip(0)),
    "asinh": lambda x: torch.asinh(x),
    "erfinv": lambda x: torch.erfinv(x / 10),
    "lgamma": lambda x: torch.lgamma(x),
    "pinv": lambda x: torch.linalg.pinv(x),
    "vnorm": lambda x: torch.linalg.vector_norm(x, 3, 1),
    "mnorm": lambda x: torch.linalg.matrix_norm(x),
    "svdvals": lambda x: torch.linalg.svdvals(x),
    "mrank": lambda x: torch.linalg.matrix_rank(x),
    "qrR": lambda x: torch.linalg.qr(x)[1].abs(),
    "cov": lambda x: torch.cov(x),
    "hist": lambda x: torch.histogram(x, 3),
    "isin": lambda x: torch.isin(x, x[:1]),
    "vr": lambda x: torch.view_as_real(x.to(torch.complex64)),
    "angle": lambda x: torch.angle(x),
    "trap": lambda x: torch.trapezoid(x),
    "sred": lambda x: torch.scatter_reduce(x, 1, torch.zeros(x.shape, dtype=torch.int64), x, "amax"),
    "iadd": lambda x: torch.index_add(x, 0, torch.zeros(x.shape[0], dtype=torch.int64), x),
    "special_i0e": lambda x: torch.special.i0e(x),
    "special_ndtr": lambda x: torch.special.ndtr(x),
}
for iname, mk in inputs.items():
    for oname, f in ops.items():
        run(f"{oname}/{iname}", lambda f=f, mk=mk: f(mk()))
Path(sys.argv[2]).write_bytes(pickle.dumps(res))
