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
        return (
            "T",
            str(o.dtype).split(".")[-1],
            np.array(o.detach().float().numpy() if "bfloat16" in str(o.dtype) else o.detach().numpy()),
        )
    return ("P", repr(o))


def run(name, fn):
    try:
        out = fn()
        res[name] = [cv(o) for o in out] if isinstance(out, (tuple, list)) else cv(out)
    except Exception as e:  # noqa: BLE001  an exception is a recorded outcome
        res[name] = ("E", "RuntimeError" if isinstance(e, RuntimeError) else type(e).__name__, str(e)[:60])


base = np.array([[-2.5, -1.0, 0.0], [0.5, 1.0, 3.0]])
dts = ["float16", "bfloat16", "float32", "float64", "int32", "int64", "uint8", "int8", "bool", "complex64"]


def mk(dt):
    d = getattr(torch, dt)
    if dt == "bool":
        return torch.tensor(base > 0)
    if dt in ("uint8",):
        return torch.tensor(np.abs(base).astype(np.int64)).to(d)
    return torch.tensor(base).to(d)


un = [
    "sinh",
    "cosh",
    "asinh",
    "atan",
    "asin",
    "erfc",
    "erfinv",
    "lgamma",
    "digamma",
    "frac",
    "nan_to_num",
    "signbit",
    "sgn",
    "isposinf",
    "logsumexp1",
    "nansum",
    "nanmean",
    "median",
    "cumprod0",
    "cummax0",
    "logcumsumexp0",
    "count_nonzero",
    "aminmax",
    "flip0",
    "roll",
    "rot90",
    "repeat",
    "tril",
    "diagonal",
    "unfold",
    "trace",
    "diff",
    "kthvalue",
    "mode",
    "unique",
    "histc",
    "norm",
    "angle",
    "diag",
    "msel",
    "take",
    "det",
]
for dt in dts:
    for n in un:

        def f(n=n, dt=dt):
            x = mk(dt)
            if n == "logsumexp1":
                return torch.logsumexp(x, 1)
            if n == "cumprod0":
                return torch.cumprod(x, 0)
            if n == "cummax0":
                return torch.cummax(x, 0)
            if n == "logcumsumexp0":
                return torch.logcumsumexp(x, 0)
            if n == "flip0":
                return torch.flip(x, [0])
            if n == "roll":
                return torch.roll(x, 1, 1)
            if n == "rot90":
                return torch.rot90(x)
            if n == "repeat":
                return x.repeat(2, 1)
            if n == "diagonal":
                return torch.diagonal(x)
            if n == "unfold":
                return x.unfold(1, 2, 1)
            if n == "kthvalue":
                return torch.kthvalue(x, 1, 1)
            if n == "mode":
                return torch.mode(x, 1)
            if n == "median":
                return torch.median(x, 1)
            if n == "aminmax":
                return torch.aminmax(x)
            if n == "msel":
                return torch.masked_select(x, torch.tensor([True, False, True]))
            if n == "take":
                return torch.take(x, torch.tensor([1, 5]))
            if n == "det":
                return torch.linalg.det(x[:, :2])
            if n == "diag":
                return torch.diag(x)
            return getattr(torch, n)(x)

        run(f"{n}/{dt}", f)
    for n in [
        "atan2",
        "hypot",
        "fmod",
        "copysign",
        "logaddexp",
        "xlogy",
        "float_power",
        "fmax",
        "lerp",
        "isclose",
        "addcmul",
        "outer",
        "inner",
        "kron",
        "cross",
        "einsum",
        "cdist",
        "dist",
        "searchsorted",
        "bucketize",
    ]:

        def g(n=n, dt=dt):
            x = mk(dt)
            y = x.flip(1) if hasattr(x, "flip") else x
            if n == "lerp":
                return torch.lerp(x, y, 0.25)
            if n == "addcmul":
                return torch.addcmul(x, x, y)
            if n == "outer":
                return torch.outer(x[0], y[1])
            if n == "cross":
                return torch.cross(x, y, dim=1)
            if n == "einsum":
                return torch.einsum("ij,ij->i", x, y)
            if n == "searchsorted":
                return torch.searchsorted(x[1].sort().values, y)
            if n == "bucketize":
                return torch.bucketize(x, y[1].sort().values)
            return getattr(torch, n)(x, y)

        run(f"{n}/{dt}", g)
Path(sys.argv[2]).write_bytes(pickle.dumps(res))
