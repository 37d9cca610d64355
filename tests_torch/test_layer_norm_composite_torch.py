"""layer_norm's two composites against PyTorch on both of ember's paths: the CPU kernels
(``layer_norm``, ``layer_norm_backward``: one call each way) and, with those kernels removed
from the CPU table, the decompositions a backend without them runs."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest
from ember.backends import registry

torch = pytest.importorskip("torch")

OPS = ("layer_norm", "layer_norm_backward")


@pytest.fixture(params=["kernel", "decomposition"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "decomposition":
        table = registry.get("cpu").k
        for op in OPS:
            monkeypatch.setitem(table, op, None)
    return str(request.param)


def _run(lib: Any, x: np.ndarray, ns: tuple, w: Any, b: Any, g: np.ndarray, dtype: str) -> list:
    dt = getattr(lib, dtype)
    ts = [None if a is None else lib.tensor(a, dtype=dt, requires_grad=True) for a in (x, w, b)]
    y = lib.nn.functional.layer_norm(ts[0], ns, ts[1], ts[2], eps=1e-3)
    y.backward(lib.tensor(g, dtype=dt))
    return [y.detach().numpy()] + [None if t is None else t.grad.numpy() for t in ts]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("shape", "ns", "affine"),
    [
        ((20, 10, 32), (32,), "both"),
        ((4, 5, 6), (5, 6), "both"),
        ((3, 7), (7,), "none"),
        ((2, 9), (9,), "weight"),
    ],
)
def test_layer_norm_matches_pytorch(path: str, dtype: str, shape: tuple, ns: tuple, affine: str) -> None:
    rng = np.random.default_rng(len(shape) + len(ns))
    x, g = rng.normal(0.5, 2, shape), rng.normal(0, 1, shape)
    w = rng.normal(1, 0.5, ns) if affine != "none" else None
    b = rng.normal(0, 0.5, ns) if affine == "both" else None
    tol = 1e-12 if dtype == "float64" else 3e-5
    for got, want in zip(_run(ember, x, ns, w, b, g, dtype), _run(torch, x, ns, w, b, g, dtype)):
        assert (got is None) == (want is None)
        if got is not None:
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_each_path_runs_once_each_way(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One kernel call (or one decomposition) forward and one backward."""
    from ember.nn._functional import norm

    calls: list[str] = []

    def spy(name: str, fn: Any) -> Any:
        def run(*args: Any) -> Any:
            calls.append(name)
            return fn(*args)

        return run

    if path == "kernel":
        table = registry.get("cpu").k
        for op in OPS:
            monkeypatch.setitem(table, op, spy(op, table[op]))
    else:
        monkeypatch.setattr(norm, "_layer_norm_decomposed", spy(OPS[0], norm._layer_norm_decomposed))
        bwd = norm._layer_norm_backward_decomposed
        monkeypatch.setattr(norm, "_layer_norm_backward_decomposed", spy(OPS[1], bwd))
    x = ember.randn(3, 4, requires_grad=True)
    ember.nn.functional.layer_norm(x, (4,)).sum().backward()
    assert calls == list(OPS)
