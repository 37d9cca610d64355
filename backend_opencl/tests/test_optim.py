"""The fused optimizer kernels against the CPU backend's (the oracle) and the per-op path."""

from __future__ import annotations

from typing import Any

import ember
import ember.backends as eb
import numpy as np
import pytest
from _ocl_helpers import values

SGD = [
    (0.0, 0.0, 0.0, False, False, False),
    (0.9, 0.0, 0.01, False, False, True),
    (0.9, 0.1, 0.1, True, True, False),
]
ADAM = [(0.0, False, False, 1.0, False), (0.1, True, True, 3.0, False), (0.5, True, False, 2.0, True)]


def _pair(ocl: eb.LoadedBackend, v: np.ndarray, transposed: bool) -> tuple[np.ndarray, Any]:
    """``v`` on the host and on the device, optionally as a transposed (non-contiguous) view."""
    if not transposed:
        return v.copy(), ocl.backend.from_numpy(v.copy(), 0)
    dev = ocl.k["permute"](ocl.backend.from_numpy(np.ascontiguousarray(v.T), 0), (1, 0))
    return v.copy(), dev


def _check(ocl: eb.LoadedBackend, hosts: list[np.ndarray], devs: list[Any]) -> None:
    for h, d in zip(hosts, devs):
        np.testing.assert_array_equal(ocl.backend.to_numpy(d), h)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("cfg", SGD)
def test_sgd_update_matches_cpu(ocl, cpu, cfg: tuple, transposed: bool) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    pairs = [_pair(ocl, values(rng, (5, 7), "float32"), transposed) for _ in range(3)]
    hosts, devs = [p[0] for p in pairs], [p[1] for p in pairs]
    cpu.k["sgd_update"](*hosts, 0.1, *cfg)
    ocl.k["sgd_update"](*devs, 0.1, *cfg)
    _check(ocl, [hosts[0], hosts[2]], [devs[0], devs[2]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("cfg", ADAM)
def test_adam_update_matches_cpu(ocl, cpu, cfg: tuple, transposed: bool, dtype: str) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    vals = [values(rng, (5, 7), dtype) for _ in range(3)] + [
        np.abs(values(rng, (5, 7), dtype)) for _ in range(2)
    ]
    pairs = [_pair(ocl, v, transposed) for v in vals]
    hosts, devs = [p[0] for p in pairs], [p[1] for p in pairs]
    params = (0.01, 0.9, 0.999, 1e-3, cfg[0], cfg[1], cfg[2], cfg[3], cfg[4])
    cpu.k["adam_update"](*hosts, *params)
    ocl.k["adam_update"](*devs, *params)
    _check(ocl, hosts[:1] + hosts[2:], devs[:1] + devs[2:])


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_optimizer_fused_matches_per_op(ocl, name: str) -> None:  # type: ignore[no-untyped-def]
    kw: dict[str, Any] = {"lr": 0.05, "weight_decay": 0.01}
    kw.update({"momentum": 0.9, "nesterov": True} if name == "SGD" else {"amsgrad": True})
    results = []
    for fused in (True, False):
        rng = np.random.default_rng(3)
        p = ember.tensor(rng.standard_normal((4, 6)).astype("float32"), device="opencl", requires_grad=True)
        opt = getattr(ember.optim, name)([p], **kw)
        saved = dict(ocl.k)
        if not fused:
            ocl.k["sgd_update"] = ocl.k["adam_update"] = None
        try:
            for _ in range(3):
                p.grad = ember.tensor(rng.standard_normal((4, 6)).astype("float32"), device="opencl")
                opt.step()
        finally:
            ocl.k.update(saved)
        results.append(p.detach().cpu().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transposed", [False, True])
def test_add_scaled_rounds_once_as_the_cpu(ocl, cpu, dtype: str, transposed: bool) -> None:  # type: ignore[no-untyped-def]
    """``x + alpha * y`` (add/sub with alpha) as the CPU's fused multiply-add, bit for bit; in
    place (``add_``) and with an expanded operand too."""
    rng = np.random.default_rng(2)
    (hx, dx), (hy, dy) = (_pair(ocl, values(rng, (33, 35), dtype), transposed) for _ in range(2))
    want = cpu.k["add_scaled"](hx, hy, -0.37)
    assert np.count_nonzero(want != hx + hy.dtype.type(-0.37) * hy)  # rounding once shows here
    np.testing.assert_array_equal(ocl.backend.to_numpy(ocl.k["add_scaled"](dx, dy, -0.37)), want)
    row = ocl.k["expand"](ocl.backend.from_numpy(hy[:1].copy(), 0), hy.shape)
    got = ocl.k["add_scaled"](dx, row, 3.3, out=dx)
    want = cpu.k["add_scaled"](hx, np.broadcast_to(hy[:1], hy.shape), 3.3)
    np.testing.assert_array_equal(ocl.backend.to_numpy(got), want)
