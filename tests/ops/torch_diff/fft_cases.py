"""Differential cases (see compare.py): ember.fft, ``python THIS.py torch|ember OUT.pkl``."""

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
X = rng.normal(size=(3, 10)).astype(np.float32)
res = {}


def run(name, fn):
    try:
        out = fn()
        res[name] = ("T", str(out.dtype).split(".")[-1], np.array(out.resolve_conj().detach().numpy()))
    except Exception as e:  # noqa: BLE001  an exception is a recorded outcome
        res[name] = ("E", type(e).__name__, str(e)[:60])


def grad_of(fn):
    a = torch.tensor(X.astype(np.float64), requires_grad=True)
    fn(a).sum().backward()
    return a.grad


x = torch.tensor(X)
fft = torch.fft
cases = {
    "fft": lambda: fft.fft(x),
    "fft_n": lambda: fft.fft(x, n=7, dim=0),
    "ifft_ortho": lambda: fft.ifft(x, norm="ortho"),
    "rfft": lambda: fft.rfft(x, n=6),
    "irfft": lambda: fft.irfft(fft.rfft(x)),
    "irfft_n": lambda: fft.irfft(fft.rfft(x), n=9, norm="forward"),
    "hfft": lambda: fft.hfft(fft.rfft(x)),
    "ihfft": lambda: fft.ihfft(x),
    "fft2": lambda: fft.fft2(x),
    "ifftn_s": lambda: fft.ifftn(x, s=(2, 4)),
    "rfftn": lambda: fft.rfftn(x),
    "irfft2": lambda: fft.irfft2(fft.rfft2(x), s=(3, 10)),
    "fft_int": lambda: fft.fft(torch.tensor([1, 2, 3])),
    "fft_f64": lambda: fft.fft(x.double()),
    "fftfreq": lambda: fft.fftfreq(7, 0.25),
    "rfftfreq": lambda: fft.rfftfreq(6),
    "fftshift": lambda: fft.fftshift(x),
    "ifftshift": lambda: fft.ifftshift(x, dim=1),
    "bad_norm": lambda: fft.fft(x, norm="bad"),
    "rfft_complex": lambda: fft.rfft(x.to(torch.complex64)),
    "grad_rfft": lambda: grad_of(lambda a: fft.rfft(a).abs()),
    "grad_irfft": lambda: grad_of(lambda a: fft.irfft(fft.fft(a)[:, :5]).pow(2)),
    "grad_fft2": lambda: grad_of(lambda a: fft.fft2(a).real * 2),
}
for k, f in cases.items():
    run(k, f)
Path(sys.argv[2]).write_bytes(pickle.dumps(res))
