"""The fused optimizer kernels (``sgd_update``, ``adam_update``) agree with the per-op formula.

On ``cpu`` the same optimizer runs with the backend's kernel and with it hidden; on
``cpu_prims`` (no composite kernels) the per-op path must match ``cpu``'s fused one.
"""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest
from ember.backends import registry

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.3, 0.9), "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "maximize": True, "eps": 1e-3}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.5, "amsgrad": True, "maximize": True}),
]


def run(device: str, name: str, kw: dict[str, Any], dtype: str, fused: bool) -> list[np.ndarray]:
    """Four steps of optimizer ``name`` on two parameters; their final values."""
    rng = np.random.default_rng(7)
    ps = [ember.tensor(rng.standard_normal(s).astype(dtype), device=device) for s in ((3, 4), (5,))]
    for p in ps:
        p.requires_grad_(True)
    opt = getattr(ember.optim, name)(ps, **kw)
    lb = registry.get(device)
    saved = dict(lb.k)
    if not fused:
        lb.k["sgd_update"] = lb.k["adam_update"] = None
    try:
        for _ in range(4):
            for p in ps:
                p.grad = ember.tensor(rng.standard_normal(p.shape).astype(dtype), device=device)
            opt.step()
    finally:
        lb.k.update(saved)
    return [p.detach().cpu().numpy() for p in ps]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kw"), CONFIGS)
def test_fused_matches_per_op_on_cpu(name: str, kw: dict[str, Any], dtype: str) -> None:
    for a, b in zip(run("cpu", name, kw, dtype, True), run("cpu", name, kw, dtype, False)):
        np.testing.assert_allclose(a, b, rtol=2e-6 if dtype == "float32" else 1e-13, atol=1e-7)


@pytest.mark.parametrize(("name", "kw"), CONFIGS)
def test_decomposition_matches_fused(cpu_prims: str, name: str, kw: dict[str, Any]) -> None:
    assert registry.get(cpu_prims).k["sgd_update"] is None
    for a, b in zip(run(cpu_prims, name, kw, "float32", True), run("cpu", name, kw, "float32", True)):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)


@pytest.mark.cpu_only
def test_fused_kernel_is_used_and_bumps_versions() -> None:
    calls = []
    lb = registry.get("cpu")
    kern = lb.k["sgd_update"]
    assert kern is not None
    p = ember.nn.Parameter(ember.ones(3))  # module parameters take the fused path too
    p.grad = ember.ones(3)
    opt = ember.optim.SGD([p], lr=0.5, momentum=0.9)
    lb.k["sgd_update"] = lambda *a: calls.append(1) or kern(*a)
    try:
        before = p._vc[0]
        opt.step()
    finally:
        lb.k["sgd_update"] = kern
    assert calls and p._vc[0] > before
    np.testing.assert_allclose(p.detach().numpy(), [0.5, 0.5, 0.5])


def test_grad_requiring_grad_takes_the_per_op_path() -> None:
    lb = registry.get("cpu")
    kern = lb.k["adam_update"]
    p = ember.ones(3, requires_grad=True)
    p.grad = ember.ones(3, requires_grad=True)
    lb.k["adam_update"] = lambda *a: pytest.fail("fused kernel used for a grad that requires grad")
    try:
        ember.optim.Adam([p], lr=0.1).step()
    finally:
        lb.k["adam_update"] = kern
