"""``foreach=True``: one multi-tensor kernel call per parameter group, the per-tensor numbers.

The ``*_update_foreach`` kernels must give exactly what the per-tensor path gives (fused
kernel or per-op formula) on parameters of several shapes, some without a gradient, one
joining the group later; and PyTorch's constructor errors for ``fused``.
"""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest
from ember.backends import registry

pytestmark = pytest.mark.cpu_only  # the cpu backend's kernels, shown and hidden

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "betas": (0.3, 0.9), "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "maximize": True, "eps": 1e-3}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.5, "amsgrad": True}),
]
SHAPES = ((3, 4), (5,), (2, 3, 2))


def run(name: str, kw: dict[str, Any], dtype: str, foreach: bool, hide: tuple[str, ...] = ()) -> list:
    """Five steps on three parameters: the second has no gradient on step 1, the third joins
    the group's updates on step 3 (so their step counts and momentum starts differ)."""
    rng = np.random.default_rng(11)
    ps = [ember.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in SHAPES]
    opt = getattr(ember.optim, name)(ps, foreach=foreach, **kw)
    lb = registry.get("cpu")
    saved = dict(lb.k)
    for op in hide:
        lb.k[op] = None
    try:
        for step in range(5):
            for i, p in enumerate(ps):
                skip = (i == 1 and step == 0) or (i == 2 and step < 2)
                p.grad = None if skip else ember.tensor(rng.standard_normal(p.shape).astype(dtype))
            opt.step()
    finally:
        lb.k.update(saved)
    states = [{k: v for k, v in opt.state[p].items()} for p in ps if p in opt.state]
    return [p.detach().numpy() for p in ps] + [
        v.numpy() if isinstance(v, ember.Tensor) else v for s in states for v in s.values()
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kw"), CONFIGS)
def test_foreach_gives_the_per_tensor_numbers(name: str, kw: dict[str, Any], dtype: str) -> None:
    want = run(name, kw, dtype, False)
    for got in (run(name, kw, dtype, True), run(name, kw, dtype, True, ("sgd_update", "adam_update"))):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(("name", "kw"), CONFIGS)
def test_without_the_kernel_foreach_runs_per_tensor(name: str, kw: dict[str, Any]) -> None:
    hide = ("sgd_update_foreach", "adam_update_foreach")
    for a, b in zip(run(name, kw, "float64", True, hide), run(name, kw, "float64", False)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize(("name", "op"), [("SGD", "sgd_update_foreach"), ("Adam", "adam_update_foreach")])
def test_one_call_per_group_bumps_versions(name: str, op: str) -> None:
    lb = registry.get("cpu")
    kern, calls = lb.k[op], []
    ps = [ember.nn.Parameter(ember.ones(s)) for s in SHAPES]
    for p in ps:
        p.grad = ember.ones(p.shape)
    opt = getattr(ember.optim, name)(ps, lr=0.5, foreach=True)
    lb.k[op] = lambda *a: calls.append(len(a[0])) or kern(*a)
    try:
        before = [p._vc[0] for p in ps]
        opt.step()
    finally:
        lb.k[op] = kern
    assert calls == [3]
    assert all(p._vc[0] > b for p, b in zip(ps, before))


def test_foreach_leaves_a_grad_requiring_grad_to_the_per_op_path() -> None:
    p, q = ember.ones(3, requires_grad=True), ember.ones(2, requires_grad=True)
    p.grad, q.grad = ember.ones(3, requires_grad=True), ember.ones(2)
    ember.optim.SGD([p, q], lr=0.5, foreach=True).step()
    np.testing.assert_array_equal(p.detach().numpy(), [0.5] * 3)
    np.testing.assert_array_equal(q.detach().numpy(), [0.5] * 2)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_fused_errors_are_pytorchs(name: str) -> None:
    cls, ps = getattr(ember.optim, name), [ember.zeros(3, requires_grad=True)]
    with pytest.raises(RuntimeError, match=r"^`fused` and `foreach` cannot be `True` together.$"):
        cls(ps, lr=0.1, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match=r"^`fused` does not support `differentiable`$"):
        cls(ps, lr=0.1, fused=True, differentiable=True)
    cls(ps, lr=0.1, fused=True).step()  # accepted alone
