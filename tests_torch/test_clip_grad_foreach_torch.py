"""clip_grad_norm_ / get_total_norm against PyTorch, with ``foreach`` on (the default: one
``norm_foreach`` call per dtype group, one ``mul_foreach`` scaling) and off: every order,
gradients of two dtypes, half gradients, the non-finite error and the empty-tensor error."""

from __future__ import annotations

import math
from typing import Any

import ember
import numpy as np
import pytest
from ember.backends import graph, registry

torch = pytest.importorskip("torch")

ORDS = [2.0, 1.0, 3.0, math.inf, -math.inf, 0.0]
SHAPES = [(3, 4), (5,), (2, 2, 2), ()]


@pytest.fixture(autouse=True)
def _fused_mul(monkeypatch: pytest.MonkeyPatch) -> None:
    """``mul_foreach`` declared a writing kernel (the contract's table), so clipping uses it."""
    monkeypatch.setattr(graph, "WRITES_FIRST", graph.WRITES_FIRST | {"mul_foreach"})


@pytest.fixture(params=["kernels", "decompositions"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The CPU's norm_foreach / mul_foreach kernels, or (removed from its table) the per-tensor
    decompositions a backend without them runs."""
    if request.param == "decompositions":
        for op in ("norm_foreach", "mul_foreach"):
            monkeypatch.setitem(registry.get("cpu").k, op, None)
    return str(request.param)


def _params(lib: Any, grads: list[np.ndarray], dtypes: list[str]) -> list[Any]:
    ps = []
    for g, d in zip(grads, dtypes):
        p = lib.zeros(g.shape, dtype=getattr(lib, d), requires_grad=True)
        p.grad = lib.tensor(g, dtype=getattr(lib, d))
        ps.append(p)
    return ps


def _grads(seed: int, scale: float = 3.0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = [rng.standard_normal(s) * scale for s in SHAPES]
    out[0][0, 0] = 0.0  # a zero for the 0-"norm" (the count of non-zeros)
    return out


def _tol(dtypes: list[str]) -> float:
    return 2e-3 if "float16" in dtypes else (1e-5 if "float32" in dtypes else 1e-12)


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("foreach", [None, True, False])
@pytest.mark.parametrize(
    "dtypes",
    [["float64"] * 4, ["float32"] * 4, ["float32", "float64", "float32", "float64"], ["float16"] * 4],
)
@pytest.mark.usefixtures("path")
def test_clip_grad_norm_matches_pytorch(ord: float, foreach: Any, dtypes: list[str]) -> None:
    grads = _grads(len(dtypes) + int(ord % 7 if math.isfinite(ord) else 9))
    got, want = (_params(lib, grads, dtypes) for lib in (ember, torch))
    total = ember.nn.utils.clip_grad_norm_(got, 0.5, ord, foreach=foreach)
    ref = torch.nn.utils.clip_grad_norm_(want, 0.5, ord, foreach=foreach)
    assert str(total.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    tol = _tol(dtypes)
    np.testing.assert_allclose(total.float().item(), ref.float().item(), rtol=tol)
    for p, q in zip(got, want):
        assert str(p.grad.dtype).split(".")[-1] == str(q.grad.dtype).split(".")[-1]
        np.testing.assert_allclose(
            p.grad.double().numpy(), q.grad.double().numpy(), rtol=tol, atol=tol * 1e-3
        )


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.usefixtures("path")
def test_get_total_norm_matches_pytorch(ord: float) -> None:
    grads = _grads(3)
    got = ember.nn.utils.get_total_norm([ember.tensor(g) for g in grads], ord)
    want = torch.nn.utils.get_total_norm([torch.tensor(g) for g in grads], ord)
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)


def _message(fn: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("foreach", [None, False])
def test_non_finite_error_matches_pytorch(foreach: Any) -> None:
    grads = _grads(4)
    grads[1][0] = np.inf

    def run(lib: Any) -> Any:
        ps = _params(lib, grads, ["float32"] * 4)
        return lambda: lib.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True, foreach=foreach)

    assert _message(run(ember)) == _message(run(torch))


@pytest.mark.usefixtures("path")
def test_infinity_norm_of_an_empty_gradient_matches_pytorch() -> None:
    def run(lib: Any) -> Any:
        return lambda: lib.nn.utils.get_total_norm([lib.ones(2), lib.zeros(0)], math.inf)

    assert _message(run(ember)) == _message(run(torch))


def test_parameters_without_gradients_and_none_at_all() -> None:
    for lib in (ember, torch):
        p = lib.zeros(3, requires_grad=True)
        total = lib.nn.utils.clip_grad_norm_([p], 1.0)
        assert total.item() == 0.0 and p.grad is None
